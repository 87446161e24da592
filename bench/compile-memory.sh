#!/usr/bin/env bash
# Peak resident memory and stage times of `qtc compile` on llama-architecture
# F32 GGUF checkpoints of growing depth: the streamed data path must keep the
# peak independent of the number of blocks. Each line is one compile
# (verification included) of a model written by bench/models/make_llama_gguf.py.
#
#   bench/compile-memory.sh [OUT_DIR] [BLOCKS...]          # default: 2 4, 7B layers
#   QTC_MEM_SHAPE="--hidden 1024 --ffn 2816 --heads 8 --kv-heads 8 --vocab 4096" \
#     bench/compile-memory.sh /tmp/mem 2 8                 # small layers, fast
#
# Needs `pip install gguf numpy` for the generator; qtc from build/bin.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
qtc="${QTC:-$root/build/bin/qtc}"
out="${1:-/tmp/qtc-compile-memory}"
shift || true
blocks=("$@")
[ ${#blocks[@]} -eq 0 ] && blocks=(2 4)
mkdir -p "$out"
printf '%-8s %12s %14s %s\n' blocks quantized peak_rss_MB "stage seconds (read plan graph kernels export verify)"
for b in "${blocks[@]}"; do
  model="$out/llama-$b.gguf"
  # shellcheck disable=SC2086
  python3 "$root/bench/models/make_llama_gguf.py" "$model" --blocks "$b" ${QTC_MEM_SHAPE:-} >/dev/null
  rm -rf "$out/art-$b"
  /usr/bin/time -f '%M' -o "$out/time-$b.txt" \
    "$qtc" compile "$model" --target host -o "$out/art-$b" --json --quiet >"$out/result-$b.json"
  python3 - "$out/result-$b.json" "$out/time-$b.txt" "$b" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
maxrss_kb = int(open(sys.argv[2]).read().split()[-1])
s = r["stage_seconds"]
stages = " ".join(f"{k}={s[k]:.1f}" for k in s)
print(f"{sys.argv[3]:<8} {r['ledger']['quantized_weights']:>12} {maxrss_kb/1024:>14.0f} {stages}  ok={r['ok']}")
PY
  rm -f "$model"
done
