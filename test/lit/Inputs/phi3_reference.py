#!/usr/bin/env python3
"""A tiny Phi-3 GGUF file, and its logits from an independent forward.

usage: phi3_reference.py make OUT.gguf [F32|Q8_0] [--longrope]
       phi3_reference.py make-hf DIR [--longrope]
       phi3_reference.py logits FILE.gguf|DIR IDS OUT [--rope short|long]

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
as `qtc run --logits-out` does. `make-hf` writes the same weights as a
Hugging Face Phi-3 checkpoint (config.json, F32 model.safetensors with
self_attn.qkv_proj and mlp.gate_up_proj fused the same way, a
sliding_window of 4); its forward is transformers' Phi3, the same graph
with that window on every layer. `--longrope` makes it a 128k-style phi3
(Phi-3.5-mini, Phi-4-mini): LongRoPE over the first half of each head
(partial_rotary_factor 0.5, GGUF rope.dimension_count 12), short and long
divisors (GGUF rope_factors_short/long, config.json rope_scaling
short_factor/long_factor) and an original context of 8 (of 256), so cos
and sin scale by sqrt(1 + ln 32 / ln 8) (GGUF rope.scaling.attn_factor),
and no window. Its forward rotates with the long divisors when the
sequence is longer than 8 (transformers' rule; llama.cpp's with a context
of that length), or as `--rope` says. Written from the models'
definitions, not from qtensor. numpy and gguf-py only.
"""
import json
import os
import sys

import gguf
import numpy as np
from reference_common import (finish_gguf, load_f32_safetensors, rms_norm,
                              rope_neox, save_f32_safetensors, write_logits)

ARCH = "phi3"
HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 96, 128, 2, 4, 2, 24, 256
EPS, BASE = 1e-5, 10000.0
Q, KV = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM


WINDOW = 4
# --longrope: rotated dimensions, original context, its attention factor.
ROT, ORIGINAL, CONTEXT = 12, 8, 256
LONG_ATTN = float(np.sqrt(1 + np.log(CONTEXT / ORIGINAL) / np.log(ORIGINAL)))


def long_rope_factors():
    rng = np.random.default_rng(8)
    short = rng.uniform(1.0, 1.5, ROT // 2).astype(np.float32)
    long = rng.uniform(2.0, 40.0, ROT // 2).astype(np.float32)
    return short, long


def weights(kind="F32"):
    """The checkpoint's tensors in GGUF names, [rows, cols] float32 (the
    quantized ones as gguf-py's Q8_0 bytes when kind is Q8_0)."""
    rng = np.random.default_rng(20261204)

    def mat(n, k):
        return (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)

    def norm(n):
        return rng.uniform(0.5, 1.5, n).astype(np.float32)

    t = {"token_embd.weight": mat(VOCAB, HIDDEN),
         "output_norm.weight": norm(HIDDEN),
         "output.weight": mat(VOCAB, HIDDEN)}
    for l in range(LAYERS):
        p = "blk.%d." % l
        t[p + "attn_norm.weight"] = norm(HIDDEN)
        t[p + "attn_qkv.weight"] = mat(Q + 2 * KV, HIDDEN)
        t[p + "attn_output.weight"] = mat(HIDDEN, Q)
        t[p + "ffn_norm.weight"] = norm(HIDDEN)
        t[p + "ffn_up.weight"] = mat(2 * FFN, HIDDEN)
        t[p + "ffn_down.weight"] = mat(HIDDEN, FFN)
    return t


HF_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm",
            "output": "lm_head", "attn_norm": "input_layernorm",
            "attn_qkv": "self_attn.qkv_proj", "attn_output": "self_attn.o_proj",
            "ffn_norm": "post_attention_layernorm", "ffn_up": "mlp.gate_up_proj",
            "ffn_down": "mlp.down_proj"}


def hf_name(name):
    parts = name[:-len(".weight")].split(".")
    if parts[0] == "blk":
        return "model.layers.%s.%s.weight" % (parts[1], HF_NAMES[parts[2]])
    return HF_NAMES[parts[0]] + ".weight"


def make_hf(path, longrope=False):
    os.makedirs(path, exist_ok=True)
    config = {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
              "hidden_size": HIDDEN, "intermediate_size": FFN,
              "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
              "num_key_value_heads": KV_HEADS, "vocab_size": VOCAB,
              "max_position_embeddings": CONTEXT, "rms_norm_eps": EPS,
              "rope_theta": BASE, "rope_scaling": None, "hidden_act": "silu",
              "sliding_window": WINDOW, "tie_word_embeddings": False,
              "torch_dtype": "float32"}
    if longrope:
        short, long = long_rope_factors()
        config.update(sliding_window=None, partial_rotary_factor=ROT / HEAD_DIM,
                      original_max_position_embeddings=ORIGINAL,
                      rope_scaling={"type": "longrope",
                                    "short_factor": short.tolist(),
                                    "long_factor": long.tolist()})
    json.dump(config, open(os.path.join(path, "config.json"), "w"), indent=1)
    save_f32_safetensors({hf_name(k): v for k, v in weights().items()},
                         os.path.join(path, "model.safetensors"))
    print("wrote a Hugging Face phi3 with %d layers" % LAYERS)


def load_hf(path):
    back = {hf_name(k): k for k in weights()}
    stored = load_f32_safetensors(os.path.join(path, "model.safetensors"))
    return {back[name]: t for name, t in stored.items()}


def make(path, kind, longrope=False):
    w = gguf.GGUFWriter(path, ARCH)
    w.add_context_length(CONTEXT)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_rope_dimension_count(ROT if longrope else HEAD_DIM)
    if longrope:
        short, long = long_rope_factors()
        w.add_uint32(ARCH + ".rope.scaling.original_context_length", ORIGINAL)
        w.add_float32(ARCH + ".rope.scaling.attn_factor", LONG_ATTN)
        w.add_tensor("rope_factors_short.weight", short)
        w.add_tensor("rope_factors_long.weight", long)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_freq_base(BASE)
    # llama.cpp's phi3 ignores it (its SWA is disabled); so must qtensor.
    w.add_uint32(ARCH + ".attention.sliding_window", 3)
    w.add_string("tokenizer.ggml.model", "none")
    for name, t in weights().items():
        linear = t.ndim == 2 and name != "token_embd.weight"
        if kind == "Q8_0" and linear:
            q = gguf.quants.quantize(t, gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(name, q, raw_shape=q.shape,
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            w.add_tensor(name, t)
    finish_gguf(w)
    print("wrote phi3 (%s) with %d layers" % (kind, LAYERS))


def logits(path, ids, force=None):
    window = 0
    # LongRoPE: rotated dimensions, original context, divisors (short,
    # long) and the factor on cos and sin; none otherwise.
    rot, original, pair, attn = HEAD_DIM, None, None, 1.0
    if os.path.isdir(path):
        t = load_hf(path)
        c = json.load(open(os.path.join(path, "config.json")))
        window = c["sliding_window"] or 0
        if c["rope_scaling"]:
            s = c["rope_scaling"]
            rot = int(HEAD_DIM * c["partial_rotary_factor"])
            original = c["original_max_position_embeddings"]
            pair = np.array(s["short_factor"]), np.array(s["long_factor"])
            f = c["max_position_embeddings"] / original
            attn = np.sqrt(1 + np.log(f) / np.log(original))
    else:
        r = gguf.GGUFReader(path)
        t = {}
        for x in r.tensors:
            v = gguf.quants.dequantize(np.asarray(x.data), x.tensor_type)
            t[x.name] = np.asarray(v, dtype=np.float64).reshape(
                [int(d) for d in reversed(x.shape)])
        if "rope_factors_long.weight" in t:
            rot = int(r.fields[ARCH + ".rope.dimension_count"].contents())
            original = int(r.fields[ARCH + ".rope.scaling.original_context_length"].contents())
            pair = t["rope_factors_short.weight"], t["rope_factors_long.weight"]
            attn = float(r.fields[ARCH + ".rope.scaling.attn_factor"].contents())
    factors = 1.0
    if pair is not None:
        longer = force == "long" or (force is None and len(ids) > original)
        factors = pair[1] if longer else pair[0]
    n = len(ids)
    pos = np.arange(n)
    x = t["token_embd.weight"][ids]
    i, j = np.meshgrid(pos, pos, indexing="ij")
    # Causal; transformers' Phi3 also masks keys WINDOW or more behind.
    mask = (j > i) | ((window > 0) & (i - j >= window))
    for l in range(LAYERS):
        p = "blk.%d." % l
        a = rms_norm(x, t[p + "attn_norm.weight"], EPS)
        qkv = a @ t[p + "attn_qkv.weight"].T
        q = qkv[:, :Q].reshape(n, HEADS, HEAD_DIM)
        k = qkv[:, Q:Q + KV].reshape(n, KV_HEADS, HEAD_DIM)
        v = qkv[:, Q + KV:].reshape(n, KV_HEADS, HEAD_DIM)
        q = rope_neox(q, pos, BASE, factors, rot, attn)
        k = rope_neox(k, pos, BASE, factors, rot, attn)
        out = np.empty((n, HEADS, HEAD_DIM))
        for h in range(HEADS):
            kvh = h // (HEADS // KV_HEADS)
            s = np.where(mask, -np.inf, q[:, h] @ k[:, kvh].T / np.sqrt(HEAD_DIM))
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, h] = (s / s.sum(-1, keepdims=True)) @ v[:, kvh]
        x = x + out.reshape(n, Q) @ t[p + "attn_output.weight"].T
        m = rms_norm(x, t[p + "ffn_norm.weight"], EPS)
        up = m @ t[p + "ffn_up.weight"].T
        g, u = up[:, :FFN], up[:, FFN:]
        x = x + (g / (1 + np.exp(-g)) * u) @ t[p + "ffn_down.weight"].T
    last = rms_norm(x[-1], t["output_norm.weight"], EPS)
    return t["output.weight"] @ last


def main():
    args = [a for a in sys.argv[1:] if a != "--longrope"]
    longrope = "--longrope" in sys.argv
    if len(args) in (2, 3) and args[0] == "make":
        make(args[1], args[2] if len(args) == 3 else "F32", longrope)
    elif len(args) == 2 and args[0] == "make-hf":
        make_hf(args[1], longrope)
    elif len(args) in (4, 6) and args[0] == "logits":
        ids = [int(i) for i in args[2].split(",")]
        force = args[5] if len(args) == 6 and args[4] == "--rope" else None
        write_logits(logits(args[1], ids, force), args[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
