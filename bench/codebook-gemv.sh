#!/usr/bin/env bash
# IQ4_NL's host GEMM against Q4_0's on the same shapes in one run (issue
# 13: each new kernel's time against the W4 affine kernel):
#
#   bench/codebook-gemv.sh [OUT_DIR]
#
# Writes a one-block llama of 7B layer shapes (bench/models/
# make_llama_gguf.py), rewrites its linears once as Q4_0 and once as
# IQ4_NL blocks of random codes (test/lit/Inputs/make_ggml_types_llama.py),
# compiles both with --quant keep --fallback forbid for the host, and times
# blk.0.ffn_down (N 4096, K 11008) and blk.0.attn_q (4096 x 4096) through
# the runtime (bench-op: the decode path, row-split over the thread pool)
# at T = 1, 16 and 128 with 1 and 2 threads. Both types store 4.5 bits
# per weight (4-bit codes, an f16 scale per 32), so the byte rates compare
# the kernels: Q4_0 converts each code with the magic-number trick,
# IQ4_NL gathers it from its 16-entry table.
#
# Needs `pip install gguf numpy`, qtc in build/, and the MLIR-free
# benchmark build (QTENSOR_BENCH_RUNTIME_BUILD, default build-bench-runtime).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-/tmp/qtc-codebook-gemv}"
mkdir -p "$out"

source "$root/bench/runtime-build.sh"
build_bench_runtime bench-op

f32="$out/llama-1.gguf"
[ -f "$f32" ] || python3 "$root/bench/models/make_llama_gguf.py" "$f32" --blocks 1 >/dev/null
for type in q4_0 iq4_nl; do
  art="$out/$type-host"
  if [ ! -f "$art/manifest.json" ]; then
    python3 "$root/test/lit/Inputs/make_ggml_types_llama.py" "$f32" \
      "$out/$type.gguf" --family "$type"
    rm -rf "$art"
    "$root/build/bin/qtc" compile "$out/$type.gguf" --quant keep \
      --fallback forbid --target host -o "$art" --quiet >/dev/null
    rm -f "$out/$type.gguf"
  fi
done

for op in blk.0.ffn_down.weight blk.0.attn_q.weight; do
  for threads in 1 2; do
    for type in q4_0 iq4_nl; do
      echo "== $type $op, $threads thread(s)"
      QTENSOR_BENCH_ARTIFACT="$out/$type-host" QTENSOR_BENCH_OP="$op" \
        QTENSOR_THREADS=$threads "$bench_build/bin/bench-op" \
        --benchmark_min_time=0.5 2>/dev/null | grep BM_Op
    done
  done
done
