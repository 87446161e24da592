#!/usr/bin/env python3
"""A tiny Gemma 2 or Gemma 3 GGUF file, and its logits from an independent
forward.

usage: gemma_reference.py make OUT.gguf [gemma2|gemma3]
       gemma_reference.py logits FILE.gguf IDS OUT [--without-softcap]

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
caps out (the control). With gemma3, the file is llama.cpp's gemma3
instead: 6 layers (five windowed, then a global one), per-head q and k
RMSNorms before RoPE, RoPE base 1e6 on the global layer scaled linearly by
8 (rope.scaling.type linear) and base 10000 unscaled on the windowed ones
(llama.cpp's rope_freq_scale_train_swa = 1), no attention cap, the logits
capped at 3. Written from the graphs' definitions, not from qtensor.
"""
import sys

import gguf
import numpy as np
from reference_common import finish_gguf, rms_norm, rope_neox, write_logits

HIDDEN, FFN, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 64, 96, 4, 2, 32, 256
WINDOW, FINAL_CAP, EPS = 4, 3.0, 1e-6


class Arch:
    def __init__(self, name):
        self.name = name
        gemma3 = name == "gemma3"
        self.layers = 6 if gemma3 else 3
        self.attn_cap = 0.0 if gemma3 else 2.0
        self.base = 1e6 if gemma3 else 10000.0
        self.local_base = 10000.0
        self.global_scale = 8.0 if gemma3 else 1.0  # linear RoPE divisor
        self.qk_norm = gemma3

    def windowed(self, l):
        # llama.cpp's set_swa_pattern(n): layer l is windowed when
        # l % n < n - 1 (gemma2: n = 2, gemma3: n = 6).
        n = 6 if self.name == "gemma3" else 2
        return l % n < n - 1


def make(path, arch_name):
    a = Arch(arch_name)
    ARCH, LAYERS = a.name, a.layers
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
    w.add_rope_freq_base(a.base)
    w.add_uint32(ARCH + ".attention.sliding_window", WINDOW)
    if a.attn_cap:
        w.add_float32(ARCH + ".attn_logit_softcapping", a.attn_cap)
    w.add_float32(ARCH + ".final_logit_softcapping", FINAL_CAP)
    if a.global_scale != 1.0:
        w.add_string(ARCH + ".rope.scaling.type", "linear")
        w.add_float32(ARCH + ".rope.scaling.factor", a.global_scale)
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
        if a.qk_norm:
            w.add_tensor(p + "attn_q_norm.weight", norm(HEAD_DIM))
            w.add_tensor(p + "attn_k_norm.weight", norm(HEAD_DIM))
    finish_gguf(w)
    print("wrote %s with %d layers" % (ARCH, LAYERS))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def logits(path, ids, softcap=True):
    r = gguf.GGUFReader(path)
    arch = Arch(r.fields["general.architecture"].contents())
    LAYERS, ATTN_CAP = arch.layers, arch.attn_cap
    t = {x.name: np.array(x.data, dtype=np.float64) for x in r.tensors}
    cap = (lambda s, c: c * np.tanh(s / c)) if softcap else (lambda s, c: s)
    n = len(ids)
    pos = np.arange(n)
    x = t["token_embd.weight"][ids] * np.sqrt(HIDDEN)
    for l in range(LAYERS):
        p = "blk.%d." % l
        a = rms_norm(x, t[p + "attn_norm.weight"], EPS)
        q = (a @ t[p + "attn_q.weight"].T).reshape(n, HEADS, HEAD_DIM)
        k = (a @ t[p + "attn_k.weight"].T).reshape(n, KV_HEADS, HEAD_DIM)
        v = (a @ t[p + "attn_v.weight"].T).reshape(n, KV_HEADS, HEAD_DIM)
        if arch.qk_norm:
            q = rms_norm(q, t[p + "attn_q_norm.weight"], EPS)
            k = rms_norm(k, t[p + "attn_k_norm.weight"], EPS)
        local = arch.windowed(l)
        base = arch.local_base if local else arch.base
        scale = 1.0 if local else arch.global_scale
        q = rope_neox(q, pos, base, scale) / np.sqrt(HEAD_DIM)
        k = rope_neox(k, pos, base, scale)
        # Key j is masked for query i when i - j >= WINDOW on a windowed
        # layer.
        i, j = np.meshgrid(pos, pos, indexing="ij")
        masked = (j > i) | (local & (i - j >= WINDOW))
        out = np.empty((n, HEADS, HEAD_DIM))
        for h in range(HEADS):
            kvh = h // (HEADS // KV_HEADS)
            s = q[:, h] @ k[:, kvh].T
            s = cap(s, ATTN_CAP) if ATTN_CAP else s
            s = np.where(masked, -np.inf, s)
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, h] = (s / s.sum(-1, keepdims=True)) @ v[:, kvh]
        o = out.reshape(n, HEADS * HEAD_DIM) @ t[p + "attn_output.weight"].T
        x = x + rms_norm(o, t[p + "post_attention_norm.weight"], EPS)
        m = rms_norm(x, t[p + "ffn_norm.weight"], EPS)
        h = gelu_tanh(m @ t[p + "ffn_gate.weight"].T) * (m @ t[p + "ffn_up.weight"].T)
        d = h @ t[p + "ffn_down.weight"].T
        x = x + rms_norm(d, t[p + "post_ffw_norm.weight"], EPS)
    last = rms_norm(x[-1], t["output_norm.weight"], EPS)
    return cap(t["token_embd.weight"] @ last, FINAL_CAP)


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else "gemma2")
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "logits":
        ids = [int(i) for i in sys.argv[3].split(",")]
        write_logits(logits(sys.argv[2], ids,
                            "--without-softcap" not in sys.argv[5:]),
                     sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
