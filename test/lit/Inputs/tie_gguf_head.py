#!/usr/bin/env python3
"""Writes a copy of a GGUF model without its output.weight: llama.cpp then
ties the head to token_embd.weight (its rule, and qtc's).

usage: tie_gguf_head.py IN.gguf OUT.gguf

Metadata and every other tensor are copied as stored, through llama.cpp's
gguf package.
"""
import sys

from gguf_copy import copy_gguf

copy_gguf(sys.argv[1], sys.argv[2], skip_tensors={"output.weight"})
