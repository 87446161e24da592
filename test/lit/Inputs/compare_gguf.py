#!/usr/bin/env python3
"""Compares an exported GGUF file with its source, through llama.cpp's gguf.

usage: compare_gguf.py SOURCE.gguf EXPORTED.gguf

For every tensor of EXPORTED: stored in the source's ggml type, its bytes
must be the source's; in another type (a source block type written as
F32), gguf.quants.dequantize of both must be equal. Prints one line per
kind and the metadata keys that differ; exits 1 on any tensor mismatch or
a tensor the source lacks.
"""
import sys

import gguf
import numpy as np

src = {t.name: t for t in gguf.GGUFReader(sys.argv[1]).tensors}
out = gguf.GGUFReader(sys.argv[2])
same_bytes = same_values = 0
for t in out.tensors:
    o = src.get(t.name)
    if o is None:
        sys.exit(t.name + ": not in the source")
    if t.tensor_type == o.tensor_type:
        if t.data.tobytes() != o.data.tobytes():
            sys.exit(t.name + ": bytes differ from the source's")
        same_bytes += 1
        continue
    a = gguf.quants.dequantize(t.data, t.tensor_type).reshape(-1)
    b = gguf.quants.dequantize(o.data, o.tensor_type).reshape(-1)
    if not np.array_equal(a, b):
        sys.exit(t.name + ": values differ from the source's")
    same_values += 1
print("%d tensors with the source's bytes, %d with its values" %
      (same_bytes, same_values))
fields = {f.name: f.contents() for f in gguf.GGUFReader(sys.argv[1]).fields.values()}
for f in out.fields.values():
    if f.name.startswith("GGUF.") or f.name not in fields:
        continue
    if f.contents() != fields[f.name]:
        print("metadata differs:", f.name)
