"""The mixed 2/4/16 decode GEMV and the W8A8 kernels in bench/gpu/gpu_check.py.

Their operands are not a QuantKernelSpec's codes and qparams, so their plans
and their runs live here (issue 17):

  mixed2416_gemv  include/qtensor/Conversion/Mixed2416Kernel.h: random
                  streams (half the groups W4, replacement outliers in W2
                  groups), W_hat from the family's reference decoding in
                  float64, parity within the bound of
                  test/unittests/Conversion/Mixed2416GemvHostTest.cpp.
  w8a8_gemv       include/qtensor/Conversion/W8A8Kernel.h: the per-token
                  activation quantizer, checked bit for bit against the
                  arithmetic of include/qtensor/Numerics/ActivationQuant.h,
                  then the integer GEMV against the exact integer product
                  (float64 holds every group sum exactly), within the bound
                  of test/unittests/Conversion/W8A8GemvHostTest.cpp.

Both time the kernel against torch fp16 F.linear on W_hat. A failure of
one instance is recorded and the sweep goes on.
"""

from kernel_abi import cdiv, memref_params, param_count

MIXED_G1, MIXED_G2 = 64, 16
W8A8_GROUP = 128
STATIC_T = (1, 4, 16)
WARPS_PER_BLOCK = 4


def _launch(rows):
    return {"grid": [cdiv(rows, WARPS_PER_BLOCK), 1, 1],
            "block": [32 * WARPS_PER_BLOCK, 1, 1], "shared_bytes": 0}


def plan_mixed2416(n, k, t):
    name = "qt_mixed2416_gemv_g%d_z%d_f16_t%d_n%d_k%d_of16" % (MIXED_G1, MIXED_G2, t, n, k)
    g = k // MIXED_G1
    args = [{"name": "x", "dtype": "f16", "shape": [t, k]},
            {"name": "map", "dtype": "i8", "shape": [cdiv(n * g, 8)]},
            {"name": "w2", "dtype": "i32", "shape": [-2]},
            {"name": "w4", "dtype": "i32", "shape": [-2]},
            {"name": "rw4", "dtype": "i32", "shape": [n + 1]},
            {"name": "qs", "dtype": "i8", "shape": [n, g]},
            {"name": "z1", "dtype": "i8", "shape": [n, g]},
            {"name": "s2", "dtype": "f16", "shape": [n // MIXED_G2, g]},
            {"name": "z2", "dtype": "f16", "shape": [n // MIXED_G2, g]},
            {"name": "sv", "dtype": "f16", "shape": [-2]},
            {"name": "sc", "dtype": "i32", "shape": [-2]},
            {"name": "sr", "dtype": "i32", "shape": [n + 1]},
            {"name": "y", "dtype": "f16", "shape": [t, n]}]
    params = param_count(args)
    return {"family": "mixed2416_gemv", "instance": name,
            "spec": "mixed2416_gemv:g%d:z%d:f16:t%d:n%d:k%d:of16" % (MIXED_G1, MIXED_G2, t, n, k),
            "files": [name + ".ptx"], "phase": "decode", "n": n, "k": k, "t": t,
            "entries": [{"symbol": name, "file": name + ".ptx", "tokens": [t, t],
                         "params": params}],
            # -2: the stream's length, known when the streams are built.
            "args": args, "params": params, "launch": _launch(n)}


def plan_w8a8(n, k, t):
    gemv = "qt_w8a8_gemv_w8sym_a8sym_g%d_f16_t%d_n%d_k%d_of16" % (W8A8_GROUP, t, n, k)
    quant = "qt_quantize_a8sym_f16_t%d_k%d" % (t, k)
    g = k // W8A8_GROUP
    qargs = [{"name": "x", "dtype": "f16", "shape": [t, k]},
             {"name": "xq", "dtype": "i8", "shape": [t, k]},
             {"name": "sx", "dtype": "f32", "shape": [t]}]
    gargs = [{"name": "xq", "dtype": "i8", "shape": [t, k]},
             {"name": "sx", "dtype": "f32", "shape": [t]},
             {"name": "w", "dtype": "i32", "shape": [n, k // 4]},
             {"name": "s", "dtype": "f16", "shape": [n, g]},
             {"name": "y", "dtype": "f16", "shape": [t, n]}]
    return {"family": "w8a8_gemv", "instance": gemv,
            "spec": "w8a8_gemv:g%d:sym:sym:f16:t%d:n%d:k%d:of16" % (W8A8_GROUP, t, n, k),
            "files": sorted([quant + ".ptx", gemv + ".ptx"]), "phase": "decode",
            "n": n, "k": k, "t": t, "group_size": W8A8_GROUP,
            "entries": [{"symbol": quant, "file": quant + ".ptx", "tokens": [t, t],
                         "params": param_count(qargs)},
                        {"symbol": gemv, "file": gemv + ".ptx", "tokens": [t, t],
                         "params": param_count(gargs)}],
            "quantizer_args": qargs, "args": gargs,
            "quantizer_launch": _launch(t), "launch": _launch(n)}


def plans(shapes):
    return ([plan_mixed2416(nk, nk, t) for nk in shapes for t in STATIC_T] +
            [plan_w8a8(nk, nk, t) for nk in shapes for t in STATIC_T])


# --- run (GPU) --------------------------------------------------------------

def _call(module, symbol, launch, args, tensors):
    params = []
    for a in args:
        sizes = [tensors[a["name"]].numel() if v == -2 else v for v in a["shape"]]
        params += memref_params(tensors[a["name"]], sizes)
    fn = module.get_function(symbol)
    return lambda: fn(tuple(launch["grid"]), tuple(launch["block"]), tuple(params),
                      shared_mem=launch["shared_bytes"])


def _pack_fields(codes, bits):
    """[groups, G1] codes -> int32 words, lsb first (the streams' order)."""
    import torch
    per_byte = 8 // bits
    c = codes.to(torch.int32).view(codes.shape[0], -1, per_byte)
    byte = torch.zeros(c.shape[:2], dtype=torch.int32, device=codes.device)
    for i in range(per_byte):
        byte |= c[..., i] << (bits * i)
    return byte.to(torch.uint8).reshape(-1).view(torch.int32)


def _mixed_streams(n, k, dev):
    """Random streams that pass verifyMixed2416Streams, and W_hat."""
    import torch
    g, g1 = k // MIXED_G1, MIXED_G1
    w4 = torch.rand(n, g, device=dev) < 0.5
    codes = torch.where(w4[..., None], torch.randint(0, 16, (n, g, g1), device=dev),
                        torch.randint(0, 4, (n, g, g1), device=dev))
    flat_w4, flat_codes = w4.reshape(-1), codes.reshape(-1, g1)
    bits = torch.nn.functional.pad(flat_w4.to(torch.int32), (0, (-flat_w4.numel()) % 8))
    weights = 1 << torch.arange(8, dtype=torch.int32, device=dev)
    pmap = (bits.view(-1, 8) * weights).sum(1).to(torch.uint8).view(torch.int8)
    qs = torch.randint(0, 256, (n, g), device=dev)
    z1 = torch.where(w4, torch.randint(0, 16, (n, g), device=dev),
                     torch.randint(0, 4, (n, g), device=dev))
    s2 = (torch.ldexp(1 + torch.rand(n // MIXED_G2, g, device=dev),
                      torch.tensor(-10, device=dev))).half()
    z2 = (64 * torch.rand(n // MIXED_G2, g, device=dev)).half()
    rw4 = torch.nn.functional.pad(w4.sum(1).cumsum(0), (1, 0)).to(torch.int32)
    # Up to 4 replacement outliers a row, in W2 groups.
    cols = torch.sort(torch.randint(0, k, (n, 4), device=dev), 1).values
    distinct = torch.ones_like(cols, dtype=torch.bool)
    distinct[:, 1:] = cols[:, 1:] != cols[:, :-1]
    keep = distinct & ~torch.gather(w4, 1, cols // g1)
    sr = torch.nn.functional.pad(keep.sum(1).cumsum(0), (1, 0)).to(torch.int32)
    sc = cols[keep].to(torch.int32)
    sv = (8 * torch.rand(int(keep.sum()), device=dev) - 4).half()
    s1 = s2.double().repeat_interleave(MIXED_G2, 0) * (qs.double() - z2.double().repeat_interleave(MIXED_G2, 0))
    dense = (s1[..., None] * (codes.double() - z1.double()[..., None])).view(n, k)
    rows = torch.arange(n, device=dev).repeat_interleave(keep.sum(1))
    w = dense.clone()
    w[rows, sc.long()] = sv.double()
    extra = torch.zeros_like(dense)
    extra[rows, sc.long()] = sv.double().abs() + dense[rows, sc.long()].abs()
    tensors = {"map": pmap, "w2": _pack_fields(flat_codes[~flat_w4], 2),
               "w4": _pack_fields(flat_codes[flat_w4], 4), "rw4": rw4,
               "qs": qs.to(torch.uint8).view(torch.int8),
               "z1": z1.to(torch.uint8).view(torch.int8), "s2": s2, "z2": z2,
               "sv": sv, "sc": sc, "sr": sr}
    return tensors, w, dense.abs() + extra, int(keep.sum(1).max())


def run_mixed2416(kern, out_dir, time_us, result, dev):
    import cupy
    import os
    import torch
    import torch.nn.functional as F
    n, k, t = kern["n"], kern["k"], kern["t"]
    tensors, w, absw, max_row_outliers = _mixed_streams(n, k, dev)
    x = torch.randn(t, k, device=dev).half()
    y = torch.full((t, n), float("nan"), device=dev).half()
    tensors.update({"x": x, "y": y})
    module = cupy.RawModule(path=os.path.join(out_dir, kern["files"][0]))
    call = _call(module, kern["instance"], kern["launch"], kern["args"], tensors)
    call()
    torch.cuda.synchronize()
    ref = x.double() @ w.T
    lane_steps = cdiv(k // MIXED_G1, 32) * (MIXED_G1 // 32)
    u = 2.0 ** -24
    bound = (2 + 31 + lane_steps + 3 * cdiv(max_row_outliers, 32) + 6) * u * (x.double().abs() @ absw.T)
    bound = bound + 2.0 ** -11 * (ref.abs() + bound)
    err = (y.double() - ref).abs()
    ratio = (err / bound).max().item()
    ok = ratio <= 1.0
    result["parity"].append({"instance": kern["instance"], "entry": kern["instance"], "t": t,
                             "max_abs_err": err.max().item(), "max_err_over_bound": ratio, "ok": ok})
    us = time_us(call, 200)
    w16 = w.half()
    blas_us = time_us(lambda: F.linear(x, w16), 200)
    stream_bytes = sum(v.numel() * v.element_size() for key, v in tensors.items()
                       if key not in ("x", "y"))
    result["timing"].append({
        "instance": kern["instance"], "phase": "decode",
        "codes": "mixed 2/4/16 g%d z%d" % (MIXED_G1, MIXED_G2), "n": n, "k": k, "t": t,
        "kernel_us": us, "cublas_fp16_us": blas_us, "speedup": blas_us / us,
        "weight_gbs": stream_bytes / us / 1e3, "tflops": 2.0 * t * n * k / us / 1e6})
    return ok


def run_w8a8(kern, out_dir, time_us, result, dev, pack_torch):
    import cupy
    import os
    import torch
    import torch.nn.functional as F
    n, k, t, group = kern["n"], kern["k"], kern["t"], kern["group_size"]
    x = torch.randn(t, k, device=dev).half()
    x[:, 7] *= 20  # an outlier channel, as real activations have
    qw = torch.randint(-128, 128, (n, k), device=dev, dtype=torch.int32)
    sw = torch.ldexp(0.5 + 0.5 * torch.rand(n, k // group, device=dev),
                     torch.tensor(-9, device=dev)).half()
    packed = pack_torch("decode_gemv", 8, True, qw, [n, k // 4])
    xq = torch.full((t, k), 99, dtype=torch.int8, device=dev)
    sx = torch.full((t,), -1.0, device=dev)
    y = torch.full((t, n), float("nan"), device=dev).half()
    tensors = {"x": x, "xq": xq, "sx": sx, "w": packed, "s": sw, "y": y}
    quant = kern["entries"][0]
    qmod = cupy.RawModule(path=os.path.join(out_dir, quant["file"]))
    gmod = cupy.RawModule(path=os.path.join(out_dir, kern["entries"][1]["file"]))
    qcall = _call(qmod, quant["symbol"], kern["quantizer_launch"], kern["quantizer_args"], tensors)
    gcall = _call(gmod, kern["instance"], kern["launch"], kern["args"], tensors)
    qcall()
    gcall()
    torch.cuda.synchronize()
    # The reference quantizer (ActivationQuant.h) in f32: division, then
    # round half to even, then the clamp.
    xf = x.float()
    amax = xf.abs().amax(1)
    s_ref = torch.where(amax == 0, torch.ones_like(amax), amax / 127)
    q_ref = torch.round(xf / s_ref[:, None]).clamp(-127, 127).to(torch.int8)
    quant_ok = bool(torch.equal(sx, s_ref)) and bool(torch.equal(xq, q_ref))
    # The integer oracle: every group's sum is exact in float64.
    a = (q_ref.double().view(t, 1, k // group, group) *
         qw.double().view(1, n, k // group, group)).sum(-1)
    terms = s_ref.double()[:, None, None] * sw.double()[None] * a
    ref = terms.sum(-1)
    chunks = k // 16
    u = 2.0 ** -24
    bound = (cdiv(chunks, 32) + 6) * u * terms.abs().sum(-1)
    bound = bound + 2.0 ** -11 * (ref.abs() + bound)
    err = (y.double() - ref).abs()
    ratio = (err / bound).max().item()
    ok = quant_ok and ratio <= 1.0
    result["parity"].append({"instance": kern["instance"], "entry": kern["instance"], "t": t,
                             "max_abs_err": err.max().item(), "max_err_over_bound": ratio,
                             "quantizer_bit_exact": quant_ok, "ok": ok})
    both = lambda: (qcall(), gcall())
    us = time_us(both, 200)
    w_hat = (qw.float().view(n, k // group, group) * sw.float()[..., None]).view(n, k).half()
    blas_us = time_us(lambda: F.linear(x, w_hat), 200)
    weight_bytes = packed.numel() * 4 + sw.numel() * 2
    result["timing"].append({
        "instance": kern["instance"], "phase": "decode",
        "codes": "w8a8 sym g%d (quantizer + GEMV)" % group, "n": n, "k": k, "t": t,
        "kernel_us": us, "cublas_fp16_us": blas_us, "speedup": blas_us / us,
        "weight_gbs": weight_bytes / us / 1e3, "tflops": 2.0 * t * n * k / us / 1e6})
    return ok
