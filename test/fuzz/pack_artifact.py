#!/usr/bin/env python3
"""Packs an artifact directory into one fuzz-artifact input: each file as
[u8 name length][name][u32 LE size][bytes] (test/fuzz/FuzzArtifact.cpp).

usage: pack_artifact.py ARTIFACT_DIR OUT.bin [--skip SUFFIX ...]
Files whose names end with a --skip suffix are left out (kernel objects:
the fuzzer never loads code, and they would crowd the size limit)."""
import os
import struct
import sys

root, out = sys.argv[1], sys.argv[2]
skip = [a for i, a in enumerate(sys.argv[3:]) if i % 2 == 1 and sys.argv[3 + i - 1] == "--skip"]
blob = bytearray()
for name in sorted(os.listdir(root)):
    if any(name.endswith(s) for s in skip):
        continue
    data = open(os.path.join(root, name), "rb").read()
    encoded = name.encode()
    blob += bytes([len(encoded)]) + encoded + struct.pack("<I", len(data)) + data
open(out, "wb").write(blob)
print(f"{out}: {len(blob)} bytes")
