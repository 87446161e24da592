"""Prints the CPU levels an artifact records: `cpu LEVEL` for each distinct
level of its host kernel entries (manifest.json), then `host_cpu LEVEL` from
its decoder program."""
import glob
import json
import os
import sys

art = sys.argv[1]
manifest = json.load(open(os.path.join(art, "manifest.json")))
for level in sorted({k["cpu"] for k in manifest["kernels"] if "cpu" in k}):
    print("cpu", level)
(program,) = glob.glob(os.path.join(art, "program.*.json"))
print("host_cpu", json.load(open(program))["host_cpu"])
