# Sourced by the benchmark scripts that time the runtime against a
# baseline: builds qtc (build/) and TARGET in the MLIR-free Release build
# of the runtime benchmarks, $QTENSOR_BENCH_RUNTIME_BUILD (default
# build-bench-runtime), and sets `bench_build` to that directory.
#
#   source "$root/bench/runtime-build.sh"; build_bench_runtime bench-op
build_bench_runtime() {
  local llvm=/usr/lib/llvm-22
  bench_build="${QTENSOR_BENCH_RUNTIME_BUILD:-$root/build-bench-runtime}"
  "$root/scripts/build.sh" qtc >&2
  if [ ! -f "$bench_build/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$bench_build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER="$llvm/bin/clang" \
      -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
      -DQTENSOR_ENABLE_MLIR=OFF -DQTENSOR_ENABLE_TESTS=OFF \
      -DQTENSOR_ENABLE_BENCHMARKS=ON >/dev/null
  fi
  ninja -C "$bench_build" "$1" >&2
}
