#!/usr/bin/env bash
# qtensor's host GEMM against ggml's CPU matmul, on the same shapes and
# thread counts in one run (issue 15's host GEMV measure):
#
#   LLAMA_CPP_DIR=.../llama.cpp bench/host-gemv.sh [OUT_DIR]
#
# Compiles a one-block llama of 7B layer shapes (bench/models/
# make_llama_gguf.py, F32) for the host with --quant w4a16:g128, then times
# blk.0.ffn_down (N 4096, K 11008) and blk.0.attn_q (4096 x 4096) through
# the runtime (bench-op: the decode path, row-split over the thread pool)
# at T = 1, 16 and 128, with 1 and 2 threads, and ggml's q4_0 matmul
# (bench/ggml/ggml_mul_mat.c, built against LLAMA_CPP_DIR's build/bin) on
# the same [N, K] and T. Both print weight bytes per second; qtensor's
# bytes are its W4 codes plus f16 scales per 128 (4.125 bits per weight),
# ggml's q4_0 blocks (4.5 bits per weight).
#
# Needs `pip install gguf numpy`, qtc in build/, and cmake/ninja for the
# MLIR-free benchmark build (build-bench-runtime).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-/tmp/qtc-host-gemv}"
llama="${LLAMA_CPP_DIR:?set LLAMA_CPP_DIR to a llama.cpp checkout with build/bin}"
llvm=/usr/lib/llvm-22
mkdir -p "$out"

source "$root/bench/runtime-build.sh"
build_bench_runtime bench-op

model="$out/llama-1.gguf"
art="$out/llama-1-host"
if [ ! -f "$art/manifest.json" ]; then
  python3 "$root/bench/models/make_llama_gguf.py" "$model" --blocks 1 >/dev/null
  rm -rf "$art"
  "$root/build/bin/qtc" compile "$model" --target host -o "$art" --quiet >/dev/null
  rm -f "$model"
fi

"$llvm/bin/clang" -O2 -I"$llama/ggml/include" "$root/bench/ggml/ggml_mul_mat.c" \
  -L"$llama/build/bin" -lggml -lggml-base -lggml-cpu \
  -Wl,-rpath,"$llama/build/bin" -o "$out/ggml_mul_mat"

for op in "blk.0.ffn_down.weight 4096 11008" "blk.0.attn_q.weight 4096 4096"; do
  set -- $op
  for threads in 1 2; do
    echo "== $1 [$2, $3], $threads thread(s)"
    QTENSOR_BENCH_ARTIFACT="$art" QTENSOR_BENCH_OP="$1" QTENSOR_THREADS=$threads \
      "$bench_build/bin/bench-op" --benchmark_min_time=0.5 2>/dev/null |
      grep BM_Op
    for t in 1 16 128; do
      "$out/ggml_mul_mat" q4_0 "$2" "$3" "$t" "$threads" 20
    done
  done
done
