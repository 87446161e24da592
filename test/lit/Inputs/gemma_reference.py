#!/usr/bin/env python3
"""A tiny Gemma 2 or Gemma 3, as a GGUF file or a Hugging Face checkpoint,
and its logits from an independent forward.

usage: gemma_reference.py make OUT.gguf [gemma2|gemma3]
       gemma_reference.py make-hf DIR [gemma2|gemma3|gemma3-vl|gemma]
       gemma_reference.py logits FILE.gguf|DIR IDS OUT [--without-softcap]

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
capped at 3. `make-hf` writes the same weights as transformers stores
them (config.json and an F32 model.safetensors; gemma2 spells its windows
by the family's pattern, gemma3 by layer_types): Hugging Face names, its
post_attention_layernorm the output norm of attention and
pre_feedforward_layernorm the norm before the MLP, every norm weight
stored as w - 1 (transformers' Gemma RMSNorm multiplies by 1 + w, where
llama.cpp's converter stores 1 + w), q scaled by
query_pre_attn_scalar^-1/2 (head_dim here, as the GGUF graph does; `logits`
reads it from config.json). gemma3-vl writes the same language model as
Gemma3ForConditionalGeneration stores it: the config in text_config,
leaving out the keys whose transformers defaults this model has (RoPE
bases, eps, the window pattern), the tensors under language_model.model.,
and two vision tensors beside them. With gemma (both commands), the model
is Gemma 1's: 2 layers of the same shape, no output norms, no caps, no
window, its norm before the MLP post_attention_layernorm as llama's, and
a config.json whose hidden_act says "gelu" (transformers runs the tanh
GELU unless hidden_activation says otherwise). Written from the graphs'
definitions, not from qtensor.
"""
import json
import os
import sys

import gguf
import numpy as np
from reference_common import (finish_gguf, load_f32_safetensors, rms_norm,
                              rope_neox, save_f32_safetensors, write_logits)

HIDDEN, FFN, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 64, 96, 4, 2, 32, 256
WINDOW, FINAL_CAP, EPS = 4, 3.0, 1e-6


class Arch:
    def __init__(self, name):
        self.name = name
        gemma3 = name == "gemma3"
        self.v1 = name == "gemma"
        self.layers = 2 if self.v1 else 6 if gemma3 else 3
        self.attn_cap = 0.0 if gemma3 or self.v1 else 2.0
        self.final_cap = 0.0 if self.v1 else FINAL_CAP
        self.sandwich = not self.v1
        self.base = 1e6 if gemma3 else 10000.0
        self.local_base = 10000.0
        self.global_scale = 8.0 if gemma3 else 1.0  # linear RoPE divisor
        self.qk_norm = gemma3

    def windowed(self, l):
        # llama.cpp's set_swa_pattern(n): layer l is windowed when
        # l % n < n - 1 (gemma2: n = 2, gemma3: n = 6).
        if self.v1:
            return False
        n = 6 if self.name == "gemma3" else 2
        return l % n < n - 1


def weights(a):
    """The model's tensors under llama.cpp's names, norms as 1 + w."""
    rng = np.random.default_rng(20261204)

    def mat(n, k):
        return (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)

    def norm(n):
        return rng.uniform(0.5, 1.5, n).astype(np.float32)

    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    t = {"token_embd.weight": mat(VOCAB, HIDDEN),
         "output_norm.weight": norm(HIDDEN)}
    for l in range(a.layers):
        p = "blk.%d." % l
        for name, x in (("attn_norm", norm(HIDDEN)), ("attn_q", mat(q, HIDDEN)),
                        ("attn_k", mat(kv, HIDDEN)), ("attn_v", mat(kv, HIDDEN)),
                        ("attn_output", mat(HIDDEN, q)),
                        ("post_attention_norm", norm(HIDDEN)),
                        ("ffn_norm", norm(HIDDEN)), ("ffn_gate", mat(FFN, HIDDEN)),
                        ("ffn_up", mat(FFN, HIDDEN)), ("ffn_down", mat(HIDDEN, FFN)),
                        ("post_ffw_norm", norm(HIDDEN))):
            if a.sandwich or not name.startswith("post_"):
                t[p + name + ".weight"] = x
        if a.qk_norm:
            t[p + "attn_q_norm.weight"] = norm(HEAD_DIM)
            t[p + "attn_k_norm.weight"] = norm(HEAD_DIM)
    return t


def make(path, arch_name):
    a = Arch(arch_name)
    ARCH, LAYERS = a.name, a.layers
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
    if not a.v1:
        w.add_uint32(ARCH + ".attention.sliding_window", WINDOW)
    if a.attn_cap:
        w.add_float32(ARCH + ".attn_logit_softcapping", a.attn_cap)
    if a.final_cap:
        w.add_float32(ARCH + ".final_logit_softcapping", a.final_cap)
    if a.global_scale != 1.0:
        w.add_string(ARCH + ".rope.scaling.type", "linear")
        w.add_float32(ARCH + ".rope.scaling.factor", a.global_scale)
    w.add_string("tokenizer.ggml.model", "none")
    for name, x in weights(a).items():
        w.add_tensor(name, x)
    finish_gguf(w)
    print("wrote %s with %d layers" % (ARCH, LAYERS))


# llama.cpp's name inside a block -> transformers' Gemma name.
HF_NAMES = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj",
            "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
            "attn_output": "self_attn.o_proj",
            "post_attention_norm": "post_attention_layernorm",
            "ffn_norm": "pre_feedforward_layernorm",
            "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
            "ffn_down": "mlp.down_proj",
            "post_ffw_norm": "post_feedforward_layernorm",
            "attn_q_norm": "self_attn.q_norm",
            "attn_k_norm": "self_attn.k_norm"}


# Gemma 1 names its norms as llama does.
HF_NAMES_V1 = dict(HF_NAMES, ffn_norm="post_attention_layernorm")
del HF_NAMES_V1["post_attention_norm"], HF_NAMES_V1["post_ffw_norm"]


def hf_name(name, v1=False):
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    _, layer, inner, _ = name.split(".")
    return "model.layers.%s.%s.weight" % (
        layer, (HF_NAMES_V1 if v1 else HF_NAMES)[inner])


def make_hf(path, arch_name):
    vl = arch_name == "gemma3-vl"
    a = Arch("gemma3" if vl else arch_name)
    c = {"architectures": ["Gemma2ForCausalLM" if a.name == "gemma2"
                           else "Gemma3ForCausalLM"],
         "model_type": "gemma2" if a.name == "gemma2" else "gemma3_text",
         "hidden_size": HIDDEN, "intermediate_size": FFN,
         "num_hidden_layers": a.layers, "num_attention_heads": HEADS,
         "num_key_value_heads": KV_HEADS, "head_dim": HEAD_DIM,
         "vocab_size": VOCAB, "max_position_embeddings": 512,
         "rms_norm_eps": EPS, "rope_theta": a.base,
         "hidden_activation": "gelu_pytorch_tanh",
         "query_pre_attn_scalar": HEAD_DIM, "sliding_window": WINDOW,
         "attn_logit_softcapping": a.attn_cap or None,
         "final_logit_softcapping": FINAL_CAP,
         "tie_word_embeddings": True, "torch_dtype": "float32"}
    if a.v1:
        c = {k: v for k, v in c.items() if k not in (
            "hidden_activation", "query_pre_attn_scalar", "sliding_window",
            "attn_logit_softcapping", "final_logit_softcapping")}
        c.update(architectures=["GemmaForCausalLM"], model_type="gemma",
                 hidden_act="gelu")
    if a.name == "gemma3":
        c["rope_local_base_freq"] = a.local_base
        c["rope_scaling"] = {"rope_type": "linear", "factor": a.global_scale}
        c["layer_types"] = ["sliding_attention" if a.windowed(l)
                            else "full_attention" for l in range(a.layers)]
    t = {}
    for name, x in weights(a).items():
        # Exact: every stored 1 + w is in [0.5, 1.5], so w - 1 in float32
        # loses no bit, and 1 + (w - 1) is the GGUF file's value again.
        t[hf_name(name, a.v1)] = x - np.float32(1) if "norm" in name else x
    if vl:
        for key in ("rope_theta", "rope_local_base_freq", "rms_norm_eps",
                    "layer_types", "tie_word_embeddings", "torch_dtype",
                    "architectures"):
            del c[key]
        c = {"architectures": ["Gemma3ForConditionalGeneration"],
             "model_type": "gemma3", "text_config": c,
             "vision_config": {"model_type": "siglip_vision_model"}}
        t = {"language_model." + k: v for k, v in t.items()}
        t["vision_tower.vision_model.post_layernorm.weight"] = np.ones(
            8, np.float32)
        t["multi_modal_projector.mm_input_projection_weight"] = np.ones(
            (8, HIDDEN), np.float32)
    os.makedirs(path, exist_ok=True)
    json.dump(c, open(os.path.join(path, "config.json"), "w"), indent=1)
    save_f32_safetensors(t, os.path.join(path, "model.safetensors"))
    print("wrote Hugging Face %s with %d tensors" % (a.name, len(t)))


def read_hf(path):
    """A make-hf checkpoint as the GGUF graph reads it: llama.cpp's names,
    each norm as the 1 + w transformers multiplies by; the arch and q's
    scale from config.json."""
    c = json.load(open(os.path.join(path, "config.json")))
    if "text_config" in c:  # Gemma3ForConditionalGeneration
        c = dict(c["text_config"], model_type="gemma3_text")
    stored = load_f32_safetensors(os.path.join(path, "model.safetensors"))
    v1 = c["model_type"] == "gemma"
    back = {v: k for k, v in (HF_NAMES_V1 if v1 else HF_NAMES).items()}
    t = {}
    for name, x in stored.items():
        if name.startswith(("vision_tower.", "multi_modal_projector.")):
            continue
        name = name[len("language_model."):] if name.startswith(
            "language_model.") else name
        if name == "model.embed_tokens.weight":
            key = "token_embd.weight"
        elif name == "model.norm.weight":
            key = "output_norm.weight"
        else:
            parts = name.split(".")
            key = "blk.%s.%s.weight" % (parts[2], back[".".join(parts[3:-1])])
        t[key] = 1 + x if "norm" in name else x
    if v1:  # transformers' Gemma: q by head_dim^-1/2
        return "gemma", t, c["head_dim"] ** -0.5
    arch = "gemma2" if c["model_type"] == "gemma2" else "gemma3"
    return arch, t, c["query_pre_attn_scalar"] ** -0.5


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def logits(path, ids, softcap=True):
    if os.path.isdir(path):
        name, t, q_scale = read_hf(path)
    else:
        r = gguf.GGUFReader(path)
        name = r.fields["general.architecture"].contents()
        t = {x.name: np.array(x.data, dtype=np.float64) for x in r.tensors}
        q_scale = 1 / np.sqrt(HEAD_DIM)
    arch = Arch(name)
    LAYERS, ATTN_CAP = arch.layers, arch.attn_cap
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
        q = rope_neox(q, pos, base, scale) * q_scale
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
        x = x + (rms_norm(o, t[p + "post_attention_norm.weight"], EPS)
                 if arch.sandwich else o)
        m = rms_norm(x, t[p + "ffn_norm.weight"], EPS)
        h = gelu_tanh(m @ t[p + "ffn_gate.weight"].T) * (m @ t[p + "ffn_up.weight"].T)
        d = h @ t[p + "ffn_down.weight"].T
        x = x + (rms_norm(d, t[p + "post_ffw_norm.weight"], EPS)
                 if arch.sandwich else d)
    last = rms_norm(x[-1], t["output_norm.weight"], EPS)
    y = t["token_embd.weight"] @ last
    return cap(y, arch.final_cap) if arch.final_cap else y


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] in ("make", "make-hf"):
        (make if sys.argv[1] == "make" else make_hf)(
            sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else "gemma2")
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "logits":
        ids = [int(i) for i in sys.argv[3].split(",")]
        write_logits(logits(sys.argv[2], ids,
                            "--without-softcap" not in sys.argv[5:]),
                     sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
