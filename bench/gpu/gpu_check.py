#!/usr/bin/env python3
"""GPU check of the generated kernels (issue 5, item 4): the dynamic-T decode
GEMV and the prefill tensor-core GEMM, called exactly as docs/kernel-abi.md
says the runtime calls them; and the decode GEMV of IQ4_NL codes (issue 13:
4-bit indices into ggml's kvalues_iq4nl, f16 scales per 32), of MXFP4 and
of NVFP4 (issue 17: E2M1 codes under f32 scales decoded from e8m0 per 32 or
ue4m3 per 16) on the same shapes, so their times read against the W4
affine kernel's; Q4_K's decode GEMV and tensor-core GEMM with its scale
levels decoded at load (f32) and as stored (u8 codes under an f16 per 256,
decoded in registers); and (gpu_families.py) the mixed 2/4/16 decode GEMV
and the W8A8 activation quantizer and GEMV, at T = 1, 4 and 16.

Three steps, so the PTX is built where qopt is and run where the GPU is:

  prepare OUT     (CPU, in the lit suite) qopt generates each instance and
                  lowers it to sm_90 PTX (OUT/<instance>.ptx); the script
                  checks every entry's .entry symbol and parameter count in
                  the PTX against the ABI and writes OUT/plan.json (entries
                  and their T ranges, arguments, launch geometry).
  selfcheck       (CPU, pure Python, in the lit suite) the Python packers
                  against hand-checked words and against the layouts' defining
                  read rules (plain bit stream; mma.sync B fragments).
  run OUT --results DIR
                  (H100/H200 with torch and cupy) for each instance: random
                  W4 weights quantized and packed in Python, the PTX loaded
                  with cupy.RawModule, parity against a float64 torch
                  evaluation of x W_hat^T with the kernel's error bound as the
                  tolerance, timing of decode (T = 1, 4, 16) and prefill
                  (T = 512, 2048) against torch fp16 F.linear (cuBLAS) on the
                  dequantized weight, and the device copy bandwidth (cupy
                  memcpy). Writes DIR/gpu-check-<date>.md and .json.

  python3 bench/gpu/gpu_check.py prepare /tmp/qt-gpu --qopt build/bin/qopt
  python3 bench/gpu/gpu_check.py run /tmp/qt-gpu --results docs/benchmarks
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_families  # noqa: E402 - beside this script
from kernel_abi import cdiv, memref_params, param_count  # noqa: E402

SHAPES = (4096, 8192, 16384)  # N = K
FAMILY_SHAPES = (4096, 8192)  # the mixed 2/4/16 and W8A8 kernels (gpu_families.py)
BITS, GROUP, ACT, OUT_DTYPE = 4, 128, "f16", "f16"
# (family, code kind, group, scale dtype): W4 symmetric in groups of 128
# for both families, IQ4_NL's decode GEMV in ggml's groups of 32, and the
# FP4 decode GEMVs (MXFP4: E2M1 per 32, NVFP4: per 16; f32 scales, the
# decoded e8m0 / ue4m3 bytes), and Q4_K's decode GEMV (unsigned codes, an
# f32 scale and min per 32: its two levels decoded at load); and the
# tensor-core GEMM over the same Q4_K, IQ4_NL and NVFP4 forms. Q4_K again
# with its levels as stored (a fifth field, the super-group: u8 scale and
# min codes per 32 under an f16 d and dmin per 256, decoded in registers;
# issue 13), for both kernels.
VARIANTS = (("decode_gemv", "sym", GROUP, ACT), ("prefill_mma", "sym", GROUP, ACT),
            ("decode_gemv", "iq4_nl", 32, ACT), ("decode_gemv", "e2m1", 32, "f32"),
            ("decode_gemv", "e2m1", 16, "f32"), ("decode_gemv", "min", 32, "f32"),
            ("prefill_mma", "min", 32, "f32"), ("prefill_mma", "iq4_nl", 32, ACT),
            ("prefill_mma", "e2m1", 16, "f32"),
            ("decode_gemv", "min", 32, "f32", 256), ("prefill_mma", "min", 32, "f32", 256))
SUPER_TYPE = "f16"
KVALUES_IQ4NL = (-127, -104, -83, -65, -49, -35, -22, -10,
                 1, 13, 25, 38, 53, 69, 89, 113)
E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
        0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
DECODE_T = (1, 4, 16)
PREFILL_T = (512, 2048)

# --- ABI (docs/kernel-abi.md, include/qtensor/Conversion/KernelBuilders.h) --

DECODE_WARPS_PER_BLOCK = 4
DECODE_BUCKETS = ((1, 1), (2, 2), (3, 4), (5, 8), (9, 16))  # symbol suffix _t<max>
PREFILL_ROWS_PER_BLOCK, PREFILL_COLS_PER_BLOCK, PREFILL_THREADS = 32, 256, 256


def nested_option(super_group):
    """The spec option of nested levels (u8 codes, f16 second level)."""
    return "sup%du8%s" % (super_group, SUPER_TYPE) if super_group else ""


def spec_text(family, n, k, kind="sym", group=GROUP, scale=ACT, super_group=0):
    return "%s:w%d:g%d:%s:%s:tdyn:n%d:k%d:%so%s%s" % (
        family, BITS, group, kind, ACT, n, k,
        "" if scale == ACT else "sc%s:" % scale, OUT_DTYPE,
        ":" + nested_option(super_group) if super_group else "")


def instance_name(family, n, k, kind="sym", group=GROUP, scale=ACT, super_group=0):
    # QuantKernelSpec::name(); only used to find the file, which is checked.
    return "qt_%s_w%d%s_g%d_%s_tdyn_n%d_k%d_s1_%so%s%s" % (
        family, BITS, kind, group, ACT, n, k,
        "" if scale == ACT else "sc%s_" % scale, OUT_DTYPE,
        "_" + nested_option(super_group) if super_group else "")


def w_shape(layout, n, k):
    if layout == "decode_gemv":  # [N, 4C], C = 16-byte chunks per row
        return [n, 4 * cdiv(k, 128 // BITS)]
    # [P, 128 S]: P panel rows of 256 / b features, S k16 steps
    return [cdiv(n, 256 // BITS), 128 * cdiv(k, 16)]


def plan_kernel(family, n, k, kind="sym", group=GROUP, scale=ACT, super_group=0):
    name = instance_name(family, n, k, kind, group, scale, super_group)
    groups = cdiv(k, group)
    args = [{"name": "x", "dtype": ACT, "shape": [-1, k]},
            {"name": "w", "dtype": "i32", "shape": w_shape(family, n, k)}]
    if super_group:  # x, w, s, s2, z, z2, y (docs/kernel-abi.md)
        supers = [n, k // super_group]
        args += [{"name": "s", "dtype": "u8", "shape": [n, groups]},
                 {"name": "s2", "dtype": SUPER_TYPE, "shape": supers},
                 {"name": "z", "dtype": "u8", "shape": [n, groups]},
                 {"name": "z2", "dtype": SUPER_TYPE, "shape": supers}]
    else:
        args.append({"name": "s", "dtype": scale, "shape": [n, groups]})
        if kind == "asym":
            args.append({"name": "z", "dtype": "u8", "shape": [n, groups]})
        elif kind == "min":  # x = s q + m, m in the scale dtype
            args.append({"name": "z", "dtype": scale, "shape": [n, groups]})
    args.append({"name": "y", "dtype": OUT_DTYPE, "shape": [-1, n]})
    if family == "decode_gemv":
        entries = [{"symbol": "%s_t%d" % (name, hi), "tokens": [lo, hi]}
                   for lo, hi in DECODE_BUCKETS]
        launch = {"grid": [cdiv(n, DECODE_WARPS_PER_BLOCK), 1, 1],
                  "block": [32 * DECODE_WARPS_PER_BLOCK, 1, 1], "shared_bytes": 0}
    else:
        entries = [{"symbol": name, "tokens": [1, None]}]
        launch = {"grid": [1, cdiv(n, PREFILL_COLS_PER_BLOCK), 1],
                  "block": [PREFILL_THREADS, 1, 1], "shared_bytes": 0,
                  "token_axis": 0, "tokens_per_block": PREFILL_ROWS_PER_BLOCK}
    return {"instance": name,
            "spec": spec_text(family, n, k, kind, group, scale, super_group),
            "file": name + ".ptx",
            "layout": family, "phase": "decode" if family == "decode_gemv" else "prefill",
            "n": n, "k": k, "bits": BITS, "group_size": group, "signed": kind == "sym",
            "codebook": kind if kind not in ("sym", "asym", "min") else None,
            "min_zero": kind == "min",
            "activation": ACT, "scale": scale, "output": OUT_DTYPE, "bias": False,
            "entries": entries, "args": args,
            "params": param_count(args),
            "launch": launch, "split_k": 1, "zero_output": False,
            "super_group": super_group}


def ptx_entry_params(text):
    """{entry symbol: parameter count} of a PTX file."""
    out = {}
    for m in re.finditer(r"\.visible\s+\.entry\s+(\w+)\s*\(([^)]*)\)", text):
        out[m.group(1)] = len(re.findall(r"\.param\s", m.group(2)))
    return out


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    kernels = [plan_kernel(v[0], nk, nk, *v[1:]) for v in VARIANTS for nk in SHAPES]
    kernels += gpu_families.plans(FAMILY_SHAPES)
    for kern in kernels:
        files = kern.get("files") or [kern["file"]]
        # One qopt run per spec into its own directory: the files it writes
        # are the instance's (W8A8 writes its quantizer and its GEMV).
        with tempfile.TemporaryDirectory(dir=args.out) as tmp:
            cmd = [args.qopt, "-",
                   "--qtensor-generate-kernels=target=%s kernels=%s" % (args.chip, kern["spec"]),
                   "--qtensor-lower-to-ptx=chip=%s ptx-dir=%s" % (args.chip, tmp)]
            run = subprocess.run(cmd, input="module {}\n", capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit("prepare: qopt failed for %s:\n%s" % (kern["spec"], run.stderr))
            written = sorted(os.listdir(tmp))
            if written != sorted(files):
                sys.exit("prepare: %s: expected %s, qopt wrote %s" % (kern["spec"], files, written))
            for name in files:
                os.replace(os.path.join(tmp, name), os.path.join(args.out, name))
        for name in files:
            with open(os.path.join(args.out, name), encoding="utf-8") as f:
                text = f.read()
            if ".target " + args.chip not in text:
                sys.exit("prepare: %s is not for %s" % (name, args.chip))
            found = ptx_entry_params(text)
            want = {e["symbol"]: e.get("params", kern.get("params")) for e in kern["entries"]
                    if e.get("file", name) == name}
            if found != want:
                sys.exit("prepare: %s: PTX entries/params %s, the ABI says %s" % (name, found, want))
    with open(os.path.join(args.out, "plan.json"), "w") as f:
        json.dump({"chip": args.chip, "kernels": kernels}, f, indent=1)
    print("prepared %d instances (%d entries) for %s in %s" % (
        len(kernels), sum(len(k["entries"]) for k in kernels), args.chip, args.out))


# --- Packing (port of lib/Numerics/KernelLayout.cpp) ------------------------
# position() uses only + - * // %, so it runs on Python ints (selfcheck) and
# elementwise on torch int64 tensors (run).

def geometry(layout, bits, rows, cols):
    """(padded rows, padded cols, chunks per row, words)."""
    if layout == "decode_gemv":
        pr, pc = rows, cdiv(cols, 128 // bits) * (128 // bits)
        chunks = pc // (128 // bits)
    else:
        pr, pc = cdiv(rows, 256 // bits) * (256 // bits), cdiv(cols, 16) * 16
        chunks = pc // 16
    return pr, pc, chunks, pr * pc * bits // 32


def position(layout, bits, geom, row, col):
    """(32-bit word index, bit shift) of logical code (row, col)."""
    _, padded_cols, chunks, _ = geom
    per_word = 32 // bits
    if layout == "decode_gemv":
        return row * (padded_cols // per_word) + col // per_word, (col % per_word) * bits
    panel_rows = 256 // bits
    slab, n_in_panel = row // panel_rows, row % panel_rows
    k_step, k_in_step = col // 16, col % 16
    tile = n_in_panel // 8
    high_register = k_in_step // 8  # b1 holds k0 + 8, k0 + 9
    kk = k_in_step % 8
    lane = (n_in_panel % 8) * 4 + kk // 2
    pair_half = kk % 2
    word = (slab * chunks + k_step) * 128 + lane * 4
    if bits == 4:
        word = word + tile // 2
        shift = 4 * ((tile % 2) * 2 + high_register + 4 * pair_half)
    else:
        word = word + tile
        shift = 8 * (high_register + 2 * pair_half)
    return word, shift


def pack_py(layout, bits, signed, codes):
    """Row-major list-of-lists codes -> list of unsigned 32-bit words."""
    rows, cols = len(codes), len(codes[0])
    geom = geometry(layout, bits, rows, cols)
    offset = 1 << (bits - 1) if signed else 0
    words = [0] * geom[3]
    for r in range(rows):
        for c in range(cols):
            field = codes[r][c] + offset
            assert 0 <= field < (1 << bits), (r, c, codes[r][c])
            w, s = position(layout, bits, geom, r, c)
            words[w] |= field << s
    return words


def pack_torch(layout, bits, signed, codes, shape):
    """codes: int tensor [N, K] on the GPU -> int32 tensor of `shape`."""
    import torch
    rows, cols = codes.shape
    geom = geometry(layout, bits, rows, cols)
    offset = 1 << (bits - 1) if signed else 0
    words = torch.zeros(geom[3], dtype=torch.int64, device=codes.device)
    col = torch.arange(cols, dtype=torch.int64, device=codes.device)
    step = max(1, (1 << 24) // cols)
    for r0 in range(0, rows, step):
        r = torch.arange(r0, min(rows, r0 + step), dtype=torch.int64, device=codes.device)
        w, s = position(layout, bits, geom, r[:, None], col[None, :])
        field = codes[r0:r0 + len(r)].to(torch.int64) + offset
        # Every field has its own bits, so adding is OR-ing.
        words.index_add_(0, w.reshape(-1), (field << s).reshape(-1))
    words = torch.where(words >= 1 << 31, words - (1 << 32), words).to(torch.int32)
    return words.view(*shape)


# --- selfcheck: the packers against the layouts' definitions ---------------

def selfcheck(_args):
    import random
    rng = random.Random(5)
    checks = 0
    # Hand-checked words. decode_gemv W4 sym, K = 3 padded to 32: fields
    # 1+8, -1+8, 7+8 = 9, 7, 15 at bits 0, 4, 8 of word 0; row 1 starts at word 4.
    got = pack_py("decode_gemv", 4, True, [[1, -1, 7], [0, 0, -8]])
    assert got == [0xF79, 0, 0, 0, 0x088, 0, 0, 0], [hex(v) for v in got]
    # prefill_mma W4 unsigned, one code 5 at (n 9, k 10): tile 1, lane
    # (9 % 8) * 4 + (10 % 8) / 2 = 5, b1 (k0 + 8), low half -> word 5*4 + 0,
    # pair 3 -> nibble 3 (shift 12). W8: word 5*4 + 1, byte 1 (shift 8).
    codes = [[0] * 16 for _ in range(64)]
    codes[9][10] = 5
    got = pack_py("prefill_mma", 4, False, codes)
    assert len(got) == 128 and got[20] == 5 << 12 and sum(got) == 5 << 12
    got = pack_py("prefill_mma", 8, False, [row[:] for row in codes[:32]])
    assert len(got) == 128 and got[21] == 5 << 8 and sum(got) == 5 << 8
    checks += 3
    for bits in (4, 8):
        for signed in (True, False):
            lo = -(1 << (bits - 1)) if signed else 0
            off = -lo
            for rows, cols in ((3, 37), (70, 40), (33, 17)):
                codes = [[rng.randint(lo, lo + (1 << bits) - 1) for _ in range(cols)]
                         for _ in range(rows)]
                mask = (1 << bits) - 1
                # decode_gemv: each row a plain LSB-first bit stream, zero-padded
                # to 16-byte chunks.
                words = pack_py("decode_gemv", bits, signed, codes)
                per_row = len(words) // rows
                assert per_row % 4 == 0 and per_row * 32 // bits >= cols
                for r in range(rows):
                    stream = sum(w << (32 * i) for i, w in enumerate(words[r * per_row:(r + 1) * per_row]))
                    want = sum((codes[r][c] + off) << (bits * c) for c in range(cols))
                    assert stream == want, ("decode_gemv", bits, signed, r)
                # prefill_mma: read it as mma.sync m16n8k16 reads B (lane l:
                # k0 = 2 (l % 4), n = 8 tile + l / 4; b0 = k0, k0+1; b1 = +8).
                words = pack_py("prefill_mma", bits, signed, codes)
                pr = cdiv(rows, 256 // bits) * (256 // bits)
                steps = cdiv(cols, 16)
                seen = {}
                for panel in range(len(words) // 128):
                    slab, step = divmod(panel, steps)
                    for lane in range(32):
                        k0, nl = 2 * (lane % 4), lane // 4
                        for j in range(4):
                            word = words[panel * 128 + lane * 4 + j]
                            if bits == 4:  # nibbles i, i + 4 = pair i
                                for i in range(4):
                                    tile, hi = 2 * j + i // 2, i % 2
                                    for half in range(2):
                                        seen[(slab * 64 + 8 * tile + nl, 16 * step + k0 + 8 * hi + half)] = \
                                            (word >> (4 * (i + 4 * half))) & mask
                            else:  # bytes 0, 2 = b0 pair; 1, 3 = b1 pair
                                for byte in range(4):
                                    hi, half = byte % 2, byte // 2
                                    seen[(slab * 32 + 8 * j + nl, 16 * step + k0 + 8 * hi + half)] = \
                                        (word >> (8 * byte)) & mask
                assert len(seen) == pr * steps * 16, "prefill_mma: fields not a bijection"
                for (n, k), field in seen.items():
                    want = codes[n][k] + off if n < rows and k < cols else 0
                    assert field == want, ("prefill_mma", bits, signed, n, k, field, want)
                checks += 2
    print("selfcheck: %d packer checks passed" % checks)


# --- run (GPU) --------------------------------------------------------------

def quantize_w4_sym(w, group):
    """Symmetric signed per-group codes and f16 scales; W_hat in f32."""
    import torch
    n, k = w.shape
    qmax = (1 << (BITS - 1)) - 1
    wg = w.view(n, k // group, group)
    scale = (wg.abs().amax(-1) / qmax).clamp_min(1e-4).half()
    q = torch.round(wg / scale.float()[..., None]).clamp(-qmax - 1, qmax)
    deq = (q * scale.float()[..., None]).view(n, k)
    return q.view(n, k).to(torch.int32), scale.contiguous(), deq


def quantize_iq4nl(w, group):
    """IQ4_NL-style codes: per group an f16 scale d = absmax / 127 and each
    weight's nearest entry of kvalues_iq4nl; W_hat = d * table[q] in f32."""
    import torch
    n, k = w.shape
    table = torch.tensor(KVALUES_IQ4NL, dtype=torch.float32, device=w.device)
    wg = w.view(n, k // group, group)
    scale = (wg.abs().amax(-1) / 127.0).clamp_min(1e-6).half()
    q = torch.empty(n, k // group, group, dtype=torch.int64, device=w.device)
    step = max(1, (1 << 26) // (k * len(KVALUES_IQ4NL)))  # rows per 256 MiB
    for r0 in range(0, n, step):
        scaled = wg[r0:r0 + step] / scale[r0:r0 + step].float()[..., None]
        q[r0:r0 + step] = (scaled[..., None] - table).abs().argmin(-1)
    deq = (table[q] * scale.float()[..., None]).view(n, k)
    return q.view(n, k).to(torch.int32), scale.contiguous(), deq


def quantize_e2m1(w, group):
    """FP4 codes: per group an f32 scale, 2^(floor(log2 amax) - 2) (MXFP4's
    e8m0, groups of 32) or amax / 6 rounded to e4m3 (NVFP4's ue4m3, groups
    of 16), and each weight's nearest E2M1 value; W_hat = s * E2M1[q]."""
    import torch
    n, k = w.shape
    table = torch.tensor(E2M1, dtype=torch.float32, device=w.device)
    wg = w.view(n, k // group, group)
    amax = wg.abs().amax(-1).clamp_min(2.0 ** -100)
    if group == 32:
        scale = torch.exp2(torch.floor(torch.log2(amax)) - 2)
    else:
        scale = (amax / 6).clamp(2.0 ** -9, 448).to(torch.float8_e4m3fn).float()
    q = torch.empty(n, k // group, group, dtype=torch.int64, device=w.device)
    step = max(1, (1 << 26) // (k * len(E2M1)))  # rows per 256 MiB
    for r0 in range(0, n, step):
        scaled = wg[r0:r0 + step] / scale[r0:r0 + step][..., None]
        q[r0:r0 + step] = (scaled[..., None] - table).abs().argmin(-1)
    deq = (table[q] * scale[..., None]).view(n, k)
    return q.view(n, k).to(torch.int32), scale.contiguous(), deq


def quantize_w4_min(w, group):
    """Q4_K-style codes: unsigned 0..15 per group with an f32 scale
    (max - min) / 15 and an f32 min (x = s q + m, m <= 0); W_hat in f32, as
    the kernel's one fma rounds it."""
    import torch
    n, k = w.shape
    wg = w.view(n, k // group, group)
    lo = wg.amin(-1).clamp_max(0.0)
    hi = wg.amax(-1).clamp_min(0.0)
    scale = ((hi - lo) / 15).clamp_min(1e-8)
    q = torch.round((wg - lo[..., None]) / scale[..., None]).clamp(0, 15)
    deq = (q.double() * scale.double()[..., None] + lo.double()[..., None]).float()
    return (q.view(n, k).to(torch.int32), scale.contiguous(), lo.contiguous(),
            deq.view(n, k))


def quantize_w4_nested(w, group, super_group):
    """Q4_K as the file stores it: unsigned 0..15 codes per group, a 6-bit
    scale code and min code per group under an f16 d and dmin per
    super-group; s = d * code and m = -(dmin * code) are exact in f32, as
    the kernel decodes them. Returns the codes, the four stored levels, and
    s, m and W_hat (s q + m in f32, as the kernel's one fma rounds it)."""
    import torch
    n, k = w.shape
    per = super_group // group
    wg = w.view(n, k // group, group)
    want_m = (-wg.amin(-1)).clamp_min(0.0)  # m = -min >= 0 wanted
    want_s = (wg.amax(-1) + want_m) / 15
    d = (want_s.view(n, -1, per).amax(-1) / 63).clamp_min(1e-8).half()
    dmin = (want_m.view(n, -1, per).amax(-1) / 63).clamp_min(1e-8).half()
    sc = torch.round(want_s.view(n, -1, per) / d.float()[..., None]).clamp(0, 63)
    mc = torch.round(want_m.view(n, -1, per) / dmin.float()[..., None]).clamp(0, 63)
    s = (d.float()[..., None] * sc).view(n, k // group)
    m = -(dmin.float()[..., None] * mc).view(n, k // group)
    q = torch.round((wg - m[..., None]) / s.clamp_min(1e-8)[..., None]).clamp(0, 15)
    deq = (q.double() * s.double()[..., None] + m.double()[..., None]).float()
    levels = {"s": sc.view(n, -1).to(torch.uint8).contiguous(), "s2": d.contiguous(),
              "z": mc.view(n, -1).to(torch.uint8).contiguous(), "z2": dmin.contiguous()}
    return q.view(n, k).to(torch.int32), levels, s.contiguous(), m.contiguous(), deq.view(n, k)


def entry_for(kern, t):
    for e in kern["entries"]:
        lo, hi = e["tokens"]
        if lo <= t and (hi is None or t <= hi):
            return e["symbol"]
    raise ValueError("%s has no entry for T = %d" % (kern["instance"], t))


def time_us(fn, iters):
    import torch
    for _ in range(3):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) * 1e3 / iters


def error_bound(kern, t_abs):
    """Per-element tolerance on |y - x W_hat^T| (docs/kernel-abi.md,
    docs/codegen.md), t_abs = sum_k |x_k W_hat_nk| (for the tensor-core
    GEMM with a min, sum_k |x_k| (|s q| + 2 |m|): its x-sums and its m terms
    round too), before the f16 output rounding."""
    k = kern["k"]
    # A weight decoded to s q + m in f32 (the reference W_hat) is one more
    # rounding away from the exact one.
    inexact = 1 if kern.get("min_zero") else 0
    if kern["layout"] == "decode_gemv":
        chunks = cdiv(k, 128 // BITS)
        acc = (128 // BITS + 2 * cdiv(chunks, 32) + 5 + 1 + inexact) * 2.0 ** -24
    else:  # tensor cores truncate when they add: u = 2^-23
        groups = cdiv(k, kern["group_size"])
        acc = (kern["group_size"] + 2 * groups + 1 + inexact) * 2.0 ** -23
    return acc * t_abs


def run(args):
    import cupy
    import torch
    import torch.nn.functional as F
    torch.backends.cuda.matmul.allow_tf32 = False
    with open(os.path.join(args.out, "plan.json")) as f:
        plan = json.load(f)
    dev = torch.device("cuda")
    gpu = torch.cuda.get_device_name(0)
    cupy.cuda.Device(torch.cuda.current_device()).use()
    stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    result = {"date": datetime.date.today().isoformat(), "command": " ".join(sys.argv),
              "gpu": gpu, "chip": plan["chip"], "torch": torch.__version__,
              "cupy": cupy.__version__, "parity": [], "timing": []}
    failed = False
    with stream:
        # Device copy bandwidth: 4 GiB device-to-device memcpy, read + write.
        nbytes = 4 << 30
        src, dst = cupy.empty(nbytes, cupy.uint8), cupy.empty(nbytes, cupy.uint8)
        copy_us = time_us(lambda: dst.data.copy_from_device_async(src.data, nbytes, stream), 10)
        result["copy_gbs"] = 2 * nbytes / copy_us / 1e3
        del src, dst
        cupy.get_default_memory_pool().free_all_blocks()
        torch.manual_seed(0)
        for kern in plan["kernels"]:
            family = kern.get("family")
            if family in ("mixed2416_gemv", "w8a8_gemv"):
                # One instance's failure is recorded; the sweep goes on.
                try:
                    if family == "mixed2416_gemv":
                        ok = gpu_families.run_mixed2416(kern, args.out, time_us, result, dev)
                    else:
                        ok = gpu_families.run_w8a8(kern, args.out, time_us, result, dev,
                                                   pack_torch)
                except Exception as e:  # noqa: BLE001 - reported, not hidden
                    ok = False
                    result["parity"].append({"instance": kern["instance"],
                                             "entry": kern["instance"], "t": kern["t"],
                                             "max_abs_err": float("nan"),
                                             "max_err_over_bound": float("nan"),
                                             "ok": False, "error": repr(e)})
                failed |= not ok
                torch.cuda.empty_cache()
                continue
            n, k = kern["n"], kern["k"]
            w = torch.randn(n, k, device=dev) * 0.05
            group = kern["group_size"]
            m = None
            levels = {}
            if kern.get("super_group"):
                q, levels, s, m, deq = quantize_w4_nested(w, group, kern["super_group"])
            elif kern.get("min_zero"):
                q, s, m, deq = quantize_w4_min(w, group)
            else:
                quantize = {"iq4_nl": quantize_iq4nl, "e2m1": quantize_e2m1}.get(
                    kern.get("codebook"), quantize_w4_sym)
                q, s, deq = quantize(w, group)
            wshape = next(a["shape"] for a in kern["args"] if a["name"] == "w")
            packed = pack_torch(kern["layout"], BITS, kern["signed"], q, wshape)
            deq64, abs64 = deq.double(), deq.double().abs()
            bound64 = abs64
            if m is not None and kern["layout"] == "prefill_mma":
                # |s q| + 2 |m| per weight: the GEMM adds s (x . q) and
                # m (sum x) per group, each rounded on its own.
                qs = q.double().view(n, k // group, group) * s.double()[..., None]
                bound64 = (qs.abs() + 2 * m.double().abs()[..., None]).view(n, k)
            deq16 = deq.half()  # cuBLAS's weight (rounded: q s may need 14 bits)
            module = cupy.RawModule(path=os.path.join(args.out, kern["file"]))
            launch = kern["launch"]
            phase_t = DECODE_T if kern["phase"] == "decode" else PREFILL_T
            # Parity at every entry of the decode GEMV and at a prefill T with
            # a partial token block.
            checks = ([hi for _, hi in DECODE_BUCKETS] + [3] if kern["phase"] == "decode"
                      else [37] + list(phase_t))
            for t in sorted(set(checks) | set(phase_t)):
                x = torch.randn(t, k, device=dev).half()
                y = torch.full((t, n), float("nan"), device=dev).half()
                tensors = {"x": x, "w": packed, "s": s, "z": m, "y": y, **levels}
                params = []
                for a in kern["args"]:
                    sizes = [t if v == -1 else v for v in a["shape"]]
                    params += memref_params(tensors[a["name"]], sizes)
                assert len(params) == kern["params"]
                grid = list(launch["grid"])
                if "token_axis" in launch:
                    grid[launch["token_axis"]] = cdiv(t, launch["tokens_per_block"])
                symbol = entry_for(kern, t)
                fn = module.get_function(symbol)
                call = lambda: fn(tuple(grid), tuple(launch["block"]), tuple(params),
                                  shared_mem=launch["shared_bytes"])
                call()
                torch.cuda.synchronize()
                ref = x.double() @ deq64.T
                acc_bound = error_bound(kern, x.double().abs() @ bound64.T)
                bound = acc_bound + 2.0 ** -11 * (ref.abs() + acc_bound)  # f16 rounding of y
                err = (y.double() - ref).abs()
                ratio = (err / bound).max().item()  # NaN (y not written) fails
                ok = ratio <= 1.0
                failed |= not ok
                result["parity"].append({"instance": kern["instance"], "entry": symbol, "t": t,
                                         "max_abs_err": err.max().item(),
                                         "max_err_over_bound": ratio, "ok": ok})
                if t not in phase_t:
                    continue
                us = time_us(call, 200 if t <= 16 else 20)
                blas_us = time_us(lambda: F.linear(x, deq16), 200 if t <= 16 else 20)
                # What the kernel reads: codes and every qparam operand (f32
                # scales are 4 bytes in memory; an artifact stores the e8m0
                # / ue4m3 byte).
                weight_bytes = sum(tensors[a["name"]].numel() * tensors[a["name"]].element_size()
                                   for a in kern["args"] if a["name"] not in ("x", "y"))
                result["timing"].append({
                    "instance": kern["instance"], "phase": kern["phase"],
                    "codes": "%s g%d%s" % (
                        kern.get("codebook") or ("w4 min" if kern.get("min_zero") else "w4 sym"),
                        kern["group_size"],
                        " nested %d" % kern["super_group"] if kern.get("super_group") else ""),
                    "n": n, "k": k, "t": t,
                    "kernel_us": us, "cublas_fp16_us": blas_us, "speedup": blas_us / us,
                    "weight_gbs": weight_bytes / us / 1e3,
                    "tflops": 2.0 * t * n * k / us / 1e6})
            del w, q, s, m, levels, deq, deq64, abs64, bound64, deq16, packed, module
            torch.cuda.empty_cache()
    os.makedirs(args.results, exist_ok=True)
    stem = os.path.join(args.results, "gpu-check-" + result["date"])
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown(result))
    print(markdown(result))
    sys.exit(1 if failed else 0)


def markdown(r):
    lines = ["# GPU check: decode GEMV and prefill GEMM", "",
             "- date: %s" % r["date"], "- command: `%s`" % r["command"],
             "- GPU: %s (PTX for %s, JIT by the driver); torch %s, cupy %s" % (
                 r["gpu"], r["chip"], r["torch"], r["cupy"]),
             "- device copy bandwidth (4 GiB memcpy, read + write): %.0f GB/s" % r["copy_gbs"],
             "- weights: W4 symmetric in groups of 128 and IQ4_NL (4-bit indices into "
             "kvalues_iq4nl) in groups of 32 with f16 scales; MXFP4 (E2M1, groups of 32) "
             "and NVFP4 (E2M1, groups of 16) with f32 scales; mixed 2/4/16 (G1 64, G2 16, "
             "replacement outliers) and W8A8 (int8 per group of 128, int8 activations per "
             "token); f16 activations and output",
             "", "## Parity (float64 reference of x W_hat^T; bound: docs/kernel-abi.md)", "",
             "| entry | T | max abs err | max err / bound | |", "|---|---|---|---|---|"]
    for p in r["parity"]:
        lines.append("| %s | %d | %.3e | %.3f | %s |" % (
            p["entry"], p["t"], p["max_abs_err"], p["max_err_over_bound"],
            "ok" if p["ok"] else "FAIL" + (": " + p["error"] if "error" in p else "")))
    lines += ["", "## Timing (cuBLAS: torch fp16 F.linear on W_hat)", "",
              "| phase | codes | N = K | T | kernel us | cuBLAS us | speedup | weight GB/s | % of copy BW | TFLOP/s |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for t in r["timing"]:
        lines.append("| %s | %s | %d | %d | %.1f | %.1f | %.2fx | %.0f | %.0f%% | %.1f |" % (
            t["phase"], t.get("codes", ""), t["n"], t["t"], t["kernel_us"], t["cublas_fp16_us"], t["speedup"],
            t["weight_gbs"], 100 * t["weight_gbs"] / r["copy_gbs"], t["tflops"]))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("out")
    p.add_argument("--qopt", default="qopt")
    p.add_argument("--chip", default="sm_90", choices=["sm_80", "sm_90"])
    sub.add_parser("selfcheck")
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--results", required=True)
    args = parser.parse_args()
    {"prepare": prepare, "selfcheck": selfcheck, "run": run}[args.step](args)


if __name__ == "__main__":
    main()
