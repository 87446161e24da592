#!/usr/bin/env python3
"""Adds a bias [N] to linears of a make-tiny-llama checkpoint, in place.

usage: add_linear_biases.py CKPT_DIR SUFFIX...   (e.g. self_attn.o_proj)

Every layer's model.layers.<i>.<SUFFIX>.bias is appended to model.safetensors
in the weight's dtype, with values (j % 7 - 3) / 8 (exact in f16 and bf16),
so a compiled artifact has biases on the placements the suffixes get
(o_proj and down_proj: row-parallel; the rest: column-parallel).
"""
import json
import struct
import sys

ckpt, suffixes = sys.argv[1], sys.argv[2:]
path = ckpt + "/model.safetensors"
raw = open(path, "rb").read()
(header_len,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + header_len])
data = bytearray(raw[8 + header_len:])

def encode(value, dtype):
    f32 = struct.pack("<f", value)
    if dtype == "F32":
        return f32
    if dtype == "BF16":
        return f32[2:]  # exact: the values need no rounding
    if dtype == "F16":
        return struct.pack("<e", value)
    raise SystemExit("unsupported weight dtype " + dtype)

added = 0
for name, info in list(header.items()):
    if name == "__metadata__" or not name.endswith(".weight"):
        continue
    if not any(name.endswith("." + s + ".weight") for s in suffixes):
        continue
    n = info["shape"][0]
    blob = b"".join(encode((j % 7 - 3) / 8.0, info["dtype"]) for j in range(n))
    header[name[:-len("weight")] + "bias"] = {
        "dtype": info["dtype"], "shape": [n],
        "data_offsets": [len(data), len(data) + len(blob)]}
    data += blob
    added += 1
if not added:
    raise SystemExit("no weight matches " + " ".join(suffixes))
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
open(path, "wb").write(struct.pack("<Q", len(text)) + text + bytes(data))
print("added", added, "biases")
