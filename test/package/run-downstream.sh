#!/usr/bin/env bash
# Installs the built qtensor into a scratch prefix, then configures, builds and
# runs test/package/downstream against it with find_package(QTensor).
# Usage: run-downstream.sh BUILD_DIR SCRATCH_DIR CXX_COMPILER
set -euo pipefail
build="$1"; scratch="$2"; cxx="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -G Ninja -S "$here/downstream" -B "$scratch/build" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
ninja -C "$scratch/build" >/dev/null
"$scratch/build/downstream" | tee "$scratch/out.txt"
grep -q "weight layers.0.q_proj scales tensor<4096x32xf16>" "$scratch/out.txt"
echo "downstream package test: ok"
