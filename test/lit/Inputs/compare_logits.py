"""Relative L2 distance of two `qtc run --logits-out` files.

usage: compare_logits.py A B (--at-most R | --at-least R)

Prints `relative L2 X` (||b - a|| / ||a||) and exits 1 when X is not within
the bound. Stdlib only, so it checks qtensor without sharing its reader.
"""
import math
import struct
import sys


def floats(path):
    data = open(path, "rb").read()
    if not data or len(data) % 4:
        sys.exit("%s: %d bytes is not a whole number of float32" % (path, len(data)))
    return struct.unpack("<%df" % (len(data) // 4), data)


def main():
    a_path, b_path, how, bound = sys.argv[1:5]
    a, b = floats(a_path), floats(b_path)
    if len(a) != len(b):
        sys.exit("%d logits against %d" % (len(a), len(b)))
    norm = math.sqrt(sum(x * x for x in a))
    rel = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))) / norm
    print("relative L2 %.4f" % rel)
    ok = rel <= float(bound) if how == "--at-most" else rel >= float(bound)
    if not ok:
        sys.exit("relative L2 %.4f is not %s %s" % (rel, how[2:], bound))


if __name__ == "__main__":
    main()
