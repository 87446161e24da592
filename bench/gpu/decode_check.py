#!/usr/bin/env python3
"""GPU check of the generated decode GEMV kernels (issue 5, item 4).

Two steps, so the PTX can be built where qopt is and run where the GPU is:

  prepare  (CPU, runs in the test suite): generate the decode kernels with
           qopt, lower them to PTX, write <out>/<kernel>.ptx and
           <out>/manifest.json (spec, launch geometry, argument layout).
  run      (H100/H200-class GPU; needs torch and cupy, nothing installed):
           for each kernel, pack random weights in the decode_gemv layout,
           launch the PTX through cupy, check parity against a float64
           torch reference of the dequantized weight, time it against
           torch fp16 matmul (cuBLAS) on the float weight and against the
           measured device copy bandwidth, and write a Markdown report
           (date, command, GPU) for docs/benchmarks/.

  python3 bench/gpu/decode_check.py prepare --qopt build/bin/qopt --out /tmp/qt-gpu
  python3 bench/gpu/decode_check.py run --dir /tmp/qt-gpu --report docs/benchmarks/gpu-decode.md

The prefill tensor-core kernel is not generated yet; `run` says so.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

# Decode sweep of the issue: N = K from 4096 to 16384, T = 1, 4, 16.
SWEEP = [(t, nk) for nk in (4096, 8192, 16384) for t in (1, 4, 16)]
WARPS_PER_BLOCK = 4


def spec_text(bits, group, sym, act, t, n, k, split):
    g = "gch" if group == 0 else "g%d" % group
    return "decode_gemv:w%d:%s:%s:%s:t%d:n%d:k%d:s%d" % (
        bits, g, "sym" if sym else "asym", act, t, n, k, split)


def kernel_name(bits, group, sym, act, t, n, k, split):
    g = "gch" if group == 0 else "g%d" % group
    return "qt_decode_gemv_w%d%s_%s_%s_t%d_n%d_k%d_s%d" % (
        bits, "sym" if sym else "asym", g, act, t, n, k, split)


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    if args.small:
        configs = [(4, 128, True, "f16", 1, 64, 256, 1),
                   (4, 32, False, "bf16", 4, 70, 300, 2),
                   (8, 0, True, "f16", 16, 33, 200, 1)]
    else:
        configs = [(4, 128, sym, "f16", t, nk, nk, 1)
                   for (t, nk) in SWEEP for sym in (True, False)]
    kernels = []
    for c in configs:
        kernels.append({
            "spec": spec_text(*c), "name": kernel_name(*c),
            "bits": c[0], "group": c[1], "symmetric": c[2], "activation": c[3],
            "t": c[4], "n": c[5], "k": c[6], "split": c[7],
            "grid": [(c[5] + WARPS_PER_BLOCK - 1) // WARPS_PER_BLOCK, c[7], 1],
            "block": [32 * WARPS_PER_BLOCK, 1, 1],
            # memref operands in order; each expands to 7 kernel parameters.
            "args": ["x", "w", "s"] + ([] if c[2] else ["z"]) + ["y"],
        })
    options = " ".join("kernels=" + k["spec"] for k in kernels)
    cmd = [args.qopt, "-", "--qtensor-generate-kernels=target=%s %s" % (args.chip, options),
           "--qtensor-lower-to-ptx=chip=%s ptx-dir=%s" % (args.chip, args.out)]
    run = subprocess.run(cmd, input="module {}\n", capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("prepare: qopt failed:\n" + run.stderr)
    for k in kernels:
        if not os.path.isfile(os.path.join(args.out, k["name"] + ".ptx")):
            sys.exit("prepare: qopt wrote no PTX for " + k["name"])
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"chip": args.chip, "kernels": kernels}, f, indent=1)
    print("prepared %d kernels for %s in %s" % (len(kernels), args.chip, args.out))


# --- GPU side -------------------------------------------------------------

def pack_decode_gemv(codes, bits, symmetric):
    """Logical codes [N, K] -> decode_gemv words [N, 4C] (int32): K padded
    to 128 / bits codes, LSB-first fields, offset binary when signed."""
    import torch
    n, k = codes.shape
    chunk = 128 // bits
    kp = (k + chunk - 1) // chunk * chunk
    fields = codes.to(torch.int64) + ((1 << (bits - 1)) if symmetric else 0)
    padded = torch.zeros((n, kp), dtype=torch.int64, device=codes.device)
    padded[:, :k] = fields
    per_word = 32 // bits
    shifts = torch.arange(per_word, device=codes.device, dtype=torch.int64) * bits
    words = (padded.view(n, kp // per_word, per_word) << shifts).sum(-1)
    words = torch.where(words >= 2**31, words - 2**32, words)
    return words.to(torch.int32).contiguous()


def quantize(w, bits, group, symmetric, act_dtype):
    import torch
    n, k = w.shape
    g = k if group == 0 else group
    groups = (k + g - 1) // g
    pad = groups * g - k
    wp = torch.nn.functional.pad(w, (0, pad)).view(n, groups, g)
    if symmetric:
        qmax = (1 << (bits - 1)) - 1
        scale = (wp.abs().amax(-1) / qmax).clamp_min(1e-8).to(act_dtype).float()
        q = torch.round(wp / scale[..., None]).clamp(-qmax - 1, qmax)
        zero = torch.zeros_like(scale)
    else:
        qmax = (1 << bits) - 1
        lo, hi = wp.amin(-1).clamp_max(0), wp.amax(-1).clamp_min(0)
        scale = ((hi - lo) / qmax).clamp_min(1e-8).to(act_dtype).float()
        zero = torch.round(-lo / scale).clamp(0, qmax)
        q = torch.round(wp / scale[..., None] + zero[..., None]).clamp(0, qmax)
    deq = (scale[..., None] * (q - zero[..., None])).view(n, groups * g)[:, :k]
    return q.view(n, groups * g)[:, :k].to(torch.int32), scale, zero, deq


def memref_args(t):
    import numpy as np
    rows, cols = t.shape
    return [t, t, np.int64(0), np.int64(rows), np.int64(cols), np.int64(cols), np.int64(1)]


def time_ms(fn, iters=50):
    import torch
    for _ in range(5):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iters


def run(args):
    import cupy
    import torch
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    dev = torch.device("cuda")
    gpu = torch.cuda.get_device_name(0)
    # Device copy bandwidth: read + write of a 1 GiB buffer.
    buf = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(buf)
    copy_ms = time_ms(lambda: dst.copy_(buf), 20)
    copy_gbs = 2 * buf.numel() / copy_ms / 1e6
    lines = ["# GPU decode check", "",
             "- date: %s" % datetime.date.today().isoformat(),
             "- command: `%s`" % " ".join(sys.argv),
             "- GPU: %s (%s)" % (gpu, manifest["chip"]),
             "- device copy bandwidth: %.0f GB/s" % copy_gbs, "",
             "| kernel | max abs err vs f64 | kernel us | weight GB/s | cuBLAS fp16 us | speedup |",
             "|---|---|---|---|---|---|"]
    failed = False
    torch.manual_seed(0)
    for k in manifest["kernels"]:
        act = torch.float16 if k["activation"] == "f16" else torch.bfloat16
        n, kk, t = k["n"], k["k"], k["t"]
        w = torch.randn(n, kk, device=dev)
        q, scale, zero, deq = quantize(w, k["bits"], k["group"], k["symmetric"], act)
        x = torch.randn(t, kk, device=dev).to(act)
        words = pack_decode_gemv(q, k["bits"], k["symmetric"])
        s = scale.to(act).contiguous()
        z = zero.to(torch.uint8).contiguous()
        y = torch.zeros(t, n, dtype=torch.float32, device=dev)
        module = cupy.RawModule(path=os.path.join(args.dir, k["name"] + ".ptx"))
        fn = module.get_function(k["name"])
        tensors = {"x": x, "w": words, "s": s, "z": z, "y": y}
        params = []
        for a in k["args"]:
            params += memref_args(cupy.from_dlpack(tensors[a]))
        launch = lambda: fn(tuple(k["grid"]), tuple(k["block"]), tuple(params))
        launch()
        torch.cuda.synchronize()
        ref = x.double() @ deq.double().T
        err = (y.double() - ref).abs().max().item()
        bound = 1e-5 * ref.abs().max().item() + 1e-6
        failed |= err > bound
        if k["split"] > 1:
            launch = lambda: (y.zero_(), fn(tuple(k["grid"]), tuple(k["block"]), tuple(params)))
        ms = time_ms(launch)
        wh = w.to(torch.float16)
        xh = x.to(torch.float16)
        blas_ms = time_ms(lambda: xh @ wh.T)
        weight_bytes = words.numel() * 4 + s.numel() * 2
        lines.append("| %s | %.2e%s | %.1f | %.0f | %.1f | %.2fx |" % (
            k["name"], err, "" if err <= bound else " FAIL", ms * 1e3,
            weight_bytes / ms / 1e6, blas_ms * 1e3, blas_ms / ms))
    lines += ["", "Prefill (T = 512, 2048): not measured, the prefill_mma kernel is not generated yet."]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    sys.exit(1 if failed else 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--qopt", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--chip", default="sm_90", choices=["sm_80", "sm_90"])
    p.add_argument("--small", action="store_true", help="three small kernels (test suite)")
    r = sub.add_parser("run")
    r.add_argument("--dir", required=True)
    r.add_argument("--report")
    args = parser.parse_args()
    prepare(args) if args.step == "prepare" else run(args)


if __name__ == "__main__":
    main()
