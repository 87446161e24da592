#!/usr/bin/env python3
"""Generates the ggml decoder fixtures in test/unittests/Formats/GGUF/vectors/.

For each ggml type without a dequantized reference in the shared corpus, this
writes a few random raw blocks (<TYPE>.blocks) and their float32 values
(<TYPE>.f32, raw little-endian, ggml element order) as computed by the `gguf`
PyPI package's numpy dequantizers (gguf.quants.dequantize, the port of ggml's
dequantize_row_* that llama.cpp maintains).

Every output is cross-checked, bit for bit, against a second implementation in
this script that follows ggml-quants.c's C statement by statement in float32:
products are formed in C's order (e.g. Q6_K is (d * scale) * q, Q2_K/Q4_K/Q5_K
are (d*s)*q - (dmin*m), Q4_1/Q5_1 are q*d + m) and each operation is rounded
separately, which is what ggml's reference C computes where no multiply-add is
fused (x86-64 baseline builds). The two agree for every fixture; the script
aborts if they ever do not.

Scales are drawn as finite fp16 values (normal, subnormal, zero, negative and
large magnitudes); codes are uniform random bytes. NaN/Inf scales are left out
on purpose: NaN payload propagation is not specified by ggml, and the C++ tests
cover non-finite fp16 separately.

Usage:
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install gguf numpy
    /tmp/venv/bin/python scripts/gen_ggml_decoder_vectors.py [--check]

--check regenerates in memory and compares with the committed files.
Tested with gguf 0.19.0 and numpy 2.4.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test" / "unittests" / "Formats" / "GGUF" / "vectors"
SEED = 20250220

# type -> (block elements, block bytes, number of blocks to write)
TYPES = {
    "BF16": (1, 2, 256),
    "Q4_1": (32, 20, 8),
    "Q5_0": (32, 22, 8),
    "Q5_1": (32, 24, 8),
    "Q2_K": (256, 84, 3),
    "Q3_K": (256, 110, 3),
    "Q4_K": (256, 144, 3),
    "Q5_K": (256, 176, 3),
    "Q6_K": (256, 210, 3),
    "IQ4_NL": (32, 18, 8),
    "TQ1_0": (256, 54, 3),
    "TQ2_0": (256, 66, 3),
    # Appended after the others so that their fixtures (one RNG stream, in
    # this order) stay as they are.
    "IQ2_XXS": (256, 66, 4),
    "IQ2_XS": (256, 74, 4),
    "IQ2_S": (256, 82, 4),
    "IQ3_XXS": (256, 98, 4),
    "IQ3_S": (256, 110, 4),
    "IQ1_S": (256, 50, 4),
    "IQ1_M": (256, 56, 4),
    "IQ4_XS": (256, 136, 4),
}

# Byte offsets of the fp16 fields of each block (d, and m/dmin where present).
FP16_FIELDS = {
    "Q4_1": [0, 2],
    "Q5_0": [0],
    "Q5_1": [0, 2],
    "Q2_K": [80, 82],
    "Q3_K": [108],
    "Q4_K": [0, 2],
    "Q5_K": [0, 2],
    "Q6_K": [208],
    "IQ4_NL": [0],
    "TQ1_0": [52],
    "TQ2_0": [64],
    "IQ2_XXS": [0],
    "IQ2_XS": [0],
    "IQ2_S": [0],
    "IQ3_XXS": [0],
    "IQ3_S": [0],
    "IQ1_S": [0],
    "IQ1_M": [],  # d is spread over the scale words: set in make_blocks
    "IQ4_XS": [0],
}

KVALUES_IQ4NL = np.array(
    [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
    dtype=np.float32)

f32 = np.float32


def random_fp16(rng: np.random.Generator, n: int) -> np.ndarray:
    """Finite fp16 bit patterns covering normal, subnormal, zero and large."""
    kind = rng.choice(5, size=n, p=[0.6, 0.1, 0.05, 0.15, 0.1])
    sign = rng.integers(0, 2, size=n).astype(np.uint16) << 15
    mant = rng.integers(0, 1024, size=n).astype(np.uint16)
    exp = np.where(kind == 0, rng.integers(1, 16, size=n),          # < 2
          np.where(kind == 1, 0,                                     # subnormal
          np.where(kind == 2, 0,                                     # zero
          np.where(kind == 3, rng.integers(16, 31, size=n),          # large
                   rng.integers(9, 15, size=n))))).astype(np.uint16)  # ~0.01..1
    mant = np.where(kind == 2, 0, np.where((kind == 1) & (mant == 0), 1, mant))
    return (sign | (exp << 10) | mant).astype(np.uint16)


def make_blocks(name: str, rng: np.random.Generator) -> np.ndarray:
    block_elems, block_bytes, n_blocks = TYPES[name]
    if name == "BF16":
        # Random bf16 patterns, NaNs excluded (payload handling is separate).
        vals = rng.integers(0, 1 << 16, size=n_blocks, dtype=np.uint32)
        exp_all_ones = (vals & 0x7F80) == 0x7F80
        vals = np.where(exp_all_ones & ((vals & 0x7F) != 0), vals & 0xFF80, vals)
        return vals.astype("<u2").view(np.uint8).reshape(n_blocks, 2)
    raw = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
    for off in FP16_FIELDS[name]:
        h = random_fp16(rng, n_blocks).astype("<u2")
        raw[:, off:off + 2] = h.view(np.uint8).reshape(n_blocks, 2)
    if name == "IQ1_M":
        # The top nibble of scale word k holds bits 4k..4k+3 of d.
        d = random_fp16(rng, n_blocks)
        for k in range(4):
            off = 48 + 2 * k
            word = raw[:, off].astype(np.uint16) | (raw[:, off + 1].astype(np.uint16) << 8)
            word = (word & 0x0FFF) | (((d >> (4 * k)) & 0xF) << 12)
            raw[:, off] = (word & 0xFF).astype(np.uint8)
            raw[:, off + 1] = (word >> 8).astype(np.uint8)
    return raw


# --- ggml-quants.c, statement by statement, in float32 -----------------------

def h(b: np.ndarray, off: int) -> np.float32:
    return np.frombuffer(bytes(b[off:off + 2]), dtype="<f2")[0].astype(f32)


def grid_rows(cls) -> list[list[int]]:
    """A lattice table as ggml's integer bytes (the data comes from gguf)."""
    cls.init_grid()
    return np.asarray(cls.grid).reshape(cls.grid_shape).astype(np.int64).tolist()


KSIGNS = list(quants.IQ2_XXS.ksigns)


def u16(b: list[int], off: int) -> int:
    return b[off] | b[off + 1] << 8


def u32(b: list[int], off: int) -> int:
    return u16(b, off) | u16(b, off + 2) << 16


def sgn(signs: int, j: int) -> np.float32:
    return f32(-1.0) if (signs >> j) & 1 else f32(1.0)


def iq_reference(name: str, b: list[int], bb: np.ndarray) -> list[np.float32]:
    y: list[np.float32] = []
    if name == "IQ2_XXS":
        grid = grid_rows(quants.IQ2_XXS)
        d = h(bb, 0)
        for ib32 in range(8):
            aux0, aux1 = b[2 + 8 * ib32: 6 + 8 * ib32], u32(b, 6 + 8 * ib32)
            db = f32(f32(d * f32(f32(0.5) + f32(aux1 >> 28))) * f32(0.25))
            for l in range(4):
                signs = KSIGNS[(aux1 >> (7 * l)) & 127]
                for j in range(8):
                    y.append(f32(db * f32(grid[aux0[l]][j])) * sgn(signs, j))
    elif name in ("IQ2_XS", "IQ2_S"):
        d = h(bb, 0)
        for ib32 in range(8):
            if name == "IQ2_XS":
                sc = b[66 + ib32]
            else:
                sc = b[74 + ib32]
            db = [f32(f32(d * f32(f32(0.5) + f32(sc & 0xF))) * f32(0.25)),
                  f32(f32(d * f32(f32(0.5) + f32(sc >> 4))) * f32(0.25))]
            for l in range(4):
                if name == "IQ2_XS":
                    q = u16(b, 2 + 2 * (4 * ib32 + l))
                    row, signs = grid_rows(quants.IQ2_XS)[q & 511], KSIGNS[q >> 9]
                else:
                    qh = b[66 + ib32]
                    index = b[2 + 4 * ib32 + l] | ((qh << (8 - 2 * l)) & 0x300)
                    row, signs = grid_rows(quants.IQ2_S)[index], b[34 + 4 * ib32 + l]
                for j in range(8):
                    y.append(f32(db[l // 2] * f32(row[j])) * sgn(signs, j))
    elif name == "IQ3_XXS":
        grid = grid_rows(quants.IQ3_XXS)
        d = h(bb, 0)
        for ib32 in range(8):
            aux = u32(b, 66 + 4 * ib32)
            db = f32(f32(d * f32(f32(0.5) + f32(aux >> 28))) * f32(0.5))
            for l in range(4):
                signs = KSIGNS[(aux >> (7 * l)) & 127]
                g1, g2 = grid[b[2 + 8 * ib32 + 2 * l]], grid[b[2 + 8 * ib32 + 2 * l + 1]]
                for j in range(4):
                    y.append(f32(db * f32(g1[j])) * sgn(signs, j))
                for j in range(4):
                    y.append(f32(db * f32(g2[j])) * sgn(signs, j + 4))
    elif name == "IQ3_S":
        grid = grid_rows(quants.IQ3_S)
        d = h(bb, 0)
        qs, qh, signs, scales = 2, 66, 74, 106
        for ib32 in range(0, 8, 2):
            sc = b[scales + ib32 // 2]
            for half, s4 in enumerate((sc & 0xF, sc >> 4)):
                db = f32(d * f32(1 + 2 * s4))
                for l in range(4):
                    i1 = b[qs + 2 * l] | ((b[qh + half] << (8 - 2 * l)) & 256)
                    i2 = b[qs + 2 * l + 1] | ((b[qh + half] << (7 - 2 * l)) & 256)
                    for j in range(4):
                        y.append(f32(db * f32(grid[i1][j])) * sgn(b[signs + l], j))
                    for j in range(4):
                        y.append(f32(db * f32(grid[i2][j])) * sgn(b[signs + l], j + 4))
                qs += 8
                signs += 4
            qh += 2
    elif name == "IQ1_S":
        grid = grid_rows(quants.IQ1_S)
        d = h(bb, 0)
        for ib in range(8):
            qh = u16(b, 34 + 2 * ib)
            dl = f32(d * f32(2 * ((qh >> 12) & 7) + 1))
            delta = f32(-0.125) if qh & 0x8000 else f32(0.125)
            for l in range(4):
                row = grid[b[2 + 4 * ib + l] | (((qh >> (3 * l)) & 7) << 8)]
                for j in range(8):
                    y.append(f32(dl * f32(f32(row[j]) + delta)))
    elif name == "IQ1_M":
        grid = grid_rows(quants.IQ1_S)
        sc = [u16(b, 48 + 2 * k) for k in range(4)]
        dbits = (sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000)
        d = np.array([dbits], dtype="<u2").view("<f2")[0].astype(f32)
        for ib in range(8):
            dl1 = f32(d * f32(2 * ((sc[ib // 2] >> (6 * (ib % 2))) & 7) + 1))
            dl2 = f32(d * f32(2 * ((sc[ib // 2] >> (6 * (ib % 2) + 3)) & 7) + 1))
            qs, qh = b[4 * ib: 4 * ib + 4], b[32 + 2 * ib: 34 + 2 * ib]
            idx = [qs[0] | ((qh[0] << 8) & 0x700), qs[1] | ((qh[0] << 4) & 0x700),
                   qs[2] | ((qh[1] << 8) & 0x700), qs[3] | ((qh[1] << 4) & 0x700)]
            delta = [f32(-0.125) if x else f32(0.125)
                     for x in (qh[0] & 0x08, qh[0] & 0x80, qh[1] & 0x08, qh[1] & 0x80)]
            for l in range(4):
                dl = dl1 if l < 2 else dl2
                for j in range(8):
                    y.append(f32(dl * f32(f32(grid[idx[l]][j]) + delta[l])))
    elif name == "IQ4_XS":
        d = h(bb, 0)
        scales_h = u16(b, 2)
        for ib in range(8):
            ls = ((b[4 + ib // 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4)
            dl = f32(d * f32(ls - 32))
            qs = b[8 + 16 * ib: 24 + 16 * ib]
            y.extend(f32(dl * KVALUES_IQ4NL[q & 0xF]) for q in qs)
            y.extend(f32(dl * KVALUES_IQ4NL[q >> 4]) for q in qs)
    else:
        raise ValueError(name)
    return y


def c_reference(name: str, blocks: np.ndarray) -> np.ndarray:
    out: list[np.float32] = []
    for b in blocks:
        b = [int(x) for x in b]
        bb = np.array(b, dtype=np.uint8)
        if name == "BF16":
            v = np.array([(b[0] | b[1] << 8) << 16], dtype=np.uint32).view(f32)[0]
            out.append(v)
        elif name in ("Q4_1", "Q5_1", "Q5_0"):
            d = h(bb, 0)
            m = h(bb, 2) if name != "Q5_0" else None
            qh = 0
            if name == "Q5_0":
                qh = int.from_bytes(bytes(b[2:6]), "little")
                qs = b[6:22]
            elif name == "Q5_1":
                qh = int.from_bytes(bytes(b[4:8]), "little")
                qs = b[8:24]
            else:
                qs = b[4:20]
            y = [f32(0)] * 32
            for j in range(16):
                xh0 = ((qh >> j) << 4) & 0x10
                xh1 = (qh >> (j + 12)) & 0x10
                x0 = (qs[j] & 0x0F) | (xh0 if name != "Q4_1" else 0)
                x1 = (qs[j] >> 4) | (xh1 if name != "Q4_1" else 0)
                if name == "Q5_0":
                    y[j] = f32(x0 - 16) * d
                    y[j + 16] = f32(x1 - 16) * d
                else:
                    y[j] = f32(f32(x0) * d) + m
                    y[j + 16] = f32(f32(x1) * d) + m
            out.extend(y)
        elif name == "IQ4_NL":
            d = h(bb, 0)
            qs = b[2:18]
            y = [f32(0)] * 32
            for j in range(16):
                y[j] = d * KVALUES_IQ4NL[qs[j] & 0xF]
                y[j + 16] = d * KVALUES_IQ4NL[qs[j] >> 4]
            out.extend(y)
        elif name == "Q2_K":
            scales, q = b[0:16], b[16:80]
            d, dmin = h(bb, 80), h(bb, 82)
            is_ = 0
            qo = 0
            for n in range(0, 256, 128):
                shift = 0
                for j in range(4):
                    for half in range(2):
                        sc = scales[is_]
                        is_ += 1
                        dl = d * f32(sc & 0xF)
                        ml = dmin * f32(sc >> 4)
                        for l in range(16):
                            out.append(f32(dl * f32((q[qo + l + 16 * half] >> shift) & 3)) - ml)
                    shift += 2
                qo += 32
        elif name == "Q3_K":
            hm, q, sc12 = b[0:32], b[32:96], b[96:108]
            d_all = h(bb, 108)
            aux = [int.from_bytes(bytes(sc12[4 * i:4 * i + 4]), "little") for i in range(3)]
            km1, km2 = 0x03030303, 0x0F0F0F0F
            tmp = aux[2]
            a = [0] * 4
            a[2] = ((aux[0] >> 4) & km2) | (((tmp >> 4) & km1) << 4)
            a[3] = ((aux[1] >> 4) & km2) | (((tmp >> 6) & km1) << 4)
            a[0] = (aux[0] & km2) | (((tmp >> 0) & km1) << 4)
            a[1] = (aux[1] & km2) | (((tmp >> 2) & km1) << 4)
            scales = np.array(a, dtype="<u4").view(np.int8)
            is_, m, qo = 0, 1, 0
            for n in range(0, 256, 128):
                shift = 0
                for j in range(4):
                    for half in range(2):
                        dl = d_all * f32(int(scales[is_]) - 32)
                        is_ += 1
                        for l in range(16):
                            idx = l + 16 * half
                            v = ((q[qo + idx] >> shift) & 3) - (0 if hm[idx] & m else 4)
                            out.append(dl * f32(v))
                    shift += 2
                    m <<= 1
                qo += 32
        elif name in ("Q4_K", "Q5_K"):
            d, dmin = h(bb, 0), h(bb, 2)
            sc = b[4:16]

            def get_scale_min(j: int) -> tuple[int, int]:
                if j < 4:
                    return sc[j] & 63, sc[j + 4] & 63
                return ((sc[j + 4] & 0xF) | ((sc[j - 4] >> 6) << 4),
                        (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4))

            if name == "Q4_K":
                ql, qh = b[16:144], None
            else:
                qh, ql = b[16:48], b[48:176]
            u1, u2, qo = 1, 2, 0
            for j in range(4):
                s1, m1_ = get_scale_min(2 * j)
                s2, m2_ = get_scale_min(2 * j + 1)
                d1, m1 = d * f32(s1), dmin * f32(m1_)
                d2, m2 = d * f32(s2), dmin * f32(m2_)
                for l in range(32):
                    v = (ql[qo + l] & 0xF) + ((16 if qh[l] & u1 else 0) if qh else 0)
                    out.append(f32(d1 * f32(v)) - m1)
                for l in range(32):
                    v = (ql[qo + l] >> 4) + ((16 if qh[l] & u2 else 0) if qh else 0)
                    out.append(f32(d2 * f32(v)) - m2)
                qo += 32
                u1 <<= 2
                u2 <<= 2
        elif name == "Q6_K":
            ql, qh = b[0:128], b[128:192]
            sc = np.array(b[192:208], dtype=np.uint8).view(np.int8)
            d = h(bb, 208)
            y = [f32(0)] * 256
            for half in range(2):
                lo, ho, so, yo = 64 * half, 32 * half, 8 * half, 128 * half
                for l in range(32):
                    is_ = l // 16
                    q1 = ((ql[lo + l] & 0xF) | (((qh[ho + l] >> 0) & 3) << 4)) - 32
                    q2 = ((ql[lo + l + 32] & 0xF) | (((qh[ho + l] >> 2) & 3) << 4)) - 32
                    q3 = ((ql[lo + l] >> 4) | (((qh[ho + l] >> 4) & 3) << 4)) - 32
                    q4 = ((ql[lo + l + 32] >> 4) | (((qh[ho + l] >> 6) & 3) << 4)) - 32
                    y[yo + l] = f32(d * f32(sc[so + is_])) * f32(q1)
                    y[yo + l + 32] = f32(d * f32(sc[so + is_ + 2])) * f32(q2)
                    y[yo + l + 64] = f32(d * f32(sc[so + is_ + 4])) * f32(q3)
                    y[yo + l + 96] = f32(d * f32(sc[so + is_ + 6])) * f32(q4)
            out.extend(y)
        elif name == "TQ1_0":
            qs, qh = b[0:48], b[48:52]
            d = h(bb, 52)
            pow3 = [1, 3, 9, 27, 81, 243]

            def trit(byte: int, n: int) -> int:
                q = (byte * pow3[n]) & 0xFF
                return (q * 3) >> 8

            for n in range(5):
                for m in range(32):
                    out.append(f32(trit(qs[m], n) - 1) * d)
            for n in range(5):
                for m in range(16):
                    out.append(f32(trit(qs[32 + m], n) - 1) * d)
            for n in range(4):
                for j in range(4):
                    out.append(f32(trit(qh[j], n) - 1) * d)
        elif name == "TQ2_0":
            qs = b[0:64]
            d = h(bb, 64)
            for j in range(0, 64, 32):
                for l in range(4):
                    for m in range(32):
                        out.append(f32(((qs[j + m] >> (2 * l)) & 3) - 1) * d)
        elif name.startswith("IQ") and name != "IQ4_NL":
            out.extend(iq_reference(name, b, bb))
        else:
            raise ValueError(name)
    return np.array(out, dtype=f32)


def generate() -> dict[str, tuple[bytes, bytes]]:
    rng = np.random.default_rng(SEED)
    result = {}
    with np.errstate(over="ignore"):
        for name in TYPES:
            blocks = make_blocks(name, rng)
            qtype = getattr(T, name)
            ref = quants.dequantize(blocks.reshape(-1), qtype).astype(f32).reshape(-1)
            mine = c_reference(name, blocks)
            if ref.shape != mine.shape or ref.view(np.uint32).tolist() != mine.view(np.uint32).tolist():
                diff = np.nonzero(ref.view(np.uint32) != mine.view(np.uint32))[0]
                raise SystemExit(f"{name}: gguf-py and the C-order reference differ "
                                 f"at {diff[:8].tolist()}")
            result[name] = (blocks.tobytes(), ref.astype("<f4").tobytes())
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed fixtures instead of writing")
    args = ap.parse_args()
    data = generate()
    index = {}
    for name, (blocks, values) in data.items():
        block_elems, block_bytes, n_blocks = TYPES[name]
        index[name] = {
            "blocks_file": f"{name}.blocks",
            "values_file": f"{name}.f32",
            "n_blocks": n_blocks,
            "n_values": n_blocks * block_elems,
            "blocks_sha256": hashlib.sha256(blocks).hexdigest(),
            "values_sha256": hashlib.sha256(values).hexdigest(),
        }
    meta = {
        "generator": "scripts/gen_ggml_decoder_vectors.py",
        "seed": SEED,
        "reference": "gguf.quants.dequantize (gguf-py), cross-checked bit for bit "
                     "against a statement-by-statement float32 port of ggml-quants.c",
        "types": index,
    }
    meta_text = json.dumps(meta, indent=1, sort_keys=True) + "\n"
    if args.check:
        ok = True
        for name, (blocks, values) in data.items():
            for fname, content in ((f"{name}.blocks", blocks), (f"{name}.f32", values)):
                path = OUT / fname
                if not path.exists() or path.read_bytes() != content:
                    print(f"differs: {path}")
                    ok = False
        if (OUT / "index.json").read_text() != meta_text:
            print("differs: index.json")
            ok = False
        print("fixtures match" if ok else "fixtures differ")
        return 0 if ok else 1
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (blocks, values) in data.items():
        (OUT / f"{name}.blocks").write_bytes(blocks)
        (OUT / f"{name}.f32").write_bytes(values)
    (OUT / "index.json").write_text(meta_text)
    print(f"wrote {2 * len(data) + 1} files to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
