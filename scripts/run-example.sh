#!/usr/bin/env bash
# The main job on the embedded default: builds qopt and runs the qtensor
# cleanup pipeline on examples/tiny_mlp.mlir, printing the verified IR.
# Another input or pipeline: scripts/run-example.sh FILE.mlir [qopt flags...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QTENSOR_BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh" >&2
"$root/scripts/build.sh" qopt >&2
input="${1:-$root/examples/tiny_mlp.mlir}"
shift || true
if [ $# -eq 0 ]; then set -- --qtensor-cleanup; fi
exec "$build/bin/qopt" "$input" --verify-each "$@"
