#!/usr/bin/env python3
"""Writes a small ONNX MLP quantized by onnxruntime's own 4-bit quantizer
(MatMulNBitsQuantizer), and what onnxruntime computes on it, for
qtc-compile-onnx.test.

usage: make_onnx_linears.py OUT_DIR FORM
  FORM: nbits-asym   MatMulNBits, asymmetric (uint8 zero_points)
        nbits-sym    MatMulNBits, symmetric (zero-points 8)
        qdq          DequantizeLinear (blocked int4/uint4) -> MatMul
        external     nbits-asym with every initializer in external data

OUT_DIR/model.onnx        the quantized model
OUT_DIR/inputs.safetensors   each quantized linear's input, named by its
                             weight initializer (what `qtc run --op` runs)
OUT_DIR/expected.safetensors each linear's output as onnxruntime computes it
OUT_DIR/linears.txt       one weight name per line
"""
import copy
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
from onnxruntime.quantization.quant_utils import QuantFormat
from safetensors.numpy import save_file

K, H, N, T = 256, 96, 64, 5


def float_model():
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((K, H)) / 16).astype(np.float32)
    w2 = (rng.standard_normal((H, N)) / 10).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", K])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["T", N])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "fc1.weight"], ["h"], name="fc1"),
         helper.make_node("Relu", ["h"], ["hr"], name="relu"),
         helper.make_node("MatMul", ["hr", "fc2.weight"], ["y"], name="fc2")],
        "mlp", [x], [y],
        [numpy_helper.from_array(w1, "fc1.weight"),
         numpy_helper.from_array(w2, "fc2.weight")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def quantize(form):
    model = copy.deepcopy(float_model())
    fmt = QuantFormat.QDQ if form == "qdq" else QuantFormat.QOperator
    q = MatMulNBitsQuantizer(model, block_size=32,
                             is_symmetric=(form == "nbits-sym"),
                             quant_format=fmt)
    q.process()
    return q.model.model


def linears(model):
    """(weight, input, output) of each quantized linear, in graph order."""
    producers = {o: n for n in model.graph.node for o in n.output}
    out = []
    for n in model.graph.node:
        if n.op_type == "MatMulNBits":
            out.append((n.input[1], n.input[0], n.output[0]))
        elif n.op_type == "MatMul" and n.input[1] in producers and \
                producers[n.input[1]].op_type == "DequantizeLinear":
            out.append((producers[n.input[1]].input[0], n.input[0],
                        n.output[0]))
    return out


def main():
    out_dir, form = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    model = quantize(form)
    found = linears(model)
    assert len(found) == 2, found
    # onnxruntime on the same model, every linear's input and output exposed
    # (a copy taken before saving moves the data out).
    probe = copy.deepcopy(model)
    path = os.path.join(out_dir, "model.onnx")
    if form == "external":
        onnx.save_model(model, path, save_as_external_data=True,
                        all_tensors_to_one_file=True, location="weights.bin",
                        size_threshold=0)
    else:
        onnx.save_model(model, path)

    names = [v for _, a, y in found for v in (a, y)]
    for v in names:
        if v not in [o.name for o in probe.graph.output]:
            probe.graph.output.append(
                helper.make_tensor_value_info(v, TensorProto.FLOAT, None))
    session = ort.InferenceSession(probe.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    x = np.random.default_rng(3).uniform(-1, 1, (T, K)).astype(np.float32)
    values = dict(zip([o.name for o in session.get_outputs()],
                      session.run(None, {"x": x})))
    values["x"] = x
    save_file({w: np.ascontiguousarray(values[a]) for w, a, _ in found},
              os.path.join(out_dir, "inputs.safetensors"))
    save_file({w: np.ascontiguousarray(values[y]) for w, _, y in found},
              os.path.join(out_dir, "expected.safetensors"))
    with open(os.path.join(out_dir, "linears.txt"), "w") as f:
        for w, _, _ in found:
            f.write(w + "\n")


if __name__ == "__main__":
    main()
