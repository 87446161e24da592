#!/usr/bin/env python3
"""Writes a small qtensor artifact with the Python standard library only: an
independent second writer of the safetensors container and manifest schema
(docs/manifest.md), used to check `qtc inspect` against files qtensor did not
write itself.

usage: make_artifact.py DIR [--corrupt]

The artifact holds `w` (3x5, ui4, asymmetric integer zero-points, groups of 4
along axis 1 with a one-element tail: the seed's M8.1 0x07 shape) and a plain
F32 tensor `norm`. Codes are row-major, rows byte-aligned, LSB-first nibbles.
--corrupt flips one payload byte after hashing (the manifest then lies).
"""
import hashlib
import json
import os
import struct
import sys

out = sys.argv[1]
corrupt = "--corrupt" in sys.argv[2:]
os.makedirs(out, exist_ok=True)

codes = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 15]]
scales = [[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]
zeros = [[0, 4], [1, 9], [2, 15]]
norm = [1.5, -2.0, 0.25]


def pack_row(row):
    out = bytearray((len(row) + 1) // 2)
    for i, c in enumerate(row):
        out[i // 2] |= c << (4 * (i % 2))
    return bytes(out)


tensors = {
    "w.codes": ("U8", [3, 3], b"".join(pack_row(r) for r in codes)),
    "w.scales": ("F16", [3, 2], b"".join(struct.pack("<e", s) for r in scales for s in r)),
    "w.zeros": ("U8", [3, 2], bytes(z for r in zeros for z in r)),
    "norm": ("F32", [3], b"".join(struct.pack("<f", v) for v in norm)),
}
header, buffer = {}, b""
for name in sorted(tensors):
    dtype, shape, data = tensors[name]
    header[name] = {"dtype": dtype, "shape": shape,
                    "data_offsets": [len(buffer), len(buffer) + len(data)]}
    buffer += data
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * ((8 - (8 + len(text)) % 8) % 8)
shard = struct.pack("<Q", len(text)) + text + buffer
digest = hashlib.sha256(shard).hexdigest()
if corrupt:
    shard = shard[:-1] + bytes([shard[-1] ^ 0xFF])
shard_name = "model-00001.safetensors"
with open(os.path.join(out, shard_name), "wb") as f:
    f.write(shard)

descriptor = {
    "family": "affine", "decoder_version": 1,
    "code": {"bits": 4, "signed": False, "encoding": "twos_complement"},
    "scheme": "asymmetric", "zero_point": "integer",
    "granularity": {"kind": "group", "axis": 1, "group_size": 4, "tail": "partial"},
    "scale_dtype": "f16", "rounding": "nearest_even", "saturation": "clamp",
    "narrow_range": False,
}
manifest = {
    "versions": {"container_profile": "qtensor.safetensors.v1", "artifact_schema": 2,
                 "packing_layout": 1, "graph": 1, "runtime": 1, "kernel_abi": 2},
    "model": {"architecture": "test", "name": "make_artifact.py", "revision": "1"},
    "quantization": {"family": "affine_w4a32", "config": {"group_size": 4}},
    "topology": {"tp": 1, "pp": 1, "ep": 1},
    "files": [{"path": shard_name, "bytes": len(shard), "sha256": digest, "role": "shard"}],
    "tensors": [
        {"name": "w", "file": shard_name, "kind": "quantized",
         "logical": {"shape": [3, 5], "element_type": "f32", "descriptor": descriptor,
                     "layout": {"family": "logical", "version": 1, "encoding": "lsb_first",
                                "tile": [], "padding": []}},
         "codes": {"tensor": "w.codes", "dtype": "U8", "shape": [3, 3]},
         "scales": {"tensor": "w.scales", "dtype": "F16", "shape": [3, 2]},
         "zeros": {"tensor": "w.zeros", "dtype": "U8", "shape": [3, 2]}},
        {"name": "norm", "file": shard_name, "kind": "plain", "dtype": "F32", "shape": [3]},
    ],
    "kernels": [],
    "bindings": [],
    "provenance": {"source_checkpoint_sha256": "0" * 64,
                   "converter": {"name": "make_artifact.py", "revision": "1"},
                   "created_by": "test/lit/Inputs/make_artifact.py"},
}
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=2, sort_keys=True)
    f.write("\n")
