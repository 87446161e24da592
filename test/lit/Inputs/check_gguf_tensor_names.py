#!/usr/bin/env python3
"""Checks a GGUF file's tensor names against llama.cpp's list for its
architecture.

usage: check_gguf_tensor_names.py FILE.gguf

gguf-py (llama.cpp's own package) lists, per architecture, the tensors its
graph reads (MODEL_TENSORS, with TENSOR_NAMES' spellings). Every tensor
of FILE must be one of them, with a block index below block_count; prints
the architecture and the tensor count, exits 1 naming a tensor llama.cpp
would not read.
"""
import sys

import gguf


def main():
    reader = gguf.GGUFReader(sys.argv[1])
    arch_name = reader.fields["general.architecture"].contents()
    arch = next((a for a, n in gguf.MODEL_ARCH_NAMES.items() if n == arch_name),
                None)
    if arch is None:
        sys.exit("gguf-py knows no architecture %r" % arch_name)
    blocks = reader.fields[arch_name + ".block_count"].contents()
    allowed = set()
    for tensor in gguf.MODEL_TENSORS[arch]:
        spelled = gguf.TENSOR_NAMES[tensor]
        names = ([spelled.format(bid=b) for b in range(blocks)]
                 if "{bid}" in spelled else [spelled])
        allowed.update(n + ".weight" for n in names)
        allowed.update(n + ".bias" for n in names)
    for t in reader.tensors:
        if t.name not in allowed:
            sys.exit("%s: tensor %s is not one llama.cpp's %s graph reads"
                     % (sys.argv[1], t.name, arch_name))
    print("%s: %d tensors, each one llama.cpp reads"
          % (arch_name, len(reader.tensors)))


if __name__ == "__main__":
    main()
