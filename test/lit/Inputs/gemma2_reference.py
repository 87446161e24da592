#!/usr/bin/env python3
"""A tiny Gemma 2 GGUF file, and its logits from an independent forward.

usage: gemma2_reference.py make OUT.gguf
       gemma2_reference.py logits FILE.gguf IDS OUT [--without-softcap]

`make` writes a gemma2 GGUF (llama.cpp's names and keys, F32, seeded
random weights, tied head, no vocabulary): 3 layers of hidden 64, 4 query
heads and 2 KV heads of width 32, a sliding window of 4 positions on the
even layers, and soft caps small enough (attention 2, logits 3) that
tanh bends the values. `logits` reads that file back with gguf-py and runs
llama.cpp's gemma2 graph (llm_build_gemma2_iswa) in float64 numpy over the
comma-separated ids: embeddings x sqrt(hidden), RMSNorm with the stored
weights (the +1 is in the file), NeoX RoPE, q scaled by 1/sqrt(head dim),
scores capped c tanh(s / c), causal and sliding-window masks, the
post-attention and post-MLP norms, GeGLU with the tanh GELU, the tied head
and the capped logits; it writes the last token's logits as little-endian
float32, as `qtc run --logits-out` does. `--without-softcap` leaves both
caps out (the control). Written from the graph's definition, not from
qtensor.
"""
import sys

import gguf
import numpy as np

ARCH = "gemma2"
HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 64, 96, 3, 4, 2, 32, 256
WINDOW, ATTN_CAP, FINAL_CAP, EPS, BASE = 4, 2.0, 3.0, 1e-6, 10000.0


def make(path):
    rng = np.random.default_rng(20261204)
    w = gguf.GGUFWriter(path, ARCH)
    w.add_context_length(512)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_freq_base(BASE)
    w.add_uint32(ARCH + ".attention.sliding_window", WINDOW)
    w.add_float32(ARCH + ".attn_logit_softcapping", ATTN_CAP)
    w.add_float32(ARCH + ".final_logit_softcapping", FINAL_CAP)
    w.add_string("tokenizer.ggml.model", "none")

    def mat(n, k):
        return (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)

    def norm(n):
        return rng.uniform(0.5, 1.5, n).astype(np.float32)

    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    w.add_tensor("token_embd.weight", mat(VOCAB, HIDDEN))
    w.add_tensor("output_norm.weight", norm(HIDDEN))
    for l in range(LAYERS):
        p = "blk.%d." % l
        for name, t in (("attn_norm", norm(HIDDEN)), ("attn_q", mat(q, HIDDEN)),
                        ("attn_k", mat(kv, HIDDEN)), ("attn_v", mat(kv, HIDDEN)),
                        ("attn_output", mat(HIDDEN, q)),
                        ("post_attention_norm", norm(HIDDEN)),
                        ("ffn_norm", norm(HIDDEN)), ("ffn_gate", mat(FFN, HIDDEN)),
                        ("ffn_up", mat(FFN, HIDDEN)), ("ffn_down", mat(HIDDEN, FFN)),
                        ("post_ffw_norm", norm(HIDDEN))):
            w.add_tensor(p + name + ".weight", t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote gemma2 with %d layers" % LAYERS)


def rms_norm(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w


def rope_neox(x, pos):
    d = x.shape[-1]
    theta = np.outer(pos, BASE ** (-np.arange(0, d, 2, dtype=np.float64) / d))
    cos, sin = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    a, b = x[..., :d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], -1)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def logits(path, ids, softcap=True):
    r = gguf.GGUFReader(path)
    t = {x.name: np.array(x.data, dtype=np.float64) for x in r.tensors}
    cap = (lambda s, c: c * np.tanh(s / c)) if softcap else (lambda s, c: s)
    n = len(ids)
    pos = np.arange(n)
    x = t["token_embd.weight"][ids] * np.sqrt(HIDDEN)
    for l in range(LAYERS):
        p = "blk.%d." % l
        a = rms_norm(x, t[p + "attn_norm.weight"])
        q = (a @ t[p + "attn_q.weight"].T).reshape(n, HEADS, HEAD_DIM)
        k = (a @ t[p + "attn_k.weight"].T).reshape(n, KV_HEADS, HEAD_DIM)
        v = (a @ t[p + "attn_v.weight"].T).reshape(n, KV_HEADS, HEAD_DIM)
        q = rope_neox(q, pos) / np.sqrt(HEAD_DIM)
        k = rope_neox(k, pos)
        # llama.cpp's set_swa_pattern(2): layer l is windowed when l % 2 == 0;
        # key j is masked for query i when i - j >= WINDOW.
        i, j = np.meshgrid(pos, pos, indexing="ij")
        masked = (j > i) | ((l % 2 == 0) & (i - j >= WINDOW))
        out = np.empty((n, HEADS, HEAD_DIM))
        for h in range(HEADS):
            kvh = h // (HEADS // KV_HEADS)
            s = cap(q[:, h] @ k[:, kvh].T, ATTN_CAP)
            s = np.where(masked, -np.inf, s)
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, h] = (s / s.sum(-1, keepdims=True)) @ v[:, kvh]
        o = out.reshape(n, HEADS * HEAD_DIM) @ t[p + "attn_output.weight"].T
        x = x + rms_norm(o, t[p + "post_attention_norm.weight"])
        m = rms_norm(x, t[p + "ffn_norm.weight"])
        h = gelu_tanh(m @ t[p + "ffn_gate.weight"].T) * (m @ t[p + "ffn_up.weight"].T)
        d = h @ t[p + "ffn_down.weight"].T
        x = x + rms_norm(d, t[p + "post_ffw_norm.weight"])
    last = rms_norm(x[-1], t["output_norm.weight"])
    return cap(t["token_embd.weight"] @ last, FINAL_CAP)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "logits":
        ids = [int(i) for i in sys.argv[3].split(",")]
        out = logits(sys.argv[2], ids, "--without-softcap" not in sys.argv[5:])
        out.astype("<f4").tofile(sys.argv[4])
        print("reference top-1", int(np.argmax(out)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
