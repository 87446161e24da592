#!/usr/bin/env bash
# Builds the MLIR-free runtime and its unit tests with ThreadSanitizer
# (clang-22) in ./build-tsan and runs the tests that call into one model or
# one thread pool from several threads at once (a data race fails them),
# several decoder sequences on one model among them.
# Usage: scripts/tsan.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_TSAN_BUILD_DIR:-$root/build-tsan}"
llvm=/usr/lib/llvm-22

export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}" CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$llvm/bin/clang" -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
    -DQTENSOR_ENABLE_MLIR=OFF -DQTENSOR_ENABLE_TSAN=ON >/dev/null
fi
ninja -C "$build" -j "${QTENSOR_JOBS:-$(nproc)}" RuntimeTests SupportTests

# Several decoder sequences on one model need a model compiled in MLIR: the
# main build's qtc makes one from the tiny llama (when it is built).
main="${QTENSOR_BUILD_DIR:-$root/build}"
filter='LoaderConcurrency.*'
if [ -x "$main/bin/qtc" ] && [ -x "$main/bin/make-tiny-llama" ]; then
  "$main/bin/make-tiny-llama" "$build/tiny-llama" >/dev/null
  "$main/bin/qtc" compile "$build/tiny-llama" --target host \
    -o "$build/tiny-llama-host" --quiet >/dev/null
  export QTENSOR_TEST_DECODER_ARTIFACT="$build/tiny-llama-host"
  filter="$filter:DecoderConcurrency.*:DecoderBeams.*"
else
  echo "tsan: no main build of qtc: DecoderConcurrency is not run"
fi

export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
echo "== concurrency tests under ThreadSanitizer"
"$build/bin/RuntimeTests" --gtest_filter="$filter" --gtest_brief=1
"$build/bin/SupportTests" --gtest_filter='ThreadPool*:ReadCopy*' --gtest_brief=1
echo "tsan: clean"
