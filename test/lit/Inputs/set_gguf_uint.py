#!/usr/bin/env python3
"""Writes a copy of a GGUF file with one UINT32 metadata key set.

usage: set_gguf_uint.py IN.gguf OUT.gguf KEY VALUE

Every other key and every tensor are copied as stored, through llama.cpp's
gguf package; KEY is added, or replaced when the file has it.
"""
import sys

from gguf_copy import copy_gguf

src, dst, key, value = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
copy_gguf(src, dst, skip_keys={key},
          add=lambda writer: writer.add_uint32(key, value))
