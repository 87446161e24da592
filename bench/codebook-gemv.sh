#!/usr/bin/env bash
# The codebook types' host GEMM against Q4_0's on the same shapes in one
# run (issues 13 and 17: each new kernel's time against the W4 affine
# kernel):
#
#   bench/codebook-gemv.sh [OUT_DIR] [TYPE...]
#
# TYPE is q4_0 (the baseline, always run first), iq4_nl, mxfp4 or nvfp4;
# by default all four.
#
# Writes a one-block llama of 7B layer shapes (bench/models/
# make_llama_gguf.py), rewrites its linears once as Q4_0 and once as
# IQ4_NL (MXFP4, NVFP4) blocks of random codes
# (test/lit/Inputs/make_ggml_types_llama.py),
# compiles both with --quant keep --fallback forbid for the host, and times
# blk.0.ffn_down (N 4096, K 11008) and blk.0.attn_q (4096 x 4096) through
# the runtime (bench-op: the decode path, row-split over the thread pool)
# at T = 1, 16 and 128 with 1 and 2 threads. Q4_0, IQ4_NL and NVFP4 store
# 4.5 bits per weight (4-bit codes, 16 scale bits per 32), MXFP4 4.25, so
# the byte rates compare the kernels: Q4_0 converts each code with the
# magic-number trick, the others select it from their 16-entry table
# (NVFP4 scaling each half of a 32-code chunk on its own).
#
# Needs `pip install gguf numpy`, qtc in build/, and the MLIR-free
# benchmark build (QTENSOR_BENCH_RUNTIME_BUILD, default build-bench-runtime).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-/tmp/qtc-codebook-gemv}"
mkdir -p "$out"
shift || true
types=(q4_0)
for t in "${@:-iq4_nl mxfp4 nvfp4}"; do
  for one in $t; do
    case "$one" in
    q4_0) ;;
    iq4_nl | mxfp4 | nvfp4) types+=("$one") ;;
    *) echo "codebook-gemv.sh: unknown type $one (q4_0, iq4_nl, mxfp4, nvfp4)" >&2; exit 2 ;;
    esac
  done
done

source "$root/bench/runtime-build.sh"
build_bench_runtime bench-op

f32="$out/llama-1.gguf"
[ -f "$f32" ] || python3 "$root/bench/models/make_llama_gguf.py" "$f32" --blocks 1 >/dev/null
for type in "${types[@]}"; do
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
    for type in "${types[@]}"; do
      echo "== $type $op, $threads thread(s)"
      QTENSOR_BENCH_ARTIFACT="$out/$type-host" QTENSOR_BENCH_OP="$op" \
        QTENSOR_THREADS=$threads "$bench_build/bin/bench-op" \
        --benchmark_min_time=0.5 2>/dev/null | grep BM_Op
    done
  done
done
