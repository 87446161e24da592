#!/usr/bin/env python3
"""A tiny Qwen3 checkpoint, and its logits from an independent forward.

usage: qwen3_reference.py make DIR [--tied] [--window W FROM]
       qwen3_reference.py logits DIR IDS OUT [--without-qk-norm]

`make` writes a Hugging Face Qwen3 checkpoint (config.json and an F32
model.safetensors, seeded random weights): 2 layers, hidden 64, 4 query
heads and 2 KV heads of width 32 (so q is 128 wide, not the hidden 64),
per-head q and k norms whose weights are far from 1, so a forward without
them is visibly different. `logits` runs transformers' Qwen3 forward
(modeling_qwen3.py: RMSNorm of each q and k head after the projections and
before the NeoX RoPE, grouped-query attention, SiLU MLP) in float64 numpy
over the comma-separated token ids and writes the last token's logits as
little-endian float32, as `qtc run --logits-out` does
(`--without-qk-norm`: the same forward with the q and k norms left out, the
control that shows they matter). `--window W FROM` writes
use_sliding_window true, sliding_window W and max_window_layers FROM:
transformers then masks keys W or more positions behind on the layers
from FROM on, and so does `logits`. Written from the model's definition,
not from qtensor: it checks qtensor without sharing its code. numpy only.
"""
import json
import os
import sys

import numpy as np
from reference_common import (load_f32_safetensors, rms_norm, rope_neox,
                              save_f32_safetensors, write_logits)

CONFIG = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "vocab_size": 256,
    "max_position_embeddings": 512,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "hidden_act": "silu",
    "attention_bias": False,
    "use_sliding_window": False,
    "sliding_window": None,
    "max_window_layers": 2,
    "torch_dtype": "float32",
}


def make(path, tied, window=None):
    c = dict(CONFIG, tie_word_embeddings=tied)
    if window:
        c.update(use_sliding_window=True, sliding_window=window[0],
                 max_window_layers=window[1])
    rng = np.random.default_rng(20261204)
    h, f, d = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d

    def w(n, k):
        return (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)

    def norm(n, lo, hi):
        return rng.uniform(lo, hi, n).astype(np.float32)

    t = {"model.embed_tokens.weight": w(c["vocab_size"], h),
         "model.norm.weight": norm(h, 0.8, 1.2)}
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        t[p + "input_layernorm.weight"] = norm(h, 0.8, 1.2)
        t[p + "post_attention_layernorm.weight"] = norm(h, 0.8, 1.2)
        for name, shape in (("q_proj", (q, h)), ("k_proj", (kv, h)),
                            ("v_proj", (kv, h)), ("o_proj", (h, q))):
            t[p + "self_attn.%s.weight" % name] = w(*shape)
        t[p + "self_attn.q_norm.weight"] = norm(d, 0.2, 3.0)
        t[p + "self_attn.k_norm.weight"] = norm(d, 0.2, 3.0)
        for name, shape in (("gate_proj", (f, h)), ("up_proj", (f, h)),
                            ("down_proj", (h, f))):
            t[p + "mlp.%s.weight" % name] = w(*shape)
    if not tied:
        t["lm_head.weight"] = w(c["vocab_size"], h)
    os.makedirs(path, exist_ok=True)
    json.dump(c, open(os.path.join(path, "config.json"), "w"), indent=1)
    save_f32_safetensors(t, os.path.join(path, "model.safetensors"))
    print("wrote qwen3 with %d tensors" % len(t))


def logits(path, ids, qk_norm=True):
    c = json.load(open(os.path.join(path, "config.json")))
    t = load_f32_safetensors(os.path.join(path, "model.safetensors"))
    eps, d = c["rms_norm_eps"], c["head_dim"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    n = len(ids)
    pos = np.arange(n)
    x = t["model.embed_tokens.weight"][ids]
    causal = np.triu(np.full((n, n), -np.inf), 1)
    i_, j_ = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    windowed = np.where(i_ - j_ >= (c["sliding_window"] or n), -np.inf, causal)
    for i in range(c["num_hidden_layers"]):
        mask = windowed if (c["use_sliding_window"] and
                            i >= c["max_window_layers"]) else causal
        p = "model.layers.%d." % i
        a = rms_norm(x, t[p + "input_layernorm.weight"], eps)
        q = (a @ t[p + "self_attn.q_proj.weight"].T).reshape(n, nh, d)
        k = (a @ t[p + "self_attn.k_proj.weight"].T).reshape(n, nkv, d)
        v = (a @ t[p + "self_attn.v_proj.weight"].T).reshape(n, nkv, d)
        if qk_norm:
            q = rms_norm(q, t[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, t[p + "self_attn.k_norm.weight"], eps)
        q = rope_neox(q, pos, c["rope_theta"])
        k = rope_neox(k, pos, c["rope_theta"])
        out = np.empty((n, nh, d))
        for head in range(nh):
            kvh = head // (nh // nkv)
            s = q[:, head] @ k[:, kvh].T / np.sqrt(d) + mask
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, head] = (s / s.sum(-1, keepdims=True)) @ v[:, kvh]
        x = x + out.reshape(n, nh * d) @ t[p + "self_attn.o_proj.weight"].T
        m = rms_norm(x, t[p + "post_attention_layernorm.weight"], eps)
        g = m @ t[p + "mlp.gate_proj.weight"].T
        u = m @ t[p + "mlp.up_proj.weight"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ t[p + "mlp.down_proj.weight"].T
    last = rms_norm(x[-1], t["model.norm.weight"], eps)
    head = t.get("lm_head.weight", t["model.embed_tokens.weight"])
    return head @ last


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        window = None
        if "--window" in sys.argv:
            at = sys.argv.index("--window")
            window = (int(sys.argv[at + 1]), int(sys.argv[at + 2]))
        make(sys.argv[2], "--tied" in sys.argv[3:], window)
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "logits":
        ids = [int(i) for i in sys.argv[3].split(",")]
        write_logits(logits(sys.argv[2], ids,
                            "--without-qk-norm" not in sys.argv[5:]),
                     sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
