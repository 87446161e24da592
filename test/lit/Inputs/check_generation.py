"""Checks `qtc run --prompt --json` output against the corpus reference.

usage: check_generation.py MANIFEST GGUF_PATH RUN_JSON LOGITS [MAX_REL_L2]

The corpus manifest's run_reference for GGUF_PATH (a path relative to the
manifest) gives llama.cpp's prompt tokens, greedy tokens and top-5 logits,
and for some files the whole last-token logits. Asserts: the prompt tokens
and greedy tokens equal llama.cpp's, the top-1 token of the logits after the
prompt is llama.cpp's, and, where llama.cpp's logits exist, their relative
L2 distance is at most MAX_REL_L2 (default 0.03). Prints one line per check.
"""
import json
import math
import os
import struct
import sys


def floats(path):
    data = open(path, "rb").read()
    return struct.unpack("<%df" % (len(data) // 4), data)


def main():
    manifest_path, gguf, run_json, logits_path = sys.argv[1:5]
    limit = float(sys.argv[5]) if len(sys.argv) > 5 else 0.03
    manifest = json.load(open(manifest_path))
    entry = next(f for f in manifest["files"] if f["path"] == gguf)
    ref = entry["run_reference"]
    run = json.load(open(run_json))
    ok = True

    def check(name, good, detail):
        nonlocal ok
        ok = ok and good
        print("%s: %s (%s)" % (name, "ok" if good else "FAIL", detail))

    check("prompt tokens", run["prompt_tokens"] == ref["prompt_tokens"],
          "%s vs %s" % (run["prompt_tokens"], ref["prompt_tokens"]))
    greedy = ref["greedy_4"]
    check("greedy tokens", run["tokens"][:len(greedy)] == greedy,
          "%s vs %s" % (run["tokens"], greedy))
    logits = floats(logits_path)
    vocab = next(m["len"] for m in entry["metadata"]
                 if m["key"] == "tokenizer.ggml.tokens")
    check("vocab", len(logits) == vocab, "%d logits" % len(logits))
    top1 = max(range(len(logits)), key=lambda i: logits[i])
    check("top-1", top1 == ref["top5"][0][0],
          "%d vs %d" % (top1, ref["top5"][0][0]))
    ref_path = ref.get("last_token_logits_path")
    full = os.path.join(os.path.dirname(manifest_path), ref_path or "")
    if not ref_path or not os.path.exists(full):
        print("rel L2 vs llama.cpp: no reference logits in the corpus")
    else:
        want = floats(full)
        num = math.sqrt(sum((a - b) ** 2 for a, b in zip(logits, want)))
        den = math.sqrt(sum(b * b for b in want))
        rel = num / den
        check("rel L2 vs llama.cpp", rel <= limit,
              "%.4f, limit %.4f" % (rel, limit))
    sys.exit(0 if ok else 1)


main()
