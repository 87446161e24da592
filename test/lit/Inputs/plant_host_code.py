"""Replaces an artifact's host kernel library with another shared object and
updates the manifest's size and SHA-256 of the file, as an attacker who
controls the whole artifact would: every hash the artifact carries agrees,
so only refusing to load the artifact's code protects the process.

usage: plant_host_code.py ARTIFACT_DIR OBJECT.so
"""
import hashlib
import json
import os
import sys

root, planted = sys.argv[1], sys.argv[2]
manifest_path = os.path.join(root, "manifest.json")
manifest = json.load(open(manifest_path))
entry = next(f for f in manifest["files"]
             if f["role"] == "kernel" and f["path"].endswith(".so"))
data = open(planted, "rb").read()
path = os.path.join(root, entry["path"])
os.chmod(path, 0o644)
open(path, "wb").write(data)
entry["bytes"] = len(data)
entry["sha256"] = hashlib.sha256(data).hexdigest()
json.dump(manifest, open(manifest_path, "w"), indent=2, sort_keys=True)
