#!/usr/bin/env python3
"""Overwrites one int32 element of a tensor in a safetensors file, in place.

usage: tamper_safetensors.py FILE TENSOR INDEX VALUE

TENSOR must be I32; element INDEX (flat, C order) becomes VALUE. The header
is untouched, so the file stays well-formed and only the value is wrong.
"""
import json
import struct
import sys

path, tensor, index, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4])
with open(path, "r+b") as f:
    (n,) = struct.unpack("<Q", f.read(8))
    info = json.loads(f.read(n))[tensor]
    if info["dtype"] != "I32":
        sys.exit(tensor + " is " + info["dtype"] + ", not I32")
    begin, end = info["data_offsets"]
    if not 0 <= index < (end - begin) // 4:
        sys.exit("index %d is outside %s" % (index, tensor))
    f.seek(8 + n + begin + 4 * index)
    f.write(struct.pack("<i", value))
