#!/usr/bin/env bash
# llama.cpp's own logits against qtc's on the same GGUF file and prompt ids:
# the tiny files of the family tests (qwen3, phi3, gemma2, gemma3, YaRN)
# checked against the runtime they imitate, not only against the float64
# numpy graphs the tests use. The llama.cpp build is not part of the
# project; this harness builds bench/ggml/llama_logits.cpp against it.
#
#   LLAMA_CPP_DIR=.../llama.cpp [N_CTX=C] bench/llama-logits.sh MODEL.gguf ID,ID,... [OUT_DIR]
#
# N_CTX: llama.cpp's context (default 256), by which it picks LongRoPE's
# long factors (past the original context) where qtc picks by the prompt.
#
# A file without a vocabulary (tokenizer.ggml.model none, as the test
# generators write) gets a byte-level one of its embedding's row count
# first: llama.cpp sizes the model by it. Prints both top-1 ids and the
# relative L2 between the two logits rows. Needs `pip install gguf numpy`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
llvm=/usr/lib/llvm-22
llama="${LLAMA_CPP_DIR:?set LLAMA_CPP_DIR to a llama.cpp checkout with build/bin}"
model="${1:?usage: bench/llama-logits.sh MODEL.gguf ID,ID,... [OUT_DIR]}"
ids="${2:?usage: bench/llama-logits.sh MODEL.gguf ID,ID,... [OUT_DIR]}"
out="${3:-/tmp/qtc-llama-logits}"
mkdir -p "$out"

"$llvm/bin/clang++" -O2 -std=c++17 -I"$llama/include" -I"$llama/ggml/include" \
  "$root/bench/ggml/llama_logits.cpp" -L"$llama/build/bin" -lllama -lggml \
  -lggml-base -Wl,-rpath,"$llama/build/bin" -o "$out/llama_logits"

# A byte vocabulary (<unk> <s> </s>, the bytes, then filler) when none.
PYTHONPATH="$root/test/lit/Inputs" python3 - "$model" "$out/model.gguf" <<'PY'
import shutil, sys
import gguf
from gguf_copy import copy_gguf
src, dst = sys.argv[1:3]
reader = gguf.GGUFReader(src)
if reader.fields["tokenizer.ggml.model"].contents() != "none":
    shutil.copyfile(src, dst)
    sys.exit(0)
n = next(int(t.shape[1]) for t in reader.tensors if t.name == "token_embd.weight")
tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(253)]
tokens += ["t%d" % i for i in range(n - len(tokens))]
def add(w):
    w.add_string("tokenizer.ggml.model", "llama")
    w.add_array("tokenizer.ggml.tokens", tokens)
    w.add_array("tokenizer.ggml.scores", [0.0] * n)
    w.add_array("tokenizer.ggml.token_type", [2, 3, 3] + [6] * 253 + [1] * (n - 256))
    w.add_uint32("tokenizer.ggml.bos_token_id", 1)
    w.add_uint32("tokenizer.ggml.eos_token_id", 2)
    w.add_uint32("tokenizer.ggml.unknown_token_id", 0)
copy_gguf(src, dst, skip_keys={"tokenizer.ggml.model"}, add=add)
PY

"$out/llama_logits" "$out/model.gguf" "$ids" "$out/llama.f32" "${N_CTX:-256}" \
  2>/dev/null
rm -rf "$out/artifact"
"$root/build/bin/qtc" compile "$model" --target host --quant keep \
  --fallback forbid -o "$out/artifact" --quiet >/dev/null
"$root/build/bin/qtc" run "$out/artifact" --prompt-ids "$ids" -n 1 \
  --logits-out "$out/qtc.f32" --json |
  python3 -c "import json,sys; print('qtc top-1', json.load(sys.stdin)['prompt_top5'][0][0])"
python3 "$root/test/lit/Inputs/compare_logits.py" "$out/llama.f32" "$out/qtc.f32" --at-most 1
