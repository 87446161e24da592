#!/usr/bin/env python3
"""Writes a GPTQ checkpoint with Llama-2-7B layer shapes, for measuring
qtc compile and decode on GPTQ at size.

Codes, scales and zeros are drawn from a seeded generator directly in the
stored form (qweight packed along K, qzeros along N holding zero - 1, f16
scales [G, N], g_idx): the point is the bytes and the shapes, not a
calibrated model. --act-order draws a random permutation of each linear's
input columns and forms the groups in that order, as desc_act does.
Tensors are generated and written one at a time.

  make_gptq_checkpoint.py OUT_DIR --blocks 2 [--act-order] [--group 128]

Needs numpy from PyPI (pip install numpy).
"""
import argparse
import json
import os
import struct
import sys

try:
    import numpy as np
except ImportError as e:  # the benchmark harness reports this and skips
    sys.exit(f"make_gptq_checkpoint.py: {e}; pip install numpy")


def linears(blocks, hidden, ffn, kv):
    for b in range(blocks):
        p = f"model.layers.{b}."
        yield p + "self_attn.q_proj", hidden, hidden
        yield p + "self_attn.k_proj", kv, hidden
        yield p + "self_attn.v_proj", kv, hidden
        yield p + "self_attn.o_proj", hidden, hidden
        yield p + "mlp.gate_proj", ffn, hidden
        yield p + "mlp.up_proj", ffn, hidden
        yield p + "mlp.down_proj", hidden, ffn


def pack(fields, axis):
    """Eight 4-bit fields along `axis` into one uint32, first lowest."""
    fields = fields.astype(np.uint32)
    shape = list(fields.shape)
    shape[axis] //= 8
    out = np.zeros(shape, dtype=np.uint32)
    for j in range(8):
        sl = [slice(None)] * fields.ndim
        sl[axis] = slice(j, None, 8)
        out |= fields[tuple(sl)] << (4 * j)
    return out.view(np.int32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--act-order", action="store_true")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    kv = a.hidden // a.heads * a.kv_heads
    tensors = []  # (name, dtype, shape, generator of bytes)

    def f16(shape, scale):
        return lambda: (rng.standard_normal(shape) * scale).astype(np.float16)

    tensors.append(("model.embed_tokens.weight", "F16", (a.vocab, a.hidden),
                    f16((a.vocab, a.hidden), 0.02)))
    tensors.append(("lm_head.weight", "F16", (a.vocab, a.hidden),
                    f16((a.vocab, a.hidden), 0.02)))
    tensors.append(("model.norm.weight", "F16", (a.hidden,),
                    lambda: np.ones(a.hidden, np.float16)))
    for b in range(a.blocks):
        for norm in ("input_layernorm", "post_attention_layernorm"):
            tensors.append((f"model.layers.{b}.{norm}.weight", "F16",
                            (a.hidden,), lambda: np.ones(a.hidden, np.float16)))
    for module, n, k in linears(a.blocks, a.hidden, a.ffn, kv):
        groups = k // a.group
        order = rng.permutation(k) if a.act_order else np.arange(k)
        g_idx = np.empty(k, np.int32)
        g_idx[order] = np.arange(k) // a.group
        tensors.append((module + ".qweight", "I32", (k // 8, n),
                        lambda k=k, n=n: pack(rng.integers(0, 16, (k, n)), 0)))
        tensors.append((module + ".qzeros", "I32", (groups, n // 8),
                        lambda g=groups, n=n: pack(rng.integers(6, 9, (g, n)), 1)))
        tensors.append((module + ".scales", "F16", (groups, n),
                        lambda g=groups, n=n: (rng.uniform(0.5, 1.5, (g, n)) *
                                               0.02 / 7).astype(np.float16)))
        tensors.append((module + ".g_idx", "I32", (k,), lambda g=g_idx: g))

    size = {"F16": 2, "I32": 4}
    header, offset = {}, 0
    for name, dtype, shape, _ in tensors:
        nbytes = size[dtype] * int(np.prod(shape))
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, dtype, shape, make in tensors:
            data = np.ascontiguousarray(make())
            assert data.shape == tuple(shape) and data.itemsize == size[dtype], name
            f.write(data.tobytes())
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
              "hidden_size": a.hidden, "intermediate_size": a.ffn,
              "num_hidden_layers": a.blocks, "num_attention_heads": a.heads,
              "num_key_value_heads": a.kv_heads, "vocab_size": a.vocab,
              "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "tie_word_embeddings": False,
              "torch_dtype": "float16",
              "quantization_config": {
                  "quant_method": "gptq", "bits": 4, "group_size": a.group,
                  "desc_act": a.act_order, "sym": False,
                  "checkpoint_format": "gptq"}}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)


if __name__ == "__main__":
    main()
