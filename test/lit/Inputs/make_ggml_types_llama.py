#!/usr/bin/env python3
"""Rewrites a float GGUF llama so that its linears are stored in other ggml
types: by default Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K; with --family
lowk the 2- and 3-bit K-quants (Q2_K, Q3_K; the head Q3_K); with --family
iq the IQ lattice and codebook types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
IQ3_S, IQ1_S, IQ4_XS, the head IQ1_M); with --family codebook the two
types whose codes index kvalues_iq4nl (IQ4_NL, IQ4_XS; the head IQ4_NL);
with --family fp4 the two FP4 types whose codes index E2M1 (MXFP4 with
an e8m0 scale per 32, NVFP4 with an unsigned e4m3 scale per 16; the head
NVFP4); with --family q4_0, iq4_nl, mxfp4 or nvfp4 every linear in that one type
(the benchmarks' pairs: bench/codebook-gemv.sh). With --embedding,
token_embd.weight gets the head's type too (as llama-quantize stores an
untied model's embedding in a quantized type).

    make_ggml_types_llama.py IN.gguf OUT.gguf [--family FAMILY] [--embedding]

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
F32, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K = (
    0, 2, 3, 6, 7, 10, 11, 12, 13, 14)
IQ2_XXS, IQ2_XS, IQ3_XXS, IQ1_S, IQ4_NL, IQ3_S, IQ2_S, IQ4_XS, IQ1_M = (
    16, 17, 18, 19, 20, 21, 22, 23, 29)
MXFP4, NVFP4 = 39, 40
BLOCK = {Q4_0: (32, 18), Q4_1: (32, 20), Q5_0: (32, 22), Q5_1: (32, 24),
         Q2_K: (256, 84), Q3_K: (256, 110),
         Q4_K: (256, 144), Q5_K: (256, 176), Q6_K: (256, 210),
         IQ2_XXS: (256, 66), IQ2_XS: (256, 74), IQ2_S: (256, 82),
         IQ3_XXS: (256, 98), IQ3_S: (256, 110), IQ1_S: (256, 50),
         IQ1_M: (256, 56), IQ4_NL: (32, 18), IQ4_XS: (256, 136),
         MXFP4: (32, 17), NVFP4: (64, 36)}

LINEARS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate",
           "ffn_up", "ffn_down")

# Which type each linear gets, and the output head's: every type of the
# family appears (a 384-row Q6_K head, as llama-quantize stores heads).
FAMILIES = {
    "kquant": ({"attn_q": Q4_K, "attn_k": Q5_K, "attn_v": Q6_K,
                "attn_output": Q5_0, "ffn_gate": Q5_1, "ffn_up": Q4_1,
                "ffn_down": Q4_K}, Q6_K),
    "lowk": ({"attn_q": Q2_K, "attn_k": Q3_K, "attn_v": Q3_K,
              "attn_output": Q2_K, "ffn_gate": Q3_K, "ffn_up": Q2_K,
              "ffn_down": Q3_K}, Q3_K),
    "iq": ({"attn_q": IQ2_XXS, "attn_k": IQ2_XS, "attn_v": IQ2_S,
            "attn_output": IQ3_XXS, "ffn_gate": IQ3_S, "ffn_up": IQ1_S,
            "ffn_down": IQ4_XS}, IQ1_M),
    "codebook": ({"attn_q": IQ4_NL, "attn_k": IQ4_XS, "attn_v": IQ4_NL,
                  "attn_output": IQ4_XS, "ffn_gate": IQ4_NL,
                  "ffn_up": IQ4_NL, "ffn_down": IQ4_XS}, IQ4_NL),
    "q4_0": ({role: Q4_0 for role in LINEARS}, Q4_0),
    "iq4_nl": ({role: IQ4_NL for role in LINEARS}, IQ4_NL),
    "fp4": ({"attn_q": MXFP4, "attn_k": NVFP4, "attn_v": MXFP4,
             "attn_output": NVFP4, "ffn_gate": MXFP4, "ffn_up": NVFP4,
             "ffn_down": MXFP4}, NVFP4),
    "mxfp4": ({role: MXFP4 for role in LINEARS}, MXFP4),
    "nvfp4": ({role: NVFP4 for role in LINEARS}, NVFP4),
}

# Where each IQ type keeps its fp16 d, and the range that gives weights of
# a few tenths (the lattice values reach 43, 62, 15 or 1.1 times d's
# multiplier).
IQ_SCALE = {IQ2_XXS: (0, 0.001, 0.003), IQ2_XS: (0, 0.001, 0.003),
            IQ2_S: (0, 0.001, 0.003), IQ3_XXS: (0, 0.0005, 0.0015),
            IQ3_S: (0, 0.0005, 0.0015), IQ1_S: (0, 0.01, 0.03),
            IQ4_XS: (0, 0.00005, 0.0001), IQ4_NL: (0, 0.0015, 0.003)}


def f16(value):
    return struct.pack("<e", value)


def random_block(kind, rng):
    """One block: random code bytes, its fp16 fields set to small values."""
    _, size = BLOCK[kind]
    b = bytearray(rng.getrandbits(8) for _ in range(size))
    if kind in (Q4_1, Q5_1):
        b[0:2] = f16(rng.uniform(0.01, 0.03))
        b[2:4] = f16(-rng.uniform(0.05, 0.2))
    elif kind in (Q4_0, Q5_0):
        b[0:2] = f16(rng.uniform(0.01, 0.03))
    elif kind in (Q4_K, Q5_K):
        b[0:2] = f16(rng.uniform(0.0003, 0.0008))
        b[2:4] = f16(rng.uniform(0.0001, 0.0005))
    elif kind == Q6_K:
        b[208:210] = f16(rng.uniform(0.00005, 0.0002))
    elif kind == Q2_K:  # d, dmin after 16 scale bytes and 64 code bytes
        b[80:82] = f16(rng.uniform(0.002, 0.006))
        b[82:84] = f16(rng.uniform(0.001, 0.004))
    elif kind == Q3_K:  # d after hmask, codes and 12 scale bytes
        b[108:110] = f16(rng.uniform(0.0005, 0.0015))
    elif kind in IQ_SCALE:
        at, low, high = IQ_SCALE[kind]
        b[at:at + 2] = f16(rng.uniform(low, high))
    elif kind == MXFP4:  # e8m0 e: 2^-7 to 2^-5, weights up to 6 * 2^-5
        b[0] = rng.randint(120, 122)
    elif kind == NVFP4:  # four ue4m3 d from 2^-6 to 0.0586 (no NaN 0x7f)
        for k in range(4):
            b[k] = rng.randint(0x08, 0x1F)
    elif kind == IQ1_M:
        # d's 16 bits are the top nibbles of the four u16 scale words.
        d = struct.unpack("<H", f16(rng.uniform(0.01, 0.03)))[0]
        for k in range(4):
            word = struct.unpack_from("<H", b, 48 + 2 * k)[0]
            word = (word & 0x0FFF) | (((d >> (4 * k)) & 0xF) << 12)
            struct.pack_into("<H", b, 48 + 2 * k, word)
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
    args = sys.argv[1:]
    embedding = "--embedding" in args
    args = [a for a in args if a != "--embedding"]
    family = "kquant"
    if len(args) == 4 and args[2] == "--family" and args[3] in FAMILIES:
        family = args[3]
    elif len(args) != 2:
        sys.exit("usage: make_ggml_types_llama.py IN.gguf OUT.gguf "
                 "[--family " + "|".join(FAMILIES) + "] [--embedding]")
    src, dst = args[0], args[1]
    types, head = FAMILIES[family]
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
        quantized_table = name == "output.weight" or (
            embedding and name == "token_embd.weight")
        target = head if quantized_table else (
            types.get(parts[2]) if parts[0] == "blk" else None)
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
