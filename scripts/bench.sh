#!/usr/bin/env bash
# Builds and runs the benchmarks (Release, ./build-bench). Arguments go to the
# benchmark program, e.g. --benchmark_filter=Decode. Numbers: docs/benchmarks.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_BENCH_BUILD_DIR:-$root/build-bench}"
llvm=/usr/lib/llvm-22
"$root/scripts/setup.sh" >&2
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}" CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$llvm/bin/clang" -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
    -DQTENSOR_ENABLE_MLIR=OFF -DQTENSOR_ENABLE_TESTS=OFF \
    -DQTENSOR_ENABLE_BENCHMARKS=ON >/dev/null
fi
ninja -C "$build" bench-formats >&2
exec "$build/bin/bench-formats" "$@"
