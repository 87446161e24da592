#!/usr/bin/env python3
"""Checks an artifact compiled from an ONNX model (make_onnx_linears.py)
against the model itself and against onnxruntime.

usage: check_onnx_outputs.py QTC ARTIFACT_DIR MODEL_DIR

For each quantized linear (MODEL_DIR/linears.txt):
 - codes: `qtc inspect --tensor NAME --dump-f32` must equal, bit for bit,
   s * (q - z) computed here from the model's initializers with the ONNX
   conventions (numpy; nothing of qtensor's reader), i.e. the artifact holds
   the file's codes and qparams;
 - outputs: `qtc run --input inputs.safetensors --outputs ...` must be
   within 0.1% relative L2 of x W_hat^T computed here in float64 from the
   same weights (the kernel's error: qtensor's kernels take f16
   activations, so inputs and outputs are rounded to f16), and within 1% of
   what onnxruntime computed on the same inputs (expected.safetensors;
   onnxruntime's own error from that product is printed beside it: its
   DequantizeLinear -> MatMul path computes with 8-bit activations).
Prints one line per linear; exits 1 on the first failure.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper
from safetensors.numpy import load_file


def attribute(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def reconstruct(model, weight):
    """W_hat [N, K] in float32 for the linear whose weight is `weight`."""
    inits = {t.name: t for t in model.graph.initializer}
    producers = {o: n for n in model.graph.node for o in n.output}
    array = lambda name: numpy_helper.to_array(inits[name])
    for n in model.graph.node:
        if n.op_type == "MatMulNBits" and n.input[1] == weight:
            k, nn = attribute(n, "K"), attribute(n, "N")
            bits, bs = attribute(n, "bits", 4), attribute(n, "block_size")
            assert bits == 4
            blocks = -(-k // bs)
            b = array(weight).reshape(nn, blocks, bs // 2)
            q = np.empty((nn, blocks, bs), np.int32)
            q[:, :, 0::2] = b & 15
            q[:, :, 1::2] = b >> 4
            q = q.reshape(nn, blocks * bs)[:, :k]
            s = array(n.input[2]).reshape(nn, blocks).astype(np.float32)
            if len(n.input) > 3 and n.input[3]:
                zb = array(n.input[3]).reshape(nn, -1)
                z = np.empty((nn, zb.shape[1] * 2), np.int32)
                z[:, 0::2] = zb & 15
                z[:, 1::2] = zb >> 4
                z = z[:, :blocks]
            else:
                z = np.full((nn, blocks), 8, np.int32)
            g = np.arange(k) // bs
            return ((q - z[:, g]).astype(np.float32) * s[:, g]).astype(np.float32)
        if n.op_type == "MatMul" and n.input[1] in producers:
            dq = producers[n.input[1]]
            if dq.op_type != "DequantizeLinear" or dq.input[0] != weight:
                continue
            w = array(weight).astype(np.int32)  # [K, N]
            k = w.shape[0]
            s = array(dq.input[1]).astype(np.float32)
            z = (array(dq.input[2]).astype(np.int32)
                 if len(dq.input) > 2 and dq.input[2] else np.zeros_like(s, np.int32))
            bs = attribute(dq, "block_size", 0)
            assert bs > 0 and attribute(dq, "axis", 1) == 0
            g = np.arange(k) // bs
            return (((w - z[g, :]).astype(np.float32) * s[g, :]).T).astype(np.float32)
    raise SystemExit("no linear reads " + weight)


def main():
    qtc, artifact, model_dir = sys.argv[1:4]
    model = onnx.load(os.path.join(model_dir, "model.onnx"))
    names = open(os.path.join(model_dir, "linears.txt")).read().split()
    expected = load_file(os.path.join(model_dir, "expected.safetensors"))
    with tempfile.TemporaryDirectory() as tmp:
        outputs = os.path.join(tmp, "outputs.safetensors")
        subprocess.run([qtc, "run", artifact, "--input",
                        os.path.join(model_dir, "inputs.safetensors"),
                        "--outputs", outputs], check=True,
                       stdout=subprocess.DEVNULL)
        got = load_file(outputs)
        for name in names:
            dump = os.path.join(tmp, "w.f32")
            subprocess.run([qtc, "inspect", artifact, "--tensor", name,
                            "--dump-f32", dump], check=True,
                           stdout=subprocess.DEVNULL)
            w = np.fromfile(dump, np.float32)
            want = reconstruct(model, name)
            if w.shape != (want.size,) or w.tobytes() != want.tobytes():
                bad = np.flatnonzero(w != want.ravel())
                sys.exit("%s: reconstruction differs from the file's s*(q-z) "
                         "at %d of %d elements (first: %s)" %
                         (name, bad.size, want.size, bad[:1]))
            y, ref = got[name].astype(np.float64), expected[name].astype(np.float64)
            x = load_file(os.path.join(model_dir, "inputs.safetensors"))[name]
            exact = x.astype(np.float64) @ want.astype(np.float64).T
            if y.shape != ref.shape or y.shape != exact.shape:
                sys.exit("%s: output %s, onnxruntime's %s, expected %s" %
                         (name, y.shape, ref.shape, exact.shape))
            rel = lambda a, b: np.linalg.norm(a - b) / np.linalg.norm(b)
            kernel, ort = rel(y, exact), rel(y, ref)
            print("%s: reconstruction equals the file's s*(q-z) bit for bit; "
                  "output vs float64 x W_hat^T: %s; vs onnxruntime: %s "
                  "(onnxruntime vs float64: %.2f%%)" %
                  (name, "below 0.1%" if kernel < 0.001 else
                   "%.3f%% (FAILED)" % (100 * kernel),
                   "below 1%" if ort < 0.01 else "%.3f%% (FAILED)" % (100 * ort),
                   100 * rel(ref, exact)))
            if kernel >= 0.001 or ort >= 0.01:
                sys.exit(1)


if __name__ == "__main__":
    main()
