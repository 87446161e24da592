"""The Python package over the C API: usage: python_test.py CKPT OUT_DIR."""
import sys

import qtensor

ckpt, out = sys.argv[1], sys.argv[2]
print("qtensor", qtensor.version())
result = qtensor.compile(ckpt, out, target="host", quant="w4a16:g64")
assert result["verified"], result
assert qtensor.verify(out)["ok"]
with qtensor.Model(out) as model:
    tokens, logits = model.generate([1, 2, 3], max_tokens=4)
    assert 1 <= len(tokens) <= 4 and len(logits) == model.vocab_size, tokens
    assert max(range(len(logits)), key=logits.__getitem__) == tokens[0]
try:
    qtensor.compile(ckpt, out, target="sm_99")
    raise SystemExit("an unknown target was accepted")
except qtensor.Error as e:
    assert "sm_99" in str(e), e
try:
    qtensor.Model("/nonexistent-artifact")
    raise SystemExit("a missing artifact loaded")
except qtensor.Error as e:
    print("refused:", str(e)[:60])
print("python: ok")
