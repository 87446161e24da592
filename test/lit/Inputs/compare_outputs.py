#!/usr/bin/env python3
"""Compares two `qtc run --outputs` files (F32 safetensors), tensor by tensor.

Tensors whose names match --exact must be bit-identical; every other one
must be within --rel-l2 of the first file's (||b - a|| / ||a||). Prints one
summary line; exits 1, naming the tensor, on the first violation. Stdlib
only, so that it checks qtensor without sharing its reader.
"""
import argparse
import json
import math
import re
import struct
import sys


def read_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            sys.exit(f"{path}: tensor {name!r} is {info['dtype']}, not F32")
        lo, hi = info["data_offsets"]
        out[name] = (tuple(info["shape"]), data[base + lo:base + hi])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--exact", default="(?!)",
                    help="regex of tensor names that must match bit for bit")
    ap.add_argument("--rel-l2", type=float, required=True)
    args = ap.parse_args()
    a, b = read_f32(args.a), read_f32(args.b)
    if sorted(a) != sorted(b):
        sys.exit(f"different tensors: {sorted(set(a) ^ set(b))}")
    exact = close = 0
    worst = 0.0
    for name in sorted(a):
        (sa, ba), (sb, bb) = a[name], b[name]
        if sa != sb:
            sys.exit(f"{name}: shape {list(sa)} vs {list(sb)}")
        if re.search(args.exact, name):
            if ba != bb:
                sys.exit(f"{name}: expected the same bytes, they differ")
            exact += 1
            continue
        va = struct.unpack(f"<{len(ba) // 4}f", ba)
        vb = struct.unpack(f"<{len(bb) // 4}f", bb)
        num = math.sqrt(sum((y - x) ** 2 for x, y in zip(va, vb)))
        den = math.sqrt(sum(x * x for x in va)) or 1.0
        rel = num / den
        if not rel <= args.rel_l2:
            sys.exit(f"{name}: relative L2 {rel:.6f} exceeds {args.rel_l2}")
        worst = max(worst, rel)
        close += 1
    print(f"{len(a)} outputs: {exact} bit-identical, {close} within relative "
          f"L2 {args.rel_l2} (worst {worst:.4f})")


if __name__ == "__main__":
    main()
