#!/usr/bin/env python3
"""Writes a copy of a GGUF file with one STRING metadata key set.

usage: set_gguf_string.py IN.gguf OUT.gguf KEY VALUE

Every other key and every tensor are copied as stored, through llama.cpp's
gguf package; KEY is added, or replaced when the file has it. VALUE is
taken as written (a chat template's Jinja text, say).
"""
import sys

from gguf_copy import copy_gguf

src, dst, key, value = sys.argv[1:5]
copy_gguf(src, dst, skip_keys={key},
          add=lambda writer: writer.add_string(key, value))
