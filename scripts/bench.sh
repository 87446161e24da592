#!/usr/bin/env bash
# Builds and runs a benchmark program (Release, ./build-bench):
#   scripts/bench.sh [formats|compile|load] [benchmark args...]
# `formats` (the default) times decoders and loading; `compile` times the
# --qtensor-compile pipeline on a 7B-shaped model; `load` compiles a 32-layer
# tiny llama for the host and times loading the artifact against a plain
# read of its files. Extra arguments go to the
# program, e.g. --benchmark_filter=Decode. Numbers: docs/benchmarks.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_BENCH_BUILD_DIR:-$root/build-bench}"
llvm=/usr/lib/llvm-22
program=formats
case "${1:-}" in
  formats|compile|load) program="$1"; shift ;;
esac
"$root/scripts/setup.sh" >&2
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}" CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ] || ! grep -q 'QTENSOR_ENABLE_MLIR:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$llvm/bin/clang" -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" \
    -DQTENSOR_ENABLE_MLIR=ON -DQTENSOR_ENABLE_TESTS=OFF \
    -DQTENSOR_ENABLE_BENCHMARKS=ON >/dev/null
fi
ninja -C "$build" -j "${QTENSOR_JOBS:-$(nproc)}" "bench-$program" >&2
if [ "$program" = load ] && [ -z "${QTENSOR_BENCH_ARTIFACT:-}" ]; then
  ninja -C "$build" -j "${QTENSOR_JOBS:-$(nproc)}" qtc make-tiny-llama >&2
  "$build/bin/make-tiny-llama" "$build/bench-llama" --layers 32 >&2
  "$build/bin/qtc" compile "$build/bench-llama" --target host \
    -o "$build/bench-llama-host" --quiet >&2
  export QTENSOR_BENCH_ARTIFACT="$build/bench-llama-host"
fi
exec "$build/bin/bench-$program" "$@"
