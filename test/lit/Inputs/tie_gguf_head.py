#!/usr/bin/env python3
"""Writes a copy of a GGUF model without its output.weight: llama.cpp then
ties the head to token_embd.weight (its rule, and qtc's).

usage: tie_gguf_head.py IN.gguf OUT.gguf

Metadata and every other tensor are copied as stored, through llama.cpp's
gguf package.
"""
import sys

import gguf

src, dst = sys.argv[1], sys.argv[2]
reader = gguf.GGUFReader(src)
arch = reader.fields["general.architecture"].contents()
writer = gguf.GGUFWriter(dst, arch)
for field in reader.fields.values():
    if field.name.startswith("GGUF.") or field.name == "general.architecture":
        continue
    value_type = field.types[0]
    sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
    writer.add_key_value(field.name, field.contents(), value_type,
                         sub_type=sub_type)
for t in reader.tensors:
    if t.name == "output.weight":
        continue
    writer.add_tensor(t.name, t.data, raw_shape=t.data.shape,
                      raw_dtype=t.tensor_type)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
