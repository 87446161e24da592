#!/usr/bin/env python3
"""Static gates for generated PTX (issue 5): for every <kernel>.ptx in a
directory, ptxas must accept it for the given arch, `ptxas -v` must report 0
bytes of spill stores and loads, code must be loaded with 128-bit vector loads
(ld.global[.nc].v4), and prefill kernels must contain mma.sync. Prints one
GATE line per kernel with the measured numbers; exits 1 if any gate fails.

usage: ptxas_gate.py PTXAS ARCH DIR
"""
import os
import re
import subprocess
import sys


def main():
    ptxas, arch, directory = sys.argv[1:4]
    files = sorted(f for f in os.listdir(directory) if f.endswith(".ptx"))
    if not files:
        sys.exit("ptxas_gate: no .ptx files in " + directory)
    failed = False
    for name in files:
        path = os.path.join(directory, name)
        kernel = name[:-4]
        text = open(path, encoding="utf-8").read()
        run = subprocess.run([ptxas, "-arch=" + arch, "-v", path, "-o", os.devnull],
                             capture_output=True, text=True)
        report = run.stdout + run.stderr
        if run.returncode != 0:
            print("FAIL %s: ptxas rejected it:\n%s" % (kernel, report))
            failed = True
            continue
        regs = re.search(r"Used (\d+) registers", report)
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)
        if not regs or not spill:
            print("FAIL %s: no register/spill line in ptxas -v output:\n%s" % (kernel, report))
            failed = True
            continue
        v4 = len(re.findall(r"ld\.global(?:\.nc)?\.v4\.", text))
        mma = len(re.findall(r"mma\.sync", text))
        stores, loads = int(spill.group(1)), int(spill.group(2))
        print("GATE %s arch=%s regs=%s spill-stores=%d spill-loads=%d v4-loads=%d mma=%d"
              % (kernel, arch, regs.group(1), stores, loads, v4, mma))
        if stores or loads:
            print("FAIL %s: spills" % kernel)
            failed = True
        if v4 == 0:
            print("FAIL %s: no 128-bit ld.global.v4 load" % kernel)
            failed = True
        if "prefill_mma" in kernel and mma == 0:
            print("FAIL %s: prefill kernel without mma.sync" % kernel)
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
