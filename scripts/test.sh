#!/usr/bin/env bash
# The test command: installs missing packages, checks that every C/C++ file
# is clang-formatted (scripts/check-format.sh), builds everything, then runs
# the lit suites and every GoogleTest/CTest test, printing both counts, then
# the sanitizer build with its fuzz smoke run (scripts/fuzz.sh) and the
# concurrency tests under ThreadSanitizer (scripts/tsan.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_BUILD_DIR:-$root/build}"
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

"$root/scripts/setup.sh"
echo "== format (clang-format, LLVM base style)"
"$root/scripts/check-format.sh"
start=$(date +%s)
"$root/scripts/build.sh"
echo "build: $(( $(date +%s) - start )) s"

echo "== lit"
/usr/lib/llvm-22/bin/lit -sv "$build/test/lit" | tee "$logs/lit.log"

echo "== GoogleTest and CTest"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" | tee "$logs/ctest.log"

echo "== ASan + UBSan build, corpus replay and a short fuzzing run"
"$root/scripts/fuzz.sh" "${QTENSOR_FUZZ_SECONDS:-10}" | tee "$logs/fuzz.log"

echo "== ThreadSanitizer build and the concurrency tests"
"$root/scripts/tsan.sh" | tee "$logs/tsan.log"

# Every step above stops the script on a failure, so reaching here means all
# passed; the counts are the runners' own.
lit_passed=$(sed -n 's/^ *Passed: *\([0-9]*\).*/\1/p' "$logs/lit.log")
ctest_total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$logs/ctest.log")
san_total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$logs/fuzz.log")
skipped=$(cat "$logs/ctest.log" "$logs/fuzz.log" | grep -c "(Skipped)" || true)
echo "lit: ${lit_passed:-0} passed; ctest: ${ctest_total:-0}; ctest under ASan+UBSan: ${san_total:-0}; skipped: $skipped"
echo "qtensor: $(( ${lit_passed:-0} + ${ctest_total:-0} + ${san_total:-0} - skipped )) passed, 0 failed, $skipped skipped"
