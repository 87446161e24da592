#!/usr/bin/env bash
# Whole-model decode with int8 against float activations in the host's
# T = 1 linears (qtc compile --host-activations int8|float), one build, the
# runs alternated, and llama.cpp's llama-bench on the same files and thread
# counts in the same session when LLAMA_CPP_BIN is given:
#
#   LLAMA_CPP_BIN=.../build/bin bench/host-activations.sh FILE.gguf... [REPS]
#
# Prints one line per run: model, activations, threads, prefill and decode
# tok/s (a P-token prompt, ids 100 + 7 i, then 32 decoded tokens), and for
# llama.cpp ppP, tg32 and tg32 at depth P (decode after the prompt, as qtc
# decodes). P is $PROMPT_TOKENS (default 32). Artifacts go to $OUT (default
# /tmp/qtc-host-activations).
#
# QTC_BASELINE=.../qtc adds a third form, `int8-base`: the same int8
# compile and run by another build of qtc (an earlier commit's), alternated
# with the others, so a kernel change is measured against its predecessor
# in the same session. HOST_CPUS="x86-64-v4-vnni x86-64-v4-amx" adds a form
# `int8@LEVEL` per level: the int8 compile with --host-cpu LEVEL (the
# others take qtc's default level).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
qtc="${QTC:-$root/build/bin/qtc}"
out="${OUT:-/tmp/qtc-host-activations}"
reps=3
prompt="${PROMPT_TOKENS:-32}"
files=()
for a in "$@"; do
  if [[ "$a" =~ ^[0-9]+$ ]]; then reps="$a"; else files+=("$a"); fi
done
[ "${#files[@]}" -gt 0 ] || { echo "usage: $0 FILE.gguf... [REPS]" >&2; exit 2; }
mkdir -p "$out"
forms=(float int8)
[ -n "${QTC_BASELINE:-}" ] && forms+=(int8-base)
for level in ${HOST_CPUS:-}; do forms+=("int8@$level"); done
# The qtc that builds and runs form $1, the activations it asks for and its
# --host-cpu flag (none: the default level).
qtc_of() { if [ "$1" = int8-base ]; then echo "$QTC_BASELINE"; else echo "$qtc"; fi; }
activations_of() { local a="${1%-base}"; echo "${a%@*}"; }
host_cpu_of() { case "$1" in *@*) echo "--host-cpu ${1#*@}" ;; esac; }
for f in "${files[@]}"; do
  for act in "${forms[@]}"; do
    art="$out/$(basename "$f" .gguf)-$act"
    rm -rf "$art"
    "$(qtc_of "$act")" compile "$f" --target host --quant keep \
      --fallback forbid --host-activations "$(activations_of "$act")" \
      $(host_cpu_of "$act") -o "$art" --quiet >/dev/null
  done
done
ids=$(python3 -c "print(','.join(str(100 + 7 * i) for i in range($prompt)))")
for ((rep = 1; rep <= reps; ++rep)); do
  for f in "${files[@]}"; do
    for act in "${forms[@]}"; do
      for threads in 1 2; do
        "$(qtc_of "$act")" run "$out/$(basename "$f" .gguf)-$act" --prompt-ids "$ids" \
          -n 33 --threads "$threads" --json |
          python3 -c "import json,sys; t=json.load(sys.stdin)['timings']; print('%s %s t%s prefill %.1f decode %.2f' % (sys.argv[1], sys.argv[2], sys.argv[3], t['prefill_tokens_per_s'], t['decode_tokens_per_s']))" \
            "$(basename "$f")" "$act" "$threads"
      done
    done
    if [ -n "${LLAMA_CPP_BIN:-}" ]; then
      for threads in 1 2; do
        "$LLAMA_CPP_BIN/llama-bench" -m "$f" -p "$prompt" -n 32 -t "$threads" -o json >"$out/pp-tg.json"
        "$LLAMA_CPP_BIN/llama-bench" -m "$f" -p 0 -n 32 -d "$prompt" -t "$threads" -o json >"$out/tg-d.json"
        python3 - "$out/pp-tg.json" "$out/tg-d.json" "$(basename "$f")" "$threads" "$prompt" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
pp = next(r["avg_ts"] for r in a if r["n_prompt"] > 0)
tg = next(r["avg_ts"] for r in a if r["n_gen"] > 0)
d = next(r["avg_ts"] for r in json.load(open(sys.argv[2])) if r["n_gen"] > 0)
p = sys.argv[5]
print("%s llama.cpp t%s pp%s %.1f tg32 %.2f tg32@d%s %.2f" % (sys.argv[3], sys.argv[4], p, pp, tg, p, d))
PY
      done
    fi
  done
done
