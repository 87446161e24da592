#!/usr/bin/env python3
"""Writes llama.cpp's own dequantization of a GGUF file's tensors.

usage: dequantize_gguf.py FILE.gguf OUT_DIR [TYPE_PREFIX]

For every tensor whose ggml type name starts with TYPE_PREFIX (default: all
block types), writes OUT_DIR/NAME.f32: gguf.quants.dequantize of its bytes,
float32 little-endian in the tensor's row-major order, which is what
`qtc inspect --tensor NAME --dump-f32` writes. Prints how many it wrote.
"""
import os
import sys

import gguf
import numpy as np

path, out = sys.argv[1], sys.argv[2]
prefix = sys.argv[3] if len(sys.argv) > 3 else ""
os.makedirs(out, exist_ok=True)
written = 0
for t in gguf.GGUFReader(path).tensors:
    name = t.tensor_type.name
    if name in ("F32", "F16") or not name.startswith(prefix):
        continue
    values = gguf.quants.dequantize(t.data, t.tensor_type).astype("<f4")
    values.tofile(os.path.join(out, t.name + ".f32"))
    written += 1
print("%d tensors dequantized" % written)
