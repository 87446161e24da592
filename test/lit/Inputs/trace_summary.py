#!/usr/bin/env python3
"""Summarizes a qtensor-select-layouts dispatch trace for FileCheck:
  ops N, entries E, selected S, fallbacks F
  topologies KIND COUNT, ...   (one count per op, only when placed)
"""
import collections
import json
import sys

trace = json.load(open(sys.argv[1]))
ops = {e["op"] for e in trace}
selected = sum(1 for e in trace if e.get("selected"))
fallbacks = sum(1 for e in trace if e.get("fallback"))
print(f"ops {len(ops)}, entries {len(trace)}, selected {selected}, "
      f"fallbacks {fallbacks}")
kinds = collections.Counter()
seen = set()
for e in trace:
    if e["op"] in seen:
        continue
    seen.add(e["op"])
    kinds[e["topology"]["kind"]] += 1
if set(kinds) - {"single"}:
    print("topologies " + ", ".join(f"{k} {kinds[k]}" for k in sorted(kinds)))
