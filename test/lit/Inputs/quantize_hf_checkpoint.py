#!/usr/bin/env python3
"""Writes a GPTQ, AWQ or compressed-tensors checkpoint from a float one.

usage: quantize_hf_checkpoint.py SRC_DIR OUT_DIR
           --method gptq|gptq_v2|awq|ct|ct-fp8|fp8|ct-nvfp4 [--w4a4]
           [--bits 4|8] [--group G] [--sym] [--act-order] [--expect DIR]
           [--strategy channel|tensor|block] [--block BN,BK]
           [--scale-dtype F32|BF16] [--dynamic-act] [--nan-at N]
           [--drop NAME]...

SRC_DIR is a make-tiny-llama checkpoint (config.json, model.safetensors).
Every block linear is quantized round-to-nearest in groups of G input
columns (the head and everything else are copied) and stored by the
format's published conventions, independently of qtensor's reader:

  gptq     qweight I32 [K/p, N] (code k of column n in bits b*(k%p) of word
           k/p), qzeros I32 [G, N/p] likewise along N, holding zero - 1
           (checkpoint_format "gptq"; gptq_v2 holds the zero), scales F16
           [G, N], g_idx I32 [K]
  awq      qweight I32 [K, N/8] and qzeros I32 [G, N/8], nibble i of a word
           holding column 8c + (0, 2, 4, 6, 1, 3, 5, 7)[i]; scales F16 [G, N]
  ct       compressed-tensors pack-quantized: weight_packed I32 [N, K/p]
           with codes q + 2^(b-1), weight_zero_point I32 [N/p, G] packed
           along N the same way, weight_scale [N, G] in the model's dtype,
           weight_g_idx I32 [K] with --act-order, weight_shape I32 [2]
  ct-fp8   compressed-tensors float-quantized: weight F8_E4M3 [N, K] (OCP
           E4M3, nearest even, saturating at 448) under weight_scale F32
           [N, 1] (--strategy channel, amax / 448), [1] (tensor) or
           [ceil(N/BN), ceil(K/BK)] (block, --block BN,BK, default 128,128:
           one amax / 448 per block); --dynamic-act declares
           llm-compressor's FP8_DYNAMIC per-token activations; --nan-at N
           writes code 0x7f at flat index N of the first linear (a broken
           checkpoint)
  ct-nvfp4 compressed-tensors nvfp4-pack-quantized (llm-compressor's NVFP4A16,
           or NVFP4 with --w4a4, which declares FP4 activations and writes
           an input_global_scale): weight_packed U8 [N, K/2] (two E2M1 codes
           a byte, the even column low), weight_scale F8_E4M3 [N, K/16]
           (e4m3(amax / 6 * g) per group of 16), weight_global_scale F32 [1]
           (g = 448 * 6 / amax); the reconstruction e2m1(q) * f32(s / g)
  fp8      transformers' fine-grained FP8 (quant_method "fp8", DeepSeek-V3's
           format): weight F8_E4M3 [N, K] and weight_scale_inv
           [ceil(N/BN), ceil(K/BK)] (--block, the multiplier amax / 448 of
           each block, in --scale-dtype), weight_block_size [BN, BK]

--act-order orders input columns by decreasing mean |w| (as GPTQ orders
them by the Hessian's diagonal) and forms the groups in that order; g_idx
then maps each column to its group. --expect DIR writes each quantized
linear's s * (q - z) as float32 [N, K] to DIR/NAME.f32, computed here from
the codes, for comparison with what the compiled artifact reconstructs.
--drop NAME leaves the stored tensor NAME out (a broken checkpoint).
Stdlib only; the same arguments always give the same bytes.
"""
import argparse
import bisect
import json
import os
import shutil
import struct

AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]


def read_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], data[b:e])
    return tensors


def to_floats(dtype, blob):
    if dtype == "F32":
        return list(struct.unpack("<%df" % (len(blob) // 4), blob))
    if dtype == "F16":
        return list(struct.unpack("<%de" % (len(blob) // 2), blob))
    if dtype == "BF16":
        widened = b"".join(b"\0\0" + blob[i:i + 2]
                           for i in range(0, len(blob), 2))
        return list(struct.unpack("<%df" % (len(blob) // 2), widened))
    raise SystemExit("unsupported dtype " + dtype)


def round_to(dtype, x):
    """x rounded to the scale dtype (nearest even), as a Python float."""
    if dtype == "F16":
        return struct.unpack("<e", struct.pack("<e", x))[0]
    if dtype == "BF16":
        (u,) = struct.unpack("<I", struct.pack("<f", x))
        u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
        return struct.unpack("<f", struct.pack("<I", u))[0]
    return struct.unpack("<f", struct.pack("<f", x))[0]


def scale_bytes(dtype, values):
    if dtype == "F16":
        return struct.pack("<%de" % len(values), *values)
    if dtype == "BF16":
        f32 = struct.pack("<%df" % len(values), *values)
        return b"".join(f32[i + 2:i + 4] for i in range(0, len(f32), 4))
    return struct.pack("<%df" % len(values), *values)


def quantize(w, n, k, bits, group, sym, order, scale_dtype, zero_floor):
    """Codes [n][k] (unsigned, 0..2^b-1), scales and zeros [n][groups]."""
    top = (1 << bits) - 1
    groups = (k + group - 1) // group
    codes = [[0] * k for _ in range(n)]
    scales = [[0.0] * groups for _ in range(n)]
    zeros = [[0] * groups for _ in range(n)]
    for r in range(n):
        row = w[r * k:(r + 1) * k]
        for g in range(groups):
            cols = order[g * group:(g + 1) * group]
            vals = [row[c] for c in cols]
            if sym:
                z = 1 << (bits - 1)
                s = round_to(scale_dtype, max(abs(v) for v in vals) / (z - 1))
            else:
                lo, hi = min(min(vals), 0.0), max(max(vals), 0.0)
                s = round_to(scale_dtype, (hi - lo) / top)
                z = min(top, max(zero_floor, round(-lo / s))) if s else 8
            s = s or 1.0
            scales[r][g], zeros[r][g] = s, z
            for c, v in zip(cols, vals):
                codes[r][c] = min(top, max(0, round(v / s) + z))
    return codes, scales, zeros


def e4m3_values():
    """The 256 E4M3 (FN) values by code; NaN for 0x7f and 0xff."""
    vals = []
    for c in range(256):
        sign = -1.0 if c & 0x80 else 1.0
        e, m = (c >> 3) & 0xF, c & 7
        if e == 0xF and m == 7:
            vals.append(float("nan"))
        elif e == 0:
            vals.append(sign * m * 2.0 ** -9)
        else:
            vals.append(sign * (1 + m / 8.0) * 2.0 ** (e - 7))
    return vals


def e4m3_code(x, table):
    """The E4M3 code nearest x (ties to the even code), saturating at 448.
    Codes 0x00..0x7e hold the magnitudes in increasing order."""
    a = min(abs(x), 448.0)
    i = bisect.bisect_left(table, a, 0, 0x7F)  # table[i - 1] < a <= table[i]
    if i > 0 and (i == 0x7F or a - table[i - 1] < table[i] - a or
                  (a - table[i - 1] == table[i] - a and (i - 1) % 2 == 0)):
        i -= 1
    return i | (0x80 if x < 0 and i else 0)


E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
        -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def e2m1_code(x):
    """The E2M1 code nearest x (ties to the even mantissa), saturating at
    6; zero is code 0."""
    a = min(abs(x), 6.0)
    best = 0
    for i in range(1, 8):
        d, e = abs(a - E2M1[i]), abs(a - E2M1[best])
        if d < e or (d == e and i % 2 == 0):
            best = i
    return best | (8 if x < 0 and best else 0)


def pack_words(fields, bits):
    """Little-endian I32 words from consecutive fields, LSB first."""
    per = 32 // bits
    words = []
    for i in range(0, len(fields), per):
        v = 0
        for j, f in enumerate(fields[i:i + per]):
            v |= f << (bits * j)
        words.append(v)
    return struct.pack("<%dI" % len(words), *words)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--method", required=True,
                    choices=["gptq", "gptq_v2", "awq", "ct", "ct-fp8", "fp8",
                             "ct-nvfp4"])
    ap.add_argument("--w4a4", action="store_true")
    ap.add_argument("--strategy", choices=["channel", "tensor", "block"],
                    default="channel")
    ap.add_argument("--block", default="128,128")
    ap.add_argument("--scale-dtype", choices=["F32", "BF16"], default="F32")
    ap.add_argument("--dynamic-act", action="store_true")
    ap.add_argument("--nan-at", type=int)
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--group", type=int, default=64)
    ap.add_argument("--sym", action="store_true")
    ap.add_argument("--act-order", action="store_true")
    ap.add_argument("--expect")
    ap.add_argument("--drop", action="append", default=[])
    a = ap.parse_args()
    if a.method == "awq" and (a.sym or a.act_order or a.bits != 4):
        raise SystemExit("awq is asymmetric 4-bit without act-order")

    src = read_safetensors(os.path.join(a.src, "model.safetensors"))
    config = json.load(open(os.path.join(a.src, "config.json")))
    model_dtype = src["model.embed_tokens.weight"][0]
    scale_dtype = model_dtype if a.method == "ct" else "F16"
    if a.method == "fp8":
        a.strategy = "block"
    block_rows, block_cols = (int(v) for v in a.block.split(","))
    if a.method not in ("ct", "ct-fp8", "fp8", "ct-nvfp4") and model_dtype != "F16":
        raise SystemExit("gptq and awq checkpoints are f16: make the source "
                         "with make-tiny-llama --dtype f16")
    out = {}
    if a.expect:
        os.makedirs(a.expect, exist_ok=True)
    for name, (dtype, shape, blob) in sorted(src.items()):
        module = name[:-len(".weight")]
        if not (name.startswith("model.layers.") and name.endswith("_proj.weight")):
            out[name] = (dtype, shape, blob)
            continue
        n, k = shape
        w = to_floats(dtype, blob)
        if a.method == "ct-nvfp4":
            e4m3 = e4m3_values()
            amax = max(abs(v) for v in w) or 1.0
            g = round_to("F32", 448.0 * 6.0 / amax)
            codes, scale_codes, eff = [], [], []
            for r in range(n):
                for j in range(k // 16):
                    group = w[r * k + j * 16:r * k + j * 16 + 16]
                    c = e4m3_code(max(abs(v) for v in group) / 6.0 * g, e4m3)
                    scale_codes.append(c)
                    s_eff = round_to("F32", e4m3[c] / g)
                    eff.append(s_eff)
                    codes += [e2m1_code(v / s_eff if s_eff else 0.0)
                              for v in group]
            out[module + ".weight_packed"] = ("U8", [n, k // 2], bytes(
                codes[i] | codes[i + 1] << 4 for i in range(0, n * k, 2)))
            out[module + ".weight_scale"] = ("F8_E4M3", [n, k // 16],
                                             bytes(scale_codes))
            out[module + ".weight_global_scale"] = ("F32", [1], scale_bytes(
                "F32", [g]))
            if a.w4a4:
                out[module + ".input_global_scale"] = ("F32", [1], scale_bytes(
                    "F32", [round_to("F32", 448.0 * 6.0 / 4.0)]))
            if a.expect:
                vals = [eff[i // 16] * E2M1[codes[i]] for i in range(n * k)]
                with open(os.path.join(a.expect, name + ".f32"), "wb") as f:
                    f.write(struct.pack("<%df" % len(vals), *vals))
            continue
        if a.method in ("ct-fp8", "fp8"):
            table = e4m3_values()
            if a.strategy == "block":
                # One scale per [block_rows, block_cols] block, the last
                # ones partial.
                rb, cb = -(-n // block_rows), -(-k // block_cols)
                amax = [max(abs(w[r * k + c])
                            for r in range(i * block_rows,
                                           min(n, (i + 1) * block_rows))
                            for c in range(j * block_cols,
                                           min(k, (j + 1) * block_cols)))
                        for i in range(rb) for j in range(cb)]
                stored = [round_to(a.scale_dtype, (m or 1.0) / 448.0)
                          for m in amax]

                def scale_of(i):
                    r, c = divmod(i, k)
                    return stored[(r // block_rows) * cb + c // block_cols]
            else:
                amax = [max(abs(v) for v in w[r * k:(r + 1) * k])
                        for r in range(n)]
                if a.strategy == "tensor":
                    amax = [max(amax)] * n
                stored = [round_to("F32", (m or 1.0) / 448.0) for m in amax]

                def scale_of(i):
                    return stored[i // k]
            codes = [e4m3_code(w[i] / scale_of(i), table) for i in range(n * k)]
            if a.nan_at is not None and "nan-done" not in out:
                codes[a.nan_at] = 0x7F
                out["nan-done"] = None
            out[module + ".weight"] = ("F8_E4M3", [n, k], bytes(codes))
            if a.method == "fp8":
                out[module + ".weight_scale_inv"] = (a.scale_dtype, [rb, cb],
                                                     scale_bytes(a.scale_dtype,
                                                                 stored))
            elif a.strategy == "block":
                out[module + ".weight_scale"] = (a.scale_dtype, [rb, cb],
                                                 scale_bytes(a.scale_dtype,
                                                             stored))
            elif a.strategy == "channel":
                out[module + ".weight_scale"] = ("F32", [n, 1], scale_bytes(
                    "F32", stored))
            else:
                out[module + ".weight_scale"] = ("F32", [1], scale_bytes(
                    "F32", stored[:1]))
            if a.expect:
                vals = [scale_of(i) * table[codes[i]] for i in range(n * k)]
                with open(os.path.join(a.expect, name + ".f32"), "wb") as f:
                    f.write(struct.pack("<%df" % len(vals), *vals))
            continue
        if a.act_order:
            weight = [sum(abs(w[r * k + c]) for r in range(n)) for c in range(k)]
            order = sorted(range(k), key=lambda c: (-weight[c], c))
        else:
            order = list(range(k))
        # gptq v1 stores zero - 1 in a field of b bits: keep zeros >= 1.
        codes, scales, zeros = quantize(w, n, k, a.bits, a.group, a.sym, order,
                                        scale_dtype,
                                        1 if a.method == "gptq" else 0)
        groups = len(scales[0])
        g_idx = [0] * k
        for pos, c in enumerate(order):
            g_idx[c] = pos // a.group
        off = 1 << (a.bits - 1)
        if a.method in ("gptq", "gptq_v2"):
            per = 32 // a.bits
            qweight = b"".join(
                pack_words([codes[r][kw * per + j] for j in range(per)], a.bits)
                for kw in range(k // per) for r in range(n))
            minus = 1 if a.method == "gptq" else 0
            qzeros = b"".join(pack_words([zeros[r][g] - minus for r in range(n)],
                                         a.bits) for g in range(groups))
            out[module + ".qweight"] = ("I32", [k // per, n], qweight)
            out[module + ".qzeros"] = ("I32", [groups, n // per], qzeros)
            out[module + ".scales"] = ("F16", [groups, n], scale_bytes(
                "F16", [scales[r][g] for g in range(groups) for r in range(n)]))
            out[module + ".g_idx"] = ("I32", [k], struct.pack("<%di" % k, *g_idx))
        elif a.method == "awq":
            def interleave(fields):
                return [fields[c + AWQ_ORDER[j]]
                        for c in range(0, len(fields), 8) for j in range(8)]
            qweight = b"".join(pack_words(interleave(
                [codes[r][c] for r in range(n)]), 4) for c in range(k))
            qzeros = b"".join(pack_words(interleave(
                [zeros[r][g] for r in range(n)]), 4) for g in range(groups))
            out[module + ".qweight"] = ("I32", [k, n // 8], qweight)
            out[module + ".qzeros"] = ("I32", [groups, n // 8], qzeros)
            out[module + ".scales"] = ("F16", [groups, n], scale_bytes(
                "F16", [scales[r][g] for g in range(groups) for r in range(n)]))
        else:
            per = 32 // a.bits
            # q + 2^(b-1) of the signed code q = u - 2^(b-1): the field is u.
            packed = b"".join(pack_words(codes[r], a.bits) for r in range(n))
            out[module + ".weight_packed"] = ("I32", [n, k // per], packed)
            out[module + ".weight_scale"] = (scale_dtype, [n, groups], scale_bytes(
                scale_dtype, [scales[r][g] for r in range(n) for g in range(groups)]))
            if not a.sym:
                zp = b"".join(pack_words([zeros[r][g] for r in range(rb, rb + per)],
                                         a.bits)
                              for rb in range(0, n, per) for g in range(groups))
                out[module + ".weight_zero_point"] = ("I32", [n // per, groups], zp)
            if a.act_order:
                out[module + ".weight_g_idx"] = ("I32", [k], struct.pack(
                    "<%di" % k, *g_idx))
            out[module + ".weight_shape"] = ("I32", [2], struct.pack("<2i", n, k))
        if a.expect:
            vals = [scales[r][g_idx[c]] * (codes[r][c] - zeros[r][g_idx[c]])
                    for r in range(n) for c in range(k)]
            with open(os.path.join(a.expect, name + ".f32"), "wb") as f:
                f.write(struct.pack("<%df" % len(vals), *vals))

    if a.method in ("gptq", "gptq_v2"):
        qc = {"quant_method": "gptq", "bits": a.bits, "group_size": a.group,
              "desc_act": a.act_order, "sym": a.sym, "damp_percent": 0.01,
              "checkpoint_format": a.method if a.method == "gptq_v2" else "gptq"}
    elif a.method == "awq":
        qc = {"quant_method": "awq", "bits": 4, "group_size": a.group,
              "zero_point": True, "version": "gemm",
              "modules_to_not_convert": None}
    elif a.method == "ct-nvfp4":
        fp4 = {"num_bits": 4, "type": "float", "symmetric": True,
               "strategy": "tensor_group", "group_size": 16}
        qc = {"quant_method": "compressed-tensors",
              "format": "nvfp4-pack-quantized",
              "quantization_status": "compressed", "ignore": ["lm_head"],
              "config_groups": {"group_0": {
                  "targets": ["Linear"],
                  "input_activations": (dict(fp4, dynamic="local")
                                        if a.w4a4 else None),
                  "weights": dict(fp4, dynamic=False)}}}
    elif a.method == "fp8":
        qc = {"quant_method": "fp8", "fmt": "e4m3",
              "activation_scheme": "dynamic",
              "weight_block_size": [block_rows, block_cols]}
    elif a.method == "ct-fp8":
        act = ({"num_bits": 8, "type": "float", "symmetric": True,
                "strategy": "token", "dynamic": True}
               if a.dynamic_act else None)
        weights = {"num_bits": 8, "type": "float", "symmetric": True,
                   "strategy": a.strategy, "dynamic": False}
        if a.strategy == "block":
            weights["block_structure"] = [block_rows, block_cols]
        qc = {"quant_method": "compressed-tensors", "format": "float-quantized",
              "quantization_status": "compressed", "ignore": ["lm_head"],
              "config_groups": {"group_0": {
                  "targets": ["Linear"], "input_activations": act,
                  "weights": weights}}}
    else:
        qc = {"quant_method": "compressed-tensors", "format": "pack-quantized",
              "quantization_status": "compressed", "ignore": ["lm_head"],
              "config_groups": {"group_0": {
                  "targets": ["Linear"], "input_activations": None,
                  "weights": {"num_bits": a.bits, "type": "int",
                              "symmetric": a.sym, "strategy": "group",
                              "group_size": a.group, "dynamic": False,
                              "actorder": "group" if a.act_order else None}}}}
    config["quantization_config"] = qc

    os.makedirs(a.out, exist_ok=True)
    header, blobs, offset = {}, [], 0
    out.pop("nan-done", None)
    for name in sorted(set(out) - set(a.drop)):
        dtype, shape, blob = out[name]
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    for extra in ("tokenizer.json",):
        if os.path.exists(os.path.join(a.src, extra)):
            shutil.copy(os.path.join(a.src, extra), a.out)


if __name__ == "__main__":
    main()
