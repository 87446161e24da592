#!/usr/bin/env python3
"""Rewrites a float GGUF llama so that its linears are stored in the ggml
types whose codes qtc keeps: Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K.

    make_ggml_types_llama.py IN.gguf OUT.gguf

The metadata (architecture, tokenizer) is copied byte for byte; every
`blk.*` linear and `output.weight` gets blocks of random codes and small
fp16 scales (seeded, so the file is the same on every run), the other
tensors stay as they are. The codes are not a quantization of the float
weights: what the test checks is that the stored codes survive compilation
and that the kernels reading them agree with the float64 reference.
Standard library only (no gguf or numpy package).
"""
import random
import struct
import sys

# ggml type ids and block sizes (ggml.h, ggml-common.h).
F32, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K = 0, 3, 6, 7, 12, 13, 14
BLOCK = {Q4_1: (32, 20), Q5_0: (32, 22), Q5_1: (32, 24),
         Q4_K: (256, 144), Q5_K: (256, 176), Q6_K: (256, 210)}

# Which type each linear gets: every kept type appears, the output head
# (a 384-row Q6_K, as llama-quantize stores heads) included.
TYPES = {"attn_q": Q4_K, "attn_k": Q5_K, "attn_v": Q6_K, "attn_output": Q5_0,
         "ffn_gate": Q5_1, "ffn_up": Q4_1, "ffn_down": Q4_K}


def f16(value):
    return struct.pack("<e", value)


def random_block(kind, rng):
    """One block: random code bytes, its fp16 fields set to small values."""
    _, size = BLOCK[kind]
    b = bytearray(rng.getrandbits(8) for _ in range(size))
    if kind in (Q4_1, Q5_1):
        b[0:2] = f16(rng.uniform(0.01, 0.03))
        b[2:4] = f16(-rng.uniform(0.05, 0.2))
    elif kind == Q5_0:
        b[0:2] = f16(rng.uniform(0.01, 0.03))
    elif kind in (Q4_K, Q5_K):
        b[0:2] = f16(rng.uniform(0.0003, 0.0008))
        b[2:4] = f16(rng.uniform(0.0001, 0.0005))
    elif kind == Q6_K:
        b[208:210] = f16(rng.uniform(0.00005, 0.0002))
    return bytes(b)


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def string(self):
        n = self.take("Q")
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s.decode("utf-8")

    SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
              10: "Q", 11: "q", 12: "d"}

    def value(self, kind):
        if kind == 8:
            return self.string()
        if kind == 9:
            inner, n = self.take("I"), self.take("Q")
            return [self.value(inner) for _ in range(n)]
        return self.take(self.SCALAR[kind])


def main():
    src, dst = sys.argv[1], sys.argv[2]
    data = open(src, "rb").read()
    r = Reader(data)
    if r.take("4s") != b"GGUF" or r.take("I") != 3:
        sys.exit(f"{src}: not a GGUF v3 file")
    n_tensors, n_kv = r.take("Q"), r.take("Q")
    kv_start = r.pos
    alignment = 32
    for _ in range(n_kv):
        key = r.string()
        value = r.value(r.take("I"))
        if key == "general.alignment":
            alignment = value
    kv_bytes = data[kv_start:r.pos]
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.take("Q") for _ in range(r.take("I"))]
        kind, offset = r.take("I"), r.take("Q")
        infos.append((name, dims, kind, offset))
    data_start = (r.pos + alignment - 1) // alignment * alignment

    rng = random.Random(20261201)
    tensors = []  # (name, dims, kind, bytes)
    for name, dims, kind, offset in infos:
        count = 1
        for d in dims:
            count *= d
        parts = name.split(".")
        target = Q6_K if name == "output.weight" else (
            TYPES.get(parts[2]) if parts[0] == "blk" else None)
        if kind != F32:
            sys.exit(f"{src}: tensor {name} is type {kind}, expected F32")
        if target is None:
            tensors.append((name, dims, kind,
                            data[data_start + offset:
                                 data_start + offset + 4 * count]))
            continue
        per, _ = BLOCK[target]
        if dims[0] % per:
            sys.exit(f"{name}: rows of {dims[0]} are not whole {per}-blocks")
        payload = b"".join(random_block(target, rng)
                           for _ in range(count // per))
        tensors.append((name, dims, target, payload))

    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), n_kv))
    out += kv_bytes
    offset = 0
    for name, dims, kind, payload in tensors:
        encoded = name.encode("utf-8")
        out += struct.pack("<Q", len(encoded)) + encoded
        out += struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, offset)
        offset += (len(payload) + alignment - 1) // alignment * alignment
    out += bytes(-len(out) % alignment)
    for _, _, _, payload in tensors:
        out += payload + bytes(-len(payload) % alignment)
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
