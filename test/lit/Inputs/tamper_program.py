"""Rewrites an artifact's program.json and updates the manifest's size and
SHA-256 of the file, so only the program's own checks can catch it.

usage: tamper_program.py ARTIFACT_DIR [FIELD=VALUE ...]

Without fields, layer 0's attention kernel symbol is made to name an f32
output (a kernel that would write 4-byte values into the 2-byte buffer the
runtime passes). A FIELD is a dotted path into the program ("embed",
"kernels.embed", "layers.0.q.bias": a list by its index); VALUE replaces
the string there.
"""
import hashlib
import json
import os
import sys

root = sys.argv[1]
manifest_path = os.path.join(root, "manifest.json")
manifest = json.load(open(manifest_path))
entry = next(f for f in manifest["files"] if f["role"] == "program")
path = os.path.join(root, entry["path"])
program = json.load(open(path))
if len(sys.argv) == 2:
    symbol = program["layers"][0]["attention"]
    assert symbol.endswith("_f16"), symbol
    program["layers"][0]["attention"] = symbol[: -len("_f16")] + "_f32"
for change in sys.argv[2:]:
    field, value = change.split("=", 1)
    *parents, last = field.split(".")
    node = program
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    assert isinstance(node[last], str), field
    node[last] = value
data = (json.dumps(program, indent=1, sort_keys=True) + "\n").encode()
os.chmod(path, 0o644)
open(path, "wb").write(data)
entry["bytes"] = len(data)
entry["sha256"] = hashlib.sha256(data).hexdigest()
json.dump(manifest, open(manifest_path, "w"), indent=2, sort_keys=True)
