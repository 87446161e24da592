#!/usr/bin/env python3
"""Packs an artifact directory into one fuzz-artifact input: each file as
[u8 name length][name][u32 LE size][bytes] (test/fuzz/FuzzArtifact.cpp).

usage: pack_artifact.py ARTIFACT_DIR OUT.bin [--skip SUFFIX ...]
Files whose names end with a --skip suffix are left out (kernel objects:
the fuzzer never loads code, and they would crowd the size limit)."""
import argparse
import os
import struct

parser = argparse.ArgumentParser()
parser.add_argument("root")
parser.add_argument("out")
parser.add_argument("--skip", action="append", default=[])
args = parser.parse_args()
blob = bytearray()
for name in sorted(os.listdir(args.root)):
    if any(name.endswith(s) for s in args.skip):
        continue
    data = open(os.path.join(args.root, name), "rb").read()
    encoded = name.encode()
    blob += bytes([len(encoded)]) + encoded + struct.pack("<I", len(data)) + data
open(args.out, "wb").write(blob)
print(f"{args.out}: {len(blob)} bytes")
