#!/usr/bin/env python3
"""A tiny Granite checkpoint, and its logits from an independent forward.

usage: granite_reference.py make DIR
       granite_reference.py logits DIR IDS OUT [--as-llama]

`make` writes a Hugging Face Granite checkpoint (config.json and an F32
model.safetensors, seeded random weights): llama's block, 2 layers, hidden
64, 4 query heads and 2 KV heads, an untied head, and the four multipliers
of transformers' GraniteConfig set far from 1. `logits` runs transformers'
Granite forward (modeling_granite.py: the embeddings times
embedding_multiplier, q.k times attention_multiplier in place of
1/sqrt(head_dim), each attention and MLP output times residual_multiplier
before its residual add, the logits divided by logits_scaling; otherwise
llama's: RMSNorm, NeoX RoPE over the Hugging Face layout, grouped-query
attention, SiLU MLP) in float64 numpy over the comma-separated token ids
and writes the last token's logits as little-endian float32, as `qtc run
--logits-out` does (`--as-llama`: the same weights without the
multipliers, the control that shows they are applied). Written from the
model's definition, not from qtensor: it checks qtensor without sharing
its code. numpy only.
"""
import json
import os
import sys

import numpy as np
from reference_common import (load_f32_safetensors, rms_norm, rope_neox,
                              save_f32_safetensors, write_logits)

CONFIG = {
    "architectures": ["GraniteForCausalLM"],
    "model_type": "granite",
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 256,
    "max_position_embeddings": 512,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
    "attention_bias": False,
    "mlp_bias": False,
    "tie_word_embeddings": False,
    "embedding_multiplier": 12.0,
    "residual_multiplier": 0.22,
    "attention_multiplier": 0.0078125,
    "logits_scaling": 8.0,
    "torch_dtype": "float32",
}


def make(path):
    c = CONFIG
    rng = np.random.default_rng(20261206)
    h, f = c["hidden_size"], c["intermediate_size"]
    d = h // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d

    def w(n, k):
        return (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)

    def norm(n):
        return rng.uniform(0.8, 1.2, n).astype(np.float32)

    t = {"model.embed_tokens.weight": w(c["vocab_size"], h) / 8,
         "model.norm.weight": norm(h)}
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        t[p + "input_layernorm.weight"] = norm(h)
        t[p + "post_attention_layernorm.weight"] = norm(h)
        # q and k large enough that q.k's scale shapes the attention.
        for name, shape, gain in (("q_proj", (q, h), 6.0),
                                  ("k_proj", (kv, h), 6.0),
                                  ("v_proj", (kv, h), 1.0),
                                  ("o_proj", (h, q), 1.0)):
            t[p + "self_attn.%s.weight" % name] = w(*shape) * gain
        for name, shape in (("gate_proj", (f, h)), ("up_proj", (f, h)),
                            ("down_proj", (h, f))):
            t[p + "mlp.%s.weight" % name] = w(*shape)
    t["lm_head.weight"] = w(c["vocab_size"], h)
    os.makedirs(path, exist_ok=True)
    json.dump(c, open(os.path.join(path, "config.json"), "w"), indent=1)
    save_f32_safetensors(t, os.path.join(path, "model.safetensors"))
    print("wrote granite with %d tensors" % len(t))


def logits(path, ids, multipliers=True):
    c = json.load(open(os.path.join(path, "config.json")))
    t = load_f32_safetensors(os.path.join(path, "model.safetensors"))
    eps = c["rms_norm_eps"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    d = c["hidden_size"] // nh
    embed, residual, scale, divisor = (
        (c["embedding_multiplier"], c["residual_multiplier"],
         c["attention_multiplier"], c["logits_scaling"]) if multipliers
        else (1.0, 1.0, 1 / np.sqrt(d), 1.0))
    n = len(ids)
    pos = np.arange(n)
    x = t["model.embed_tokens.weight"][ids] * embed
    mask = np.triu(np.full((n, n), -np.inf), 1)
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        a = rms_norm(x, t[p + "input_layernorm.weight"], eps)
        q = (a @ t[p + "self_attn.q_proj.weight"].T).reshape(n, nh, d)
        k = (a @ t[p + "self_attn.k_proj.weight"].T).reshape(n, nkv, d)
        v = (a @ t[p + "self_attn.v_proj.weight"].T).reshape(n, nkv, d)
        q = rope_neox(q, pos, c["rope_theta"])
        k = rope_neox(k, pos, c["rope_theta"])
        out = np.empty((n, nh, d))
        for head in range(nh):
            kvh = head // (nh // nkv)
            s = q[:, head] @ k[:, kvh].T * scale + mask
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, head] = (s / s.sum(-1, keepdims=True)) @ v[:, kvh]
        o = out.reshape(n, nh * d) @ t[p + "self_attn.o_proj.weight"].T
        x = x + o * residual
        m = rms_norm(x, t[p + "post_attention_layernorm.weight"], eps)
        g = m @ t[p + "mlp.gate_proj.weight"].T
        u = m @ t[p + "mlp.up_proj.weight"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ t[p + "mlp.down_proj.weight"].T \
            * residual
    last = rms_norm(x[-1], t["model.norm.weight"], eps)
    return t["lm_head.weight"] @ last / divisor


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "logits":
        ids = [int(i) for i in sys.argv[3].split(",")]
        write_logits(logits(sys.argv[2], ids, "--as-llama" not in sys.argv[5:]),
                     sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
