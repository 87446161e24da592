"""Copies a GGUF file through llama.cpp's gguf package, for the scripts
that write a variant of one (tie_gguf_head.py, set_gguf_uint.py,
set_gguf_string.py, gguf_yarn.py).

copy_gguf(src, dst, skip_keys, skip_tensors, add): every metadata key but
skip_keys and every tensor but skip_tensors as stored; add(writer) adds
what the variant adds before the file is written.
"""
import gguf


def copy_gguf(src, dst, skip_keys=(), skip_tensors=(), add=None):
    reader = gguf.GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(dst, arch)
    for field in reader.fields.values():
        if (field.name.startswith("GGUF.") or
                field.name == "general.architecture" or
                field.name in skip_keys):
            continue
        value_type = field.types[0]
        sub_type = (field.types[-1]
                    if value_type == gguf.GGUFValueType.ARRAY else None)
        writer.add_key_value(field.name, field.contents(), value_type,
                             sub_type=sub_type)
    if add:
        add(writer)
    for t in reader.tensors:
        if t.name in skip_tensors:
            continue
        writer.add_tensor(t.name, t.data, raw_shape=t.data.shape,
                          raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
