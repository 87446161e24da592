#!/usr/bin/env python3
"""A tiny Phi-3 GGUF file, and its logits from an independent forward.

usage: phi3_reference.py make OUT.gguf [F32|Q8_0]
       phi3_reference.py logits FILE.gguf IDS OUT

`make` writes a phi3 GGUF as llama.cpp's converter lays it out: q, k and v
fused in blk.L.attn_qkv ([q + 2 kv, hidden], in that row order), the gate
and up projections fused in blk.L.ffn_up (gate rows first), seeded random
weights (the linears in F32 or quantized to Q8_0 by gguf-py), an untied
output head, no vocabulary; 2 layers of hidden 96, 4 query and 2 KV heads
of width 24, FFN 128. `logits` reads the file back with gguf-py (its own
Q8_0 dequantizer) and runs llama.cpp's phi3 graph in float64 numpy:
RMSNorm, the fused q/k/v split by rows, NeoX RoPE, grouped-query
attention, SwiGLU over the fused gate/up halves, residuals, the output
norm and head; it writes the last token's logits as little-endian float32,
as `qtc run --logits-out` does. Written from the graph's definition, not
from qtensor.
"""
import sys

import gguf
import numpy as np

ARCH = "phi3"
HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 96, 128, 2, 4, 2, 24, 256
EPS, BASE = 1e-5, 10000.0
Q, KV = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM


def make(path, kind):
    rng = np.random.default_rng(20261204)
    w = gguf.GGUFWriter(path, ARCH)
    w.add_context_length(256)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_freq_base(BASE)
    # llama.cpp's phi3 ignores it (its SWA is disabled); so must qtensor.
    w.add_uint32(ARCH + ".attention.sliding_window", 3)
    w.add_string("tokenizer.ggml.model", "none")

    def mat(n, k):
        return (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)

    def linear(name, n, k):
        t = mat(n, k)
        if kind == "Q8_0":
            q = gguf.quants.quantize(t, gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(name, q, raw_shape=q.shape,
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            w.add_tensor(name, t)

    def norm(n):
        return rng.uniform(0.5, 1.5, n).astype(np.float32)

    w.add_tensor("token_embd.weight", mat(VOCAB, HIDDEN))
    w.add_tensor("output_norm.weight", norm(HIDDEN))
    linear("output.weight", VOCAB, HIDDEN)
    for l in range(LAYERS):
        p = "blk.%d." % l
        w.add_tensor(p + "attn_norm.weight", norm(HIDDEN))
        linear(p + "attn_qkv.weight", Q + 2 * KV, HIDDEN)
        linear(p + "attn_output.weight", HIDDEN, Q)
        w.add_tensor(p + "ffn_norm.weight", norm(HIDDEN))
        linear(p + "ffn_up.weight", 2 * FFN, HIDDEN)
        linear(p + "ffn_down.weight", HIDDEN, FFN)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote phi3 (%s) with %d layers" % (kind, LAYERS))


def rms_norm(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w


def rope_neox(x, pos):
    d = x.shape[-1]
    theta = np.outer(pos, BASE ** (-np.arange(0, d, 2, dtype=np.float64) / d))
    cos, sin = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    a, b = x[..., :d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], -1)


def logits(path, ids):
    r = gguf.GGUFReader(path)
    t = {}
    for x in r.tensors:
        v = gguf.quants.dequantize(np.asarray(x.data), x.tensor_type)
        t[x.name] = np.asarray(v, dtype=np.float64).reshape(
            [int(d) for d in reversed(x.shape)])
    n = len(ids)
    pos = np.arange(n)
    x = t["token_embd.weight"][ids]
    mask = np.triu(np.ones((n, n), dtype=bool), 1)
    for l in range(LAYERS):
        p = "blk.%d." % l
        a = rms_norm(x, t[p + "attn_norm.weight"])
        qkv = a @ t[p + "attn_qkv.weight"].T
        q = qkv[:, :Q].reshape(n, HEADS, HEAD_DIM)
        k = qkv[:, Q:Q + KV].reshape(n, KV_HEADS, HEAD_DIM)
        v = qkv[:, Q + KV:].reshape(n, KV_HEADS, HEAD_DIM)
        q, k = rope_neox(q, pos), rope_neox(k, pos)
        out = np.empty((n, HEADS, HEAD_DIM))
        for h in range(HEADS):
            kvh = h // (HEADS // KV_HEADS)
            s = np.where(mask, -np.inf, q[:, h] @ k[:, kvh].T / np.sqrt(HEAD_DIM))
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, h] = (s / s.sum(-1, keepdims=True)) @ v[:, kvh]
        x = x + out.reshape(n, Q) @ t[p + "attn_output.weight"].T
        m = rms_norm(x, t[p + "ffn_norm.weight"])
        up = m @ t[p + "ffn_up.weight"].T
        g, u = up[:, :FFN], up[:, FFN:]
        x = x + (g / (1 + np.exp(-g)) * u) @ t[p + "ffn_down.weight"].T
    last = rms_norm(x[-1], t["output_norm.weight"])
    return t["output.weight"] @ last


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else "F32")
    elif len(sys.argv) == 5 and sys.argv[1] == "logits":
        ids = [int(i) for i in sys.argv[3].split(",")]
        out = logits(sys.argv[2], ids)
        out.astype("<f4").tofile(sys.argv[4])
        print("reference top-1", int(np.argmax(out)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
