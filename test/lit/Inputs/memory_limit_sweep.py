#!/usr/bin/env python3
"""Runs a command under a rising address-space limit (RLIMIT_AS) and checks
that every run either succeeds or fails the way a user can read: exit
status 1 and an "error:" line on stderr. A signal (a crash, an abort from
an exception nobody caught) or any other status fails the sweep.

usage: memory_limit_sweep.py STEP_MIB COMMAND...

Limits start at what `COMMAND[0] --help` needs to start (measured first, so
the test does not depend on how much the dynamic loader maps) and grow by
STEP_MIB until a run succeeds. Each run has a private, empty $TMPDIR that
must be empty again afterwards: a run that dies of the limit still removes
its scratch directories (ExitCleanup.h). Prints one line per limit and the
messages seen, for FileCheck.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile


def run(cmd, limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    scratch = tempfile.mkdtemp(prefix="memory-limit-sweep-")
    try:
        p = subprocess.run(cmd, preexec_fn=apply, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True,
                           errors="replace",
                           env=dict(os.environ, TMPDIR=scratch))
        left = os.listdir(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if left:
        print("BAD: left in $TMPDIR at a limit of %d MiB: %s" %
              (limit >> 20, left))
        sys.exit(1)
    return p.returncode, p.stderr


def smallest_start(binary):
    """The smallest limit (to 1 MiB) under which `binary --help` runs."""
    low, high = 0, 16 << 20
    while run([binary, "--help"], high)[0] != 0:
        low, high = high, high * 2
        if high > (64 << 30):
            sys.exit("could not start %s under any limit" % binary)
    while high - low > (1 << 20):
        mid = (low + high) // 2
        if run([binary, "--help"], mid)[0] == 0:
            high = mid
        else:
            low = mid
    return high


def main():
    step, cmd = int(sys.argv[1]) << 20, sys.argv[2:]
    limit = smallest_start(cmd[0])
    failures = 0
    messages = set()
    while True:
        status, err = run(cmd, limit)
        if status == 0:
            print("ok at a limit of %d MiB" % (limit >> 20))
            break
        errors = [l for l in err.splitlines() if "error:" in l]
        if status != 1 or not errors:
            print("BAD: status %d at a limit of %d MiB:\n%s" %
                  (status, limit >> 20, err[-2000:]))
            sys.exit(1)
        failures += 1
        for line in errors:
            # The part that names the fault, without sizes and paths.
            if "cannot allocate" in line:
                messages.add("cannot allocate ... bytes of memory")
            elif "out of memory" in line:
                messages.add("out of memory")
            else:
                messages.add(line.split("error:", 1)[1].strip()[:60])
        limit += step
        if failures > 400:
            sys.exit("never succeeded")
    print("failed cleanly under %d smaller limits" % failures)
    for m in sorted(messages):
        print("message:", m)


if __name__ == "__main__":
    main()
