#!/usr/bin/env bash
# Mixed 2/4/16 against W4 g128 on one float checkpoint, from one run (issue
# 17): for each --quant form, the realized bits per weight and stored bytes
# of the quantized linears (the compile's ledger), the quantization error
# (L4: the float64 forward of the source's weights vs of the reconstructed
# ones, relative L2 of the logits; and the worst tensor's relative
# Frobenius error), and prefill / decode tokens/s of the host kernels.
#
#   bench/mixed2416.sh CHECKPOINT [OUT_DIR]
#
# CHECKPOINT: a float checkpoint qtc compiles (a Hugging Face directory or
# an F32/F16 GGUF file; build/bin/make-tiny-llama DIR --dtype f16 writes a
# small one). Knobs: QUANTS (default "w4a16:g128 mixed2416:budget=4.125
# mixed2416:budget=3.5 mixed2416"), PROMPT_TOKENS (32), DECODE_TOKENS (16).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
qtc="${QTC:-$root/build/bin/qtc}"
model="${1:?usage: bench/mixed2416.sh CHECKPOINT [OUT_DIR]}"
out="${2:-/tmp/qtc-mixed2416}"
quants="${QUANTS:-w4a16:g128 mixed2416:budget=4.125 mixed2416:budget=3.5 mixed2416}"
prompt_tokens="${PROMPT_TOKENS:-32}"
decode_tokens="${DECODE_TOKENS:-16}"
mkdir -p "$out"
ids=$(python3 -c "print(','.join(str(1 + 7 * i) for i in range($prompt_tokens)))")
printf '%-24s %8s %12s %10s %10s %10s %10s\n' quant "bits/w" "stored B" \
  "L4 qerr" "worst W" "pp tok/s" "tg tok/s"
for q in $quants; do
  art="$out/art-${q//[:=]/-}"
  rm -rf "$art"
  "$qtc" compile "$model" --target host --quant "$q" -o "$art" --json \
    >"$art.compile.json" 2>/dev/null
  "$qtc" run "$art" --prompt-ids "$ids" -n "$((decode_tokens + 1))" --json \
    >"$art.run.json"
  python3 - "$q" "$art.compile.json" "$art.run.json" <<'PY'
import json, re, sys
quant, compiled, ran = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ledger = compiled["ledger"]
levels = {l["level"]: l for l in compiled["parity"]["levels"]}
qerr = levels["L4"].get("metrics", {}).get("quantization_error", float("nan"))
worst = re.search(r"worst relative ([0-9.]+)", levels["L3"]["detail"])
t = ran["timings"]
print("%-24s %8.4f %12d %9.2f%% %10s %10.1f %10.1f" % (
    quant, ledger["bits_per_weight"], ledger["stored_quantized_bytes"],
    100 * qerr, worst.group(1) if worst else "?",
    t["prefill_tokens_per_s"], t["decode_tokens_per_s"]))
PY
done
