#!/usr/bin/env bash
# The main job on the embedded default model: generates the tiny llama
# checkpoint (examples/tiny-llama, deterministic), compiles it with qtc for
# sm_90 and for the host (W4A16, groups of 128), verifies both artifacts with
# the parity ladder and runs every linear of the host artifact, checking each
# output against a float64 reference. Artifacts land in build/examples/.
#
# Another checkpoint or options: scripts/run-example.sh CHECKPOINT [qtc compile options...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_BUILD_DIR:-$root/build}"
out="$build/examples"

"$root/scripts/setup.sh" >&2
"$root/scripts/build.sh" qtc make-tiny-llama >&2
qtc="$build/bin/qtc"
mkdir -p "$out"

checkpoint="${1:-}"
if [ -z "$checkpoint" ]; then
  checkpoint="$out/tiny-llama"
  "$build/bin/make-tiny-llama" "$checkpoint"
else
  shift
fi

for target in sm_90 host; do
  echo
  echo "== qtc compile $checkpoint --target $target"
  "$qtc" compile "$checkpoint" --target "$target" -o "$out/tiny-llama-$target" --quiet "$@"
done
echo
echo "== qtc inspect $out/tiny-llama-host"
"$qtc" inspect "$out/tiny-llama-host" | sed -n '1,12p'
for target in sm_90 host; do
  echo
  echo "== qtc verify $out/tiny-llama-$target"
  "$qtc" verify "$out/tiny-llama-$target"
done
echo
echo "== qtc run $out/tiny-llama-host --tokens 4 --check"
"$qtc" run "$out/tiny-llama-host" --tokens 4 --check
