#!/usr/bin/env python3
"""Kills `qtc compile` with SIGKILL at spread-out moments and checks that
what is left is never a published partial artifact: either no manifest.json
(nothing published) or one that `qtc verify` accepts (the previous artifact or
the new one, complete).

  kill_compile.py QTC CHECKPOINT WORKDIR [--kills N]

Round 1 kills compiles into an empty directory. Round 2 first completes one
compile, then kills compiles that would replace it with a different
quantization: the previous artifact must survive every kill.
"""
import argparse
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


def kill_after(cmd, delay):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(delay)
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
    p.wait()
    return p.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qtc")
    ap.add_argument("checkpoint")
    ap.add_argument("workdir")
    ap.add_argument("--kills", type=int, default=12)
    a = ap.parse_args()
    out = os.path.join(a.workdir, "artifact")
    base = [a.qtc, "compile", a.checkpoint, "--target", "host", "-o", out,
            "--quiet"]
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    duration = timed_run(base)  # a complete compile, for the time scale
    failures = []
    killed = 0

    # Round 1: into an empty directory.
    for i in range(a.kills):
        shutil.rmtree(out, ignore_errors=True)
        rc = kill_after(base, duration * (i + 0.5) / a.kills)
        killed += rc == -signal.SIGKILL
        if os.path.exists(os.path.join(out, "manifest.json")):
            code, text = verify(a.qtc, out)
            if code != 0:
                failures.append(f"round 1 kill {i}: published but not "
                                f"verified:\n{text}")

    # Round 2: replacing a complete artifact with another quantization.
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(base, check=True, stdout=subprocess.DEVNULL)
    other = base + ["--quant", "w8a16"]
    for i in range(a.kills):
        rc = kill_after(other, duration * (i + 0.5) / a.kills)
        killed += rc == -signal.SIGKILL
        if not os.path.exists(os.path.join(out, "manifest.json")):
            failures.append(f"round 2 kill {i}: the previous artifact's "
                            f"manifest is gone")
            continue
        code, text = verify(a.qtc, out)
        if code != 0:
            failures.append(f"round 2 kill {i}: not verified:\n{text}")

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
