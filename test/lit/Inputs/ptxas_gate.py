#!/usr/bin/env python3
"""Static gates for generated PTX (issue 5): for every <kernel>.ptx in a
directory, ptxas must accept it for the given arch, `ptxas -v` must report 0
bytes of spill stores and loads, code must be loaded with 128-bit vector loads
(ld.global[.nc].v4), and prefill kernels must contain mma.sync, ldmatrix
and cp.async (counted per file, printed after mma=). Prints one
GATE line per kernel entry point (a file may hold several, e.g. the T buckets
of a dynamic-T decode GEMV) with the measured numbers; exits 1 if any gate
fails.

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
        # ptxas -v reports each entry function in its own block.
        blocks = re.split(r"Compiling entry function '([^']+)'", report)[1:]
        entries = list(zip(blocks[0::2], blocks[1::2]))
        if not entries:
            print("FAIL %s: no entry function in ptxas -v output:\n%s" % (kernel, report))
            failed = True
            continue
        v4 = len(re.findall(r"ld\.global(?:\.nc)?\.v4\.", text))
        mma = len(re.findall(r"mma\.sync", text))
        ldmatrix = len(re.findall(r"ldmatrix\.sync", text))
        cp_async = len(re.findall(r"cp\.async\.c[ag]\.shared\.global", text))
        for entry, block in entries:
            regs = re.search(r"Used (\d+) registers", block)
            spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", block)
            if not regs or not spill:
                print("FAIL %s: no register/spill line in ptxas -v output:\n%s" % (entry, block))
                failed = True
                continue
            stores, loads = int(spill.group(1)), int(spill.group(2))
            print("GATE %s arch=%s regs=%s spill-stores=%d spill-loads=%d v4-loads=%d mma=%d"
                  " ldmatrix=%d cp-async=%d"
                  % (entry, arch, regs.group(1), stores, loads, v4, mma, ldmatrix,
                     cp_async))
            if stores or loads:
                print("FAIL %s: spills" % entry)
                failed = True
        if v4 == 0:
            print("FAIL %s: no 128-bit ld.global.v4 load" % kernel)
            failed = True
        if "prefill_mma" in kernel and mma == 0:
            print("FAIL %s: prefill kernel without mma.sync" % kernel)
            failed = True
        if "prefill_mma" in kernel and (ldmatrix == 0 or cp_async == 0):
            print("FAIL %s: prefill kernel without ldmatrix or cp.async" % kernel)
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
