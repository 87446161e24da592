#!/usr/bin/env bash
# GPTQ at 7B layer shapes: compile (verification included) and whole-model
# tokens/s of the same checkpoint without and with act-order, both measured
# in this run. The act-order row pays the runtime's gather of x into each
# linear's group order and the permuted packing; nothing else differs.
#
#   bench/gptq-act-order.sh [OUT_DIR] [BLOCKS]       # default: 2 blocks
#   THREADS=1 bench/gptq-act-order.sh
#
# Needs `pip install numpy` for the generator; qtc from build/bin.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
qtc="${QTC:-$root/build/bin/qtc}"
out="${1:-/tmp/qtc-gptq-bench}"
blocks="${2:-2}"
threads="${THREADS:-2}"
mkdir -p "$out"
prompt=$(python3 -c "print(','.join(str(i + 1) for i in range(32)))")
printf '%-10s %10s %12s %14s %14s\n' checkpoint compile_s peak_rss_MB prefill_tok_s decode_tok_s
for variant in plain act-order; do
  ckpt="$out/gptq-$variant"
  flag=""
  [ "$variant" = act-order ] && flag="--act-order"
  python3 "$root/bench/models/make_gptq_checkpoint.py" "$ckpt" --blocks "$blocks" $flag
  rm -rf "$out/art-$variant"
  /usr/bin/time -f '%e %M' -o "$out/time-$variant.txt" \
    "$qtc" compile "$ckpt" --target host --quant keep --fallback forbid \
    -o "$out/art-$variant" --quiet >/dev/null
  "$qtc" run "$out/art-$variant" --prompt-ids "$prompt" -n 16 \
    --threads "$threads" --json >"$out/run-$variant.json"
  python3 - "$variant" "$out/time-$variant.txt" "$out/run-$variant.json" <<'PY'
import json, sys
wall, rss_kb = open(sys.argv[2]).read().split()[-2:]
t = json.load(open(sys.argv[3]))["timings"]
print(f"{sys.argv[1]:<10} {float(wall):>10.1f} {int(rss_kb) / 1024:>12.0f} "
      f"{t['prefill_tokens_per_s']:>14.1f} {t['decode_tokens_per_s']:>14.1f}")
PY
  rm -rf "$ckpt"
done
