#!/usr/bin/env python3
"""Writes a llama-shaped qtensor module: BLOCKS decoder blocks of 7 quantized
linears each (q, k, v, o, gate, up, down), shapes only (no weight bytes).

The non-linear parts of a block (attention, RMSNorm, SiLU) are stood in for
by `arith.addf` / `arith.mulf` so that the data flow between the linears is a
real one: q/k/v read the block input, o reads their combination, gate/up read
the residual, down reads gate * up.

  make_llama_shapes.py --blocks 32 > llama7b.mlir          # Llama-2-7B shapes
  make_llama_shapes.py --blocks 2 --hidden 256 --intermediate 688 --group 32
"""
import argparse
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--intermediate", type=int, default=11008)
    ap.add_argument("--kv-hidden", type=int, default=None,
                    help="k/v projection width (grouped-query attention); "
                         "defaults to --hidden")
    ap.add_argument("--bits", type=int, choices=(4, 8), default=4)
    ap.add_argument("--group", type=int, default=128,
                    help="group size along K; 0 means per output channel")
    ap.add_argument("--act", choices=("f16", "bf16"), default="f16")
    ap.add_argument("--tokens", default="?",
                    help="activation rows T: a number, or ? for dynamic")
    args = ap.parse_args()
    if args.blocks < 1 or args.hidden < 1 or args.intermediate < 1:
        ap.error("--blocks, --hidden and --intermediate must be positive")

    h, i, a = args.hidden, args.intermediate, args.act
    kv = args.kv_hidden or h
    t = args.tokens
    if args.group:
        desc = (f"#qtensor.affine<code = si{args.bits}, scheme = symmetric, "
                f"granularity = group, axis = 1, group_size = {args.group}, "
                f"scale = f16>")
    else:
        desc = (f"#qtensor.affine<code = si{args.bits}, scheme = symmetric, "
                f"granularity = per_axis, axis = 0, scale = f16>")

    def wtype(n: int, k: int) -> str:
        return f"!qtensor.tensor<{n}x{k}x{a}, #W>"

    out = [f"#W = {desc}", "module {",
           f"  func.func @forward(%x: tensor<{t}x{h}x{a}>) -> tensor<{t}x{h}x{a}> {{"]
    cur = "%x"
    linears = (("self_attn.q_proj", h, h), ("self_attn.k_proj", kv, h),
               ("self_attn.v_proj", kv, h), ("self_attn.o_proj", h, h),
               ("mlp.gate_proj", i, h), ("mlp.up_proj", i, h),
               ("mlp.down_proj", h, i))

    def act(n: int) -> str:
        return f"tensor<{t}x{n}x{a}>"

    def linear(b: int, name: str, n: int, k: int, x: str) -> str:
        w, y = f"%b{b}_{name.split('.')[-1]}_w", f"%b{b}_{name.split('.')[-1]}"
        out.append(f'    {w} = qtensor.weight "model.layers.{b}.{name}" : '
                   f"{wtype(n, k)}")
        out.append(f"    {y} = qtensor.linear {x}, {w} accumulate(f32) : "
                   f"{act(k)}, {wtype(n, k)} -> {act(n)}")
        return y

    for b in range(args.blocks):
        (qn, qo, qk), (kn, ko, kk), (vn, vo, vk), (on, oo, ok) = linears[:4]
        q = linear(b, qn, qo, qk, cur)
        k = linear(b, kn, ko, kk, cur)
        v = linear(b, vn, vo, vk, cur)
        if kv == h:
            out.append(f"    %b{b}_qk = arith.addf {q}, {k} : {act(h)}")
            out.append(f"    %b{b}_attn = arith.mulf %b{b}_qk, {v} : {act(h)}")
            attn = f"%b{b}_attn"
        else:
            attn = q  # GQA: attention's output has q's width
        o = linear(b, on, oo, ok, attn)
        out.append(f"    %b{b}_res = arith.addf {cur}, {o} : {act(h)}")
        g = linear(b, *linears[4], f"%b{b}_res")
        u = linear(b, *linears[5], f"%b{b}_res")
        out.append(f"    %b{b}_gu = arith.mulf {g}, {u} : {act(i)}")
        d = linear(b, *linears[6], f"%b{b}_gu")
        out.append(f"    %b{b}_out = arith.addf %b{b}_res, {d} : {act(h)}")
        cur = f"%b{b}_out"
    out += [f"    return {cur} : {act(h)}", "  }", "}"]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
