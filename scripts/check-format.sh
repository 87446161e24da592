#!/usr/bin/env bash
# Fails when a tracked C/C++ file differs from what clang-format (LLVM base
# style, .clang-format) makes of it, listing the files. With --fix, formats
# them in place instead.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
format=/usr/lib/llvm-22/bin/clang-format
if [ ! -x "$format" ]; then
  echo "check-format: $format is missing (scripts/setup.sh installs clang-format-22)" >&2
  exit 1
fi
cd "$root"
mapfile -t files < <(git ls-files '*.c' '*.cpp' '*.h')
if [ "${1:-}" = "--fix" ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not clang-formatted:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "run scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
