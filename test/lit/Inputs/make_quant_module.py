#!/usr/bin/env python3
"""Writes an MLIR module whose weights are upstream `!quant.uniform` tensors
of two origins, their codes in a safetensors file, and what each weight
must reconstruct to, for qtc-compile-module-quant.test (stdlib only).

usage: make_quant_module.py OUT_DIR

OUT_DIR/model.mlir   fc1.weight: an external ml_program global, si4 codes
                     in i8 storage (i8<-8:7>), f16 scales in blocks of 32
                     along K (sub-channel); fc2.weight: a function argument
                     {qtensor.weight = "fc2.weight"}, u8 codes with one
                     f16 scale and zero-point per output channel (per-axis);
                     each read through quant.dcast by a linalg.matmul
OUT_DIR/weights.safetensors   the codes: fc1.weight I8 [64, 256],
                     fc2.weight U8 [32, 64]
OUT_DIR/expect/NAME.f32   s * (q - z) in float32, [N, K] row-major, with
                     s rounded to f16 as the type's expressed type says
"""
import json
import os
import struct
import sys

N1, K1, G1 = 64, 256, 32
N2, K2 = 32, 64


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def fmt(x):
    return repr(float(x))


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "expect"), exist_ok=True)
    # fc1: si4 codes, scales per (row, block of 32).
    q1 = [[(r * 7 + c * 3 + c // 5) % 16 - 8 for c in range(K1)]
          for r in range(N1)]
    s1 = [[f16(0.0078125 * (1 + (r + g) % 5)) for g in range(K1 // G1)]
          for r in range(N1)]
    # fc2: u8 codes, per-output-channel scale and zero-point.
    q2 = [[(r * 11 + c * 5) % 256 for c in range(K2)] for r in range(N2)]
    s2 = [f16(0.001 * (1 + r % 7)) for r in range(N2)]
    z2 = [100 + r for r in range(N2)]

    type1 = ("tensor<%dx%dx!quant.uniform<i8<-8:7>:f16:{0:1, 1:%d}, {%s}>>" %
             (N1, K1, G1, ", ".join("{" + ", ".join(fmt(v) for v in row) + "}"
                                    for row in s1)))
    type2 = ("tensor<%dx%dx!quant.uniform<u8:f16:0, {%s}>>" %
             (N2, K2, ", ".join("%s:%d" % (fmt(s), z) for s, z in zip(s2, z2))))
    module = """\
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
ml_program.global private @fc1.weight(#ml_program.extern : {t1}) : {t1}
func.func @forward(%x: tensor<?x{k1}xf16>, %w2q: {t2} {{qtensor.weight = "fc2.weight"}}) -> tensor<?x{n2}xf32> {{
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x{k1}xf16>
  %zero = arith.constant 0.0 : f32
  %w1q = ml_program.global_load_const @fc1.weight : {t1}
  %w1 = quant.dcast %w1q : {t1} to tensor<{n1}x{k1}xf16>
  %e1 = tensor.empty(%t) : tensor<?x{n1}xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x{n1}xf32>) -> tensor<?x{n1}xf32>
  %h = linalg.matmul indexing_maps = [#x, #w, #y] ins(%x, %w1 : tensor<?x{k1}xf16>, tensor<{n1}x{k1}xf16>) outs(%z1 : tensor<?x{n1}xf32>) -> tensor<?x{n1}xf32>
  %hh = arith.truncf %h : tensor<?x{n1}xf32> to tensor<?x{n1}xf16>
  %w2 = quant.dcast %w2q : {t2} to tensor<{n2}x{k2}xf16>
  %e2 = tensor.empty(%t) : tensor<?x{n2}xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x{n2}xf32>) -> tensor<?x{n2}xf32>
  %y = linalg.matmul indexing_maps = [#x, #w, #y] ins(%hh, %w2 : tensor<?x{k2}xf16>, tensor<{n2}x{k2}xf16>) outs(%z2 : tensor<?x{n2}xf32>) -> tensor<?x{n2}xf32>
  return %y : tensor<?x{n2}xf32>
}}
""".format(t1=type1, t2=type2, n1=N1, k1=K1, n2=N2, k2=K2)
    with open(os.path.join(out, "model.mlir"), "w") as f:
        f.write(module)

    blob1 = struct.pack("<%db" % (N1 * K1), *[v for row in q1 for v in row])
    blob2 = struct.pack("<%dB" % (N2 * K2), *[v for row in q2 for v in row])
    header = {
        "fc1.weight": {"dtype": "I8", "shape": [N1, K1],
                       "data_offsets": [0, len(blob1)]},
        "fc2.weight": {"dtype": "U8", "shape": [N2, K2],
                       "data_offsets": [len(blob1), len(blob1) + len(blob2)]},
    }
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(out, "weights.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob1 + blob2)

    w1 = [s1[r][c // G1] * q1[r][c] for r in range(N1) for c in range(K1)]
    w2 = [s2[r] * (q2[r][c] - z2[r]) for r in range(N2) for c in range(K2)]
    for name, values in (("fc1.weight", w1), ("fc2.weight", w2)):
        with open(os.path.join(out, "expect", name + ".f32"), "wb") as f:
            f.write(struct.pack("<%df" % len(values), *values))


if __name__ == "__main__":
    main()
