#!/usr/bin/env bash
# Configures (once) and builds qtensor in ./build with clang-22, Ninja, lld and
# ccache against Debian's LLVM/MLIR 22. Extra arguments are ninja targets.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_BUILD_DIR:-$root/build}"
llvm=/usr/lib/llvm-22

# CI clones into a different folder on the same machine: hashing paths
# relative to the folder above the checkout lets those clones share the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}"
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE="${QTENSOR_BUILD_TYPE:-Release}" \
    -DCMAKE_C_COMPILER="$llvm/bin/clang" \
    -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" \
    -DCMAKE_INSTALL_PREFIX="$build/install" \
    ${QTENSOR_CMAKE_ARGS:-}
fi
jobs="${QTENSOR_JOBS:-$(nproc)}"
ninja -C "$build" -j "$jobs" "$@"
