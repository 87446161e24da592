#!/usr/bin/env python3
"""Writes the PTX held in the first #gpu.object `assembly` string of an MLIR
module (read from stdin) to the file named by argv[1], decoding MLIR's \\XX
string escapes. Fails loudly when there is no such string."""
import re
import sys

text = sys.stdin.read()
match = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', text)
if not match:
    sys.exit("extract_ptx: no gpu.object assembly string in the input")
raw = match.group(1)
out = bytearray()
i = 0
while i < len(raw):
    if raw[i] == "\\":
        nxt = raw[i + 1]
        if nxt in '"\\':
            out += nxt.encode()
            i += 2
        else:
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
    else:
        out += raw[i].encode()
        i += 1
with open(sys.argv[1], "wb") as f:
    f.write(bytes(out))
