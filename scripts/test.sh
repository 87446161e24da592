#!/usr/bin/env bash
# The test command: installs missing packages, builds everything, then runs
# the lit suites and every GoogleTest/CTest test, printing both counts, and
# finally the sanitizer build with its fuzz smoke run (scripts/fuzz.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh"
start=$(date +%s)
"$root/scripts/build.sh"
echo "build: $(( $(date +%s) - start )) s"

echo "== lit"
/usr/lib/llvm-22/bin/lit -sv "$build/test/lit"

echo "== GoogleTest and CTest"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

echo "== ASan + UBSan build, corpus replay and a short fuzzing run"
"$root/scripts/fuzz.sh" "${QTENSOR_FUZZ_SECONDS:-10}"
