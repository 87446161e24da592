#!/usr/bin/env python3
"""Checks an artifact's reconstructed linears against expected values.

usage: compare_dumps.py QTC ARTIFACT_DIR EXPECT_DIR

For every EXPECT_DIR/NAME.f32 (float32 [N, K], as quantize_hf_checkpoint.py
writes them), runs `QTC inspect ARTIFACT_DIR --tensor NAME --dump-f32` and
requires the same bytes; prints how many matched, exits 1 on the first
difference, naming the tensor and the first differing element.
"""
import os
import struct
import subprocess
import sys
import tempfile

qtc, artifact, expect = sys.argv[1:4]
names = sorted(f[:-4] for f in os.listdir(expect) if f.endswith(".f32"))
if not names:
    sys.exit("no .f32 files in " + expect)
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "dump.f32")
    for name in names:
        subprocess.run([qtc, "inspect", artifact, "--tensor", name,
                        "--dump-f32", out], check=True,
                       stdout=subprocess.DEVNULL)
        got = open(out, "rb").read()
        want = open(os.path.join(expect, name + ".f32"), "rb").read()
        if got != want:
            if len(got) != len(want):
                sys.exit("%s: %d bytes, expected %d" % (name, len(got),
                                                       len(want)))
            i = next(i for i in range(0, len(got), 4)
                     if got[i:i + 4] != want[i:i + 4])
            (g,), (w,) = struct.unpack("<f", got[i:i + 4]), \
                struct.unpack("<f", want[i:i + 4])
            sys.exit("%s: element %d is %r, expected %r" % (name, i // 4, g, w))
print("%d tensors match" % len(names))
