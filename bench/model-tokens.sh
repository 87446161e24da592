#!/usr/bin/env bash
# Whole-model prefill and decode tokens/s on the host: qtc run --prompt on an
# artifact compiled from a GGUF file, against llama.cpp's CPU backend on the
# same file and thread count when a llama.cpp build is given, as a ratio from
# one run (the llama.cpp build is not part of the project; this harness only
# calls its llama-bench).
#
#   bench/model-tokens.sh MODEL.gguf [OUT_DIR]
#   LLAMA_CPP_BIN=/path/to/llama.cpp/build/bin bench/model-tokens.sh MODEL.gguf
#
# Knobs: QTC_COMPILE_FLAGS (default "--quant keep --fallback allow"),
# PROMPT_TOKENS (default 32), DECODE_TOKENS (default 16), THREADS (default 1;
# both runtimes get the same count: qtc run --threads, llama-bench -t).
# qtc decodes after the prompt, so llama.cpp's decode runs at the same
# depth (llama-bench -d PROMPT_TOKENS: tgN @ dP), its prefill at depth 0.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
qtc="${QTC:-$root/build/bin/qtc}"
model="${1:?usage: bench/model-tokens.sh MODEL.gguf [OUT_DIR]}"
out="${2:-/tmp/qtc-model-tokens}"
prompt_tokens="${PROMPT_TOKENS:-32}"
decode_tokens="${DECODE_TOKENS:-16}"
threads="${THREADS:-1}"
mkdir -p "$out"
art="$out/artifact"
rm -rf "$art"
# shellcheck disable=SC2086
"$qtc" compile "$model" --target host -o "$art" --quiet ${QTC_COMPILE_FLAGS:---quant keep --fallback allow} >/dev/null
# A prompt of prompt_tokens ids (BOS-free, the same for both runtimes).
ids=$(python3 -c "print(','.join(str(100 + 7 * i) for i in range($prompt_tokens)))")
"$qtc" run "$art" --prompt-ids "$ids" -n "$((decode_tokens + 1))" \
  --threads "$threads" --json >"$out/qtc.json"
python3 - "$out/qtc.json" <<'PY' >"$out/qtc.txt"
import json, sys
t = json.load(open(sys.argv[1]))["timings"]
print("%.3f %.3f" % (t["prefill_tokens_per_s"], t["decode_tokens_per_s"]))
PY
read -r q_pp q_tg <"$out/qtc.txt"
printf '%-12s %14s %14s\n' runtime "prefill tok/s" "decode tok/s"
printf '%-12s %14s %14s\n' qtensor "$q_pp" "$q_tg"
if [ -n "${LLAMA_CPP_BIN:-}" ]; then
  "$LLAMA_CPP_BIN/llama-bench" -m "$model" -p "$prompt_tokens" -n 0 \
    -t "$threads" -o json >"$out/llama-pp.json"
  "$LLAMA_CPP_BIN/llama-bench" -m "$model" -p 0 -n "$decode_tokens" \
    -d "$prompt_tokens" -t "$threads" -o json >"$out/llama-tg.json"
  python3 - "$out/llama-pp.json" "$out/llama-tg.json" "$q_pp" "$q_tg" <<'PY'
import json, sys
pp = next(r["avg_ts"] for r in json.load(open(sys.argv[1])) if r["n_prompt"] > 0)
tg = next(r["avg_ts"] for r in json.load(open(sys.argv[2])) if r["n_gen"] > 0)
q_pp, q_tg = float(sys.argv[3]), float(sys.argv[4])
print("%-12s %14.3f %14.3f" % ("llama.cpp", pp, tg))
print("%-12s %14.4f %14.4f" % ("ratio", q_pp / pp, q_tg / tg))
PY
else
  echo "(LLAMA_CPP_BIN unset: no llama.cpp baseline in this run)"
fi
