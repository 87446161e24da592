#!/usr/bin/env python3
"""Kills `qtc compile` at spread-out moments and checks that what is left is
never a published partial artifact: either no manifest.json (nothing
published) or one that `qtc verify` accepts (the previous artifact or the new
one, complete).

  kill_compile.py QTC CHECKPOINT WORKDIR [--kills N] [--signal KILL|TERM]

Round 1 kills compiles into an empty directory. Round 2 first completes one
compile, then kills compiles that would replace it with a different
quantization.

SIGKILL cannot be caught: the transaction alone protects the output, so the
previous artifact must survive every kill (a new one, once published, is
complete). SIGTERM is caught (ExitCleanup.h) and asks more: a manifest left
behind is one whose report holds the parity ladder's verdict (an artifact
published but not yet verified is withdrawn, manifest.rejected.json), and
no scratch directory is left in $TMPDIR.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time


def verify(qtc, out):
    r = subprocess.run([qtc, "verify", out], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def timed_run(cmd):
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def kill_after(cmd, delay, sig, env):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    time.sleep(delay)
    if p.poll() is None:
        p.send_signal(sig)
    p.wait()
    return p.returncode


def has_verdict(out):
    """Whether the published report holds the parity ladder's result."""
    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    for entry in manifest["files"]:
        if entry["path"].startswith("report."):
            with open(os.path.join(out, entry["path"])) as f:
                return "parity" in json.load(f)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qtc")
    ap.add_argument("checkpoint")
    ap.add_argument("workdir")
    ap.add_argument("--kills", type=int, default=12)
    ap.add_argument("--signal", choices=["KILL", "TERM"], default="KILL")
    a = ap.parse_args()
    sig = getattr(signal, "SIG" + a.signal)
    caught = sig != signal.SIGKILL
    out = os.path.join(a.workdir, "artifact")
    base = [a.qtc, "compile", a.checkpoint, "--target", "host", "-o", out,
            "--quiet"]
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    scratch = os.path.join(a.workdir, "tmp")
    os.makedirs(scratch)
    env = dict(os.environ, TMPDIR=scratch)

    def check_left(where, previous_kept):
        """What a kill left in the output and in $TMPDIR."""
        found = []
        manifest = os.path.join(out, "manifest.json")
        if os.path.exists(manifest):
            code, text = verify(a.qtc, out)
            if code != 0:
                found.append(f"{where}: published but not verified:\n{text}")
            elif caught and not has_verdict(out):
                found.append(f"{where}: an artifact without the ladder's "
                             f"verdict was left published")
        elif previous_kept and not caught:
            found.append(f"{where}: the previous artifact's manifest is gone")
        elif previous_kept and not os.path.exists(
                os.path.join(out, "manifest.rejected.json")):
            found.append(f"{where}: no manifest, and none withdrawn")
        if caught and os.listdir(scratch):
            found.append(f"{where}: left in $TMPDIR: {os.listdir(scratch)}")
            for leftover in os.listdir(scratch):
                shutil.rmtree(os.path.join(scratch, leftover))
        return found
    duration = timed_run(base)  # a complete compile, for the time scale
    failures = []
    killed = 0

    # Round 1: into an empty directory.
    for i in range(a.kills):
        shutil.rmtree(out, ignore_errors=True)
        rc = kill_after(base, duration * (i + 0.5) / a.kills, sig, env)
        killed += rc == -sig
        failures += check_left(f"round 1 kill {i}", previous_kept=False)

    # Round 2: replacing a complete artifact with another quantization.
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(base, check=True, stdout=subprocess.DEVNULL, env=env)
    other = base + ["--quant", "w8a16"]
    for i in range(a.kills):
        if not os.path.exists(os.path.join(out, "manifest.json")):
            # A caught signal withdrew the last one: start from a complete
            # artifact again.
            subprocess.run(base, check=True, stdout=subprocess.DEVNULL,
                           env=env)
        rc = kill_after(other, duration * (i + 0.5) / a.kills, sig, env)
        killed += rc == -sig
        failures += check_left(f"round 2 kill {i}", previous_kept=True)

    print(f"{2 * a.kills} compiles, {killed} killed before they finished, "
          f"{len(failures)} failures")
    for f in failures:
        print(f)
    if killed == 0:
        print("no compile was killed: the time scale is wrong")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
