#!/usr/bin/env python3
"""Runs `qtc inspect --json` on every file of the shared corpus manifest and
checks the tool's contract end to end: the exit status (0 accept, 1 reject;
either for `lenient_ok`), the JSON shape ({ok, error, format, tensors}), an
error that names the file, and for accepted files the inventory (names, types
and file-order shapes, absolute offsets) exactly as the manifest lists it.

usage: check_corpus_verdicts.py QTC CORPUS_DIR
Prints one line per file and a final "N passed, M failed" line.
"""
import json
import os
import subprocess
import sys

qtc, corpus = sys.argv[1], sys.argv[2]
manifest = json.load(open(os.path.join(corpus, "manifest.json")))
passed = failed = 0


def check(entry):
    path = os.path.join(corpus, entry["path"])
    run = subprocess.run([qtc, "inspect", "--json", path], capture_output=True,
                         timeout=60)
    if run.returncode not in (0, 1):
        return f"exit status {run.returncode}: {run.stderr[-300:]!r}"
    report = json.loads(run.stdout)
    for key in ("ok", "error", "format", "tensors"):
        if key not in report:
            return f"JSON lacks {key!r}"
    if report["ok"] != (run.returncode == 0):
        return "ok disagrees with the exit status"
    expect = entry["expect"]
    if expect == "reject" and report["ok"] and not entry.get("lenient_ok"):
        return "accepted a file that must be rejected"
    if expect == "accept" and not report["ok"]:
        return f"rejected a valid file: {report['error']}"
    if not report["ok"]:
        if os.path.basename(path) not in report["error"]:
            return f"error does not name the file: {report['error']}"
        return None
    if "tensors" in entry:
        got = [(t["name"], t["type"], t["shape"]) for t in report["tensors"]]
        want = [(t["name"], t.get("type", t.get("dtype")), t["shape"])
                for t in entry["tensors"]]
        if sorted(got) != sorted(want):
            return f"inventory differs: got {got[:3]}..., want {want[:3]}..."
        offsets = {t["name"]: t["offset"] for t in report["tensors"]}
        for t in entry["tensors"]:
            if "abs_offset" in t and offsets[t["name"]] != t["abs_offset"]:
                return f"tensor {t['name']!r}: offset {offsets[t['name']]} != {t['abs_offset']}"
    return None


for entry in manifest["files"]:
    problem = check(entry)
    if problem:
        failed += 1
        print(f"FAIL {entry['path']}: {problem}")
    else:
        passed += 1
        print(f"ok   {entry['path']} ({entry['expect']})")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
