// A two-layer MLP block with W4A16 weights, as an importer would emit it:
//   y = down(silu(gate(x)) * up(x))
// gate/up: 2048x512 W4 with groups of 128 along K and FP16 scales
// (seed M8.9 0x03B's layout at a small size); down: 512x2048 asymmetric W4
// with integer zero-points. The importer also re-assembled `up` from its own
// codes and qparams, which the cleanup pipeline folds away (exact: the codes
// are preserved).
//
//   qopt examples/tiny_mlp.mlir --qtensor-cleanup

!act = tensor<4x512xf16>
!hid = tensor<4x2048xf16>
!W_gate = !qtensor.tensor<2048x512xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>
!W_down = !qtensor.tensor<512x2048xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 128, scale = f16>>

func.func @mlp(%x: !act) -> !act {
  %gate_w = qtensor.weight "blk.0.ffn_gate.weight" : !W_gate
  %up_w = qtensor.weight "blk.0.ffn_up.weight" : !W_gate
  %down_w = qtensor.weight "blk.0.ffn_down.weight" : !W_down

  // Round trip through codes + scales: removed by the fold of assemble and
  // disassemble.
  %codes, %scales = qtensor.disassemble %up_w : !W_gate -> tensor<2048x512xsi4>, tensor<2048x4xf16>
  %up_w2 = qtensor.assemble %codes, %scales : tensor<2048x512xsi4>, tensor<2048x4xf16> -> !W_gate

  %g = qtensor.linear %x, %gate_w accumulate(f32) : !act, !W_gate -> !hid
  %u = qtensor.linear %x, %up_w2 accumulate(f32) : !act, !W_gate -> !hid
  // silu(g) = g / (1 + exp(-g))
  %neg = arith.negf %g : !hid
  %exp = math.exp %neg : !hid
  %one = arith.constant dense<1.0> : !hid
  %den = arith.addf %one, %exp : !hid
  %silu = arith.divf %g, %den : !hid
  %h = arith.mulf %silu, %u : !hid
  %y = qtensor.linear %h, %down_w accumulate(f32) : !hid, !W_down -> !act
  return %y : !act
}
