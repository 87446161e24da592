#!/usr/bin/env python3
"""Writes a copy of a GGUF file whose RoPE scaling is YaRN, as llama.cpp's
converters spell it.

usage: gguf_yarn.py IN.gguf OUT.gguf FACTOR ORIGINAL_CONTEXT [KEY=FLOAT]...

Drops rope_freqs.weight and every <arch>.rope.scaling.* key, then sets
<arch>.rope.scaling.type yarn, .factor FACTOR (FLOAT32) and
.original_context_length ORIGINAL_CONTEXT (UINT32), and each KEY=FLOAT as
<arch>.rope.scaling.KEY (FLOAT32; e.g. yarn_ext_factor=0.5). Everything
else is copied as stored, through llama.cpp's gguf package.
"""
import sys

import gguf
from gguf_copy import copy_gguf

src, dst, factor, original = sys.argv[1:5]
extra = [a.split("=", 1) for a in sys.argv[5:]]
reader = gguf.GGUFReader(src)
arch = reader.fields["general.architecture"].contents()
prefix = arch + ".rope.scaling."
skip_keys = {k for k in reader.fields if k.startswith(prefix)}


def add(writer):
    writer.add_string(prefix + "type", "yarn")
    writer.add_float32(prefix + "factor", float(factor))
    writer.add_uint32(prefix + "original_context_length", int(original))
    for key, value in extra:
        writer.add_float32(prefix + key, float(value))


copy_gguf(src, dst, skip_keys=skip_keys, skip_tensors={"rope_freqs.weight"},
          add=add)
