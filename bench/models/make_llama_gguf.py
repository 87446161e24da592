#!/usr/bin/env python3
"""Writes a llama-architecture GGUF checkpoint with real weight bytes (F32 or
F16, N(0, 0.02) from a seeded generator) for measuring qtc compile at size.

The defaults are Llama-2-7B layer shapes (hidden 4096, FFN 11008, 32 heads)
with a vocabulary of 8192 and a tied head: 2 blocks are 438 M weights
(1.75 GB as F32), 4 blocks 876 M (3.5 GB). Tensors are generated and written
one at a time, so the generator's memory stays at one tensor.

  make_llama_gguf.py OUT.gguf --blocks 2            # the issue's 438 M model
  make_llama_gguf.py OUT.gguf --blocks 4 --dtype f16
  make_llama_gguf.py OUT.gguf --blocks 1 --vocab 32000 --untied  # Llama-2's

Needs the `gguf` and `numpy` packages from PyPI (pip install gguf numpy).
"""
import argparse
import sys

try:
    import numpy as np
    import gguf
except ImportError as e:  # the benchmark harness reports this and skips
    sys.exit(f"make_llama_gguf.py: {e}; pip install gguf numpy")


def tensors(blocks, hidden, ffn, kv, vocab, untied):
    yield "token_embd.weight", (vocab, hidden)
    for b in range(blocks):
        p = f"blk.{b}."
        yield p + "attn_norm.weight", (hidden,)
        yield p + "attn_q.weight", (hidden, hidden)
        yield p + "attn_k.weight", (kv, hidden)
        yield p + "attn_v.weight", (kv, hidden)
        yield p + "attn_output.weight", (hidden, hidden)
        yield p + "ffn_norm.weight", (hidden,)
        yield p + "ffn_gate.weight", (ffn, hidden)
        yield p + "ffn_up.weight", (ffn, hidden)
        yield p + "ffn_down.weight", (hidden, ffn)
    yield "output_norm.weight", (hidden,)
    if untied:  # a head of its own, as Llama-2 and most llama.cpp files have
        yield "output.weight", (vocab, hidden)


def add_tokenizer(w, vocab):
    """A SentencePiece-style vocabulary of `vocab` pieces (unk, bos, eos,
    the 256 byte pieces, then made-up words), so llama.cpp loads the file
    and the same prompt ids mean the same thing to both runtimes."""
    if vocab < 259 + 1:
        raise SystemExit("--vocab must be at least 260 (specials and bytes)")
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"\u2581w{i}" for i in range(vocab - len(tokens))]
    types = [2, 3, 3] + [6] * 256 + [1] * (vocab - 259)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * 3 + [0.0] * 256 + [-float(i) for i in range(vocab - 259)])
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--dtype", choices=("f32", "f16"), default="f32")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--untied", action="store_true",
                    help="store output.weight apart from token_embd.weight")
    a = ap.parse_args()
    if min(a.blocks, a.hidden, a.ffn, a.heads, a.kv_heads, a.vocab) < 1:
        ap.error("every size must be positive")
    if a.hidden % a.heads or a.heads % a.kv_heads:
        ap.error("hidden must divide by heads, heads by kv-heads")
    kv = a.hidden // a.heads * a.kv_heads
    dtype = np.float32 if a.dtype == "f32" else np.float16

    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name(f"llama-shapes-{a.blocks}-blocks")
    w.add_context_length(4096)
    w.add_embedding_length(a.hidden)
    w.add_feed_forward_length(a.ffn)
    w.add_block_count(a.blocks)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(a.vocab)
    add_tokenizer(w, a.vocab)
    items = list(tensors(a.blocks, a.hidden, a.ffn, kv, a.vocab, a.untied))
    for name, shape in items:
        n = int(np.prod(shape))
        w.add_tensor_info(name, shape, np.dtype(dtype), n * np.dtype(dtype).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    rng = np.random.default_rng(a.seed)
    total = 0
    for name, shape in items:
        if name.endswith("norm.weight"):
            t = np.ones(shape, dtype=dtype)
        else:
            t = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(dtype)
        w.write_tensor_data(t)
        total += t.size
        del t
    w.close()
    print(f"{a.out}: {a.blocks} blocks, {total} weights ({a.dtype})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
