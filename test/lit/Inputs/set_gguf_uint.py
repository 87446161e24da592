#!/usr/bin/env python3
"""Writes a copy of a GGUF file with one UINT32 metadata key set.

usage: set_gguf_uint.py IN.gguf OUT.gguf KEY VALUE

Every other key and every tensor are copied as stored, through llama.cpp's
gguf package; KEY is added, or replaced when the file has it.
"""
import sys

import gguf

src, dst, key, value = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
reader = gguf.GGUFReader(src)
arch = reader.fields["general.architecture"].contents()
writer = gguf.GGUFWriter(dst, arch)
for field in reader.fields.values():
    if field.name.startswith("GGUF.") or field.name in ("general.architecture", key):
        continue
    value_type = field.types[0]
    sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
    writer.add_key_value(field.name, field.contents(), value_type,
                         sub_type=sub_type)
writer.add_uint32(key, value)
for t in reader.tensors:
    writer.add_tensor(t.name, t.data, raw_shape=t.data.shape,
                      raw_dtype=t.tensor_type)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
