#!/usr/bin/env python3
"""Writes a deterministic safetensors file (no numpy needed).

usage: make_safetensors.py OUT NAME:DTYPE:D0xD1... [NAME:DTYPE:SHAPE ...]

DTYPE is F16, BF16 or F32. Tensor k's element i is
((i * 2654435761 + 977 * k) % 2001 - 1000) / 10000, a spread of small values
like a trained weight's; the same arguments always give the same bytes.
"""
import json
import struct
import sys

out, specs = sys.argv[1], sys.argv[2:]
header, blobs, offset = {}, [], 0
for k, spec in enumerate(specs):
    name, dtype, dims = spec.split(":")
    shape = [int(d) for d in dims.split("x")]
    count = 1
    for d in shape:
        count *= d
    values = [((i * 2654435761 + 977 * k) % 2001 - 1000) / 10000
              for i in range(count)]
    if dtype == "F16":
        blob = struct.pack("<%de" % count, *values)
    elif dtype == "F32":
        blob = struct.pack("<%df" % count, *values)
    elif dtype == "BF16":
        f32 = struct.pack("<%df" % count, *values)
        blob = b"".join(f32[i + 2:i + 4] for i in range(0, len(f32), 4))
    else:
        raise SystemExit("unsupported dtype " + dtype)
    header[name] = {"dtype": dtype, "shape": shape,
                    "data_offsets": [offset, offset + len(blob)]}
    blobs.append(blob)
    offset += len(blob)
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
