#!/usr/bin/env bash
# Builds the MLIR-free libraries, their unit tests and the libFuzzer targets
# with ASan + UBSan (clang-22) in ./build-fuzz, then:
#   1. runs the unit tests under the sanitizers (every corpus file's verdict,
#      inventory and values, now also checked for memory errors and UB);
#   2. replays every corpus file through each fuzzer with a 64 MiB malloc cap
#      (a reject case that allocates from an unchecked size fails here);
#   3. fuzzes each target for SECONDS (default 30) from those seeds.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-30}"
build="${QTENSOR_FUZZ_BUILD_DIR:-$root/build-fuzz}"
corpus="$root/../shared/corpus"
llvm=/usr/lib/llvm-22

export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}" CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$llvm/bin/clang" -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
    -DQTENSOR_ENABLE_MLIR=OFF -DQTENSOR_ENABLE_SANITIZERS=ON \
    -DQTENSOR_ENABLE_FUZZERS=ON >/dev/null
fi
ninja -C "$build" -j "${QTENSOR_JOBS:-$(nproc)}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

echo "== unit tests under ASan + UBSan"
if ! ctest --test-dir "$build" --output-on-failure -j "$(nproc)" > "$build/ctest.log" 2>&1; then
  cat "$build/ctest.log"; exit 1
fi
grep -E "tests passed|tests failed|\(Skipped\)" "$build/ctest.log"

if [ ! -d "$corpus" ]; then
  echo "fuzz: $corpus is absent; skipping the corpus replay and fuzzing"
  exit 0
fi

declare -A seeds=(
  [fuzz-safetensors]="$corpus/safetensors"
  [fuzz-safetensors-index]="$corpus/safetensors/real/FluxML_SafeTensors.jl/sharded/model.safetensors.index.json"
  [fuzz-gguf]="$corpus/gguf"
  [fuzz-descriptor-json]="$root/test/fuzz/seeds/descriptor-json"
)
if [ -x "$build/bin/fuzz-manifest" ]; then
  seeds[fuzz-manifest]="$root/test/fuzz/seeds/manifest"
fi
if [ -x "$build/bin/fuzz-program" ]; then
  seeds[fuzz-program]="$root/test/fuzz/seeds/program"
fi
if [ -x "$build/bin/fuzz-onnx" ]; then
  seeds[fuzz-onnx]="$root/test/fuzz/seeds/onnx"
fi
if [ -x "$build/bin/fuzz-artifact" ]; then
  seeds[fuzz-artifact]="$root/test/fuzz/seeds/artifact"
fi

for target in $(printf '%s\n' "${!seeds[@]}" | sort); do
  bin="$build/bin/$target"
  mapfile -t files < <(find ${seeds[$target]} -type f ! -name '*.f32' ! -name '*.md' \
                         ! -name 'manifest.json' | sort)
  artifacts="$build/fuzz-artifacts/$target-"
  mkdir -p "$build/fuzz-artifacts"
  echo "== $target: replaying ${#files[@]} seed files (malloc limit 64 MiB)"
  if ! "$bin" -malloc_limit_mb=64 -rss_limit_mb=512 -timeout=10 \
       -artifact_prefix="$artifacts" "${files[@]}" > "$build/$target.replay.log" 2>&1; then
    tail -n 30 "$build/$target.replay.log"; echo "fuzz: $target failed on a seed"; exit 1
  fi
  work="$build/fuzz-corpus/$target"
  mkdir -p "$work"
  cp -n "${files[@]}" "$work/" 2>/dev/null || true
  echo "== $target: fuzzing for ${seconds}s"
  if ! "$bin" "$work" -max_total_time="$seconds" -malloc_limit_mb=256 \
       -rss_limit_mb=1024 -timeout=10 -max_len=65536 -print_final_stats=1 \
       -artifact_prefix="$artifacts" > "$build/$target.fuzz.log" 2>&1; then
    tail -n 40 "$build/$target.fuzz.log"; echo "fuzz: $target found a failure"; exit 1
  fi
  grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$build/$target.fuzz.log" || true
done
echo "fuzz: all targets clean"
