// RUN: qopt %s -canonicalize -split-input-file | FileCheck %s

// Exact folds only: assemble/disassemble are inverse and code-preserving; a
// repack to the same layout is the identity.

!W = !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 4, scale = f16>>

// CHECK-LABEL: func.func @disassemble_of_assemble
// CHECK-SAME: (%[[C:.*]]: tensor<3x5xui4>, %[[S:.*]]: tensor<3x2xf16>, %[[Z:.*]]: tensor<3x2xui4>)
// CHECK-NOT: qtensor.{{assemble|disassemble}}
// CHECK: return %[[C]], %[[S]], %[[Z]]
func.func @disassemble_of_assemble(%c: tensor<3x5xui4>, %s: tensor<3x2xf16>, %z: tensor<3x2xui4>) -> (tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4>) {
  %q = qtensor.assemble %c, %s, %z : tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4> -> !W
  %c2, %s2, %z2 = qtensor.disassemble %q : !W -> tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4>
  return %c2, %s2, %z2 : tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4>
}

// CHECK-LABEL: func.func @assemble_of_disassemble
// CHECK-SAME: (%[[Q:.*]]: !qtensor.tensor
// CHECK-NOT: qtensor.{{assemble|disassemble}}
// CHECK: return %[[Q]]
func.func @assemble_of_disassemble(%q: !W) -> !W {
  %c, %s, %z = qtensor.disassemble %q : !W -> tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4>
  %r = qtensor.assemble %c, %s, %z : tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4> -> !W
  return %r : !W
}

// Different scales: not the same tensor, nothing folds.
// CHECK-LABEL: func.func @assemble_with_other_scales
// CHECK: qtensor.disassemble
// CHECK: qtensor.assemble
func.func @assemble_with_other_scales(%q: !W, %s2: tensor<3x2xf16>) -> !W {
  %c, %s, %z = qtensor.disassemble %q : !W -> tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4>
  %r = qtensor.assemble %c, %s2, %z : tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4> -> !W
  return %r : !W
}

// -----

// CHECK-DAG: #[[V2:layout[0-9]*]] = #qtensor.layout<family = "tiled", version = 2, encoding = "lsb_first", tile = [64, 64]>

!L = !qtensor.tensor<256x512xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 64, scale = f16>>
!T = !qtensor.tensor<256x512xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 64, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [128, 64]>>
!U = !qtensor.tensor<256x512xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 64, scale = f16>, #qtensor.layout<family = "tiled", version = 2, encoding = "lsb_first", tile = [64, 64]>>

// CHECK-LABEL: func.func @repack_identity
// CHECK-SAME: (%[[Q:.*]]: !qtensor.tensor
// CHECK-NEXT: return %[[Q]]
func.func @repack_identity(%q: !T) -> !T {
  %p = qtensor.repack %q : !T -> !T
  return %p : !T
}

// A round trip through another layout returns the original value.
// CHECK-LABEL: func.func @repack_round_trip
// CHECK-SAME: (%[[Q:.*]]: !qtensor.tensor
// CHECK-NEXT: return %[[Q]]
func.func @repack_round_trip(%q: !L) -> !L {
  %t = qtensor.repack %q : !L -> !T
  %l = qtensor.repack %t : !T -> !L
  return %l : !L
}

// Two repacks in a row become one, straight from the source layout.
// CHECK-LABEL: func.func @repack_chain
// CHECK-SAME: (%[[Q:.*]]: !qtensor.tensor
// CHECK-NEXT: %[[P:.*]] = qtensor.repack %[[Q]] : !qtensor.tensor<256x512xf16, #si4_group64> -> !qtensor.tensor<256x512xf16, #si4_group64, #[[V2]]>
// CHECK-NEXT: return %[[P]]
func.func @repack_chain(%q: !L) -> !U {
  %t = qtensor.repack %q : !L -> !T
  %u = qtensor.repack %t : !T -> !U
  return %u : !U
}

// -----

// Codes and zero-points have the same type here (per-axis, rank 1): passing
// the zero-points as codes is a different tensor, which must not fold.
!V = !qtensor.tensor<8xf32, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f32>>

// CHECK-LABEL: func.func @assemble_with_swapped_operands
// CHECK: %[[C:.*]], %[[S:.*]], %[[Z:.*]] = qtensor.disassemble
// CHECK: %[[R:.*]] = qtensor.assemble %[[Z]], %[[S]], %[[Z]]
// CHECK: return %[[R]]
func.func @assemble_with_swapped_operands(%q: !V) -> !V {
  %c, %s, %z = qtensor.disassemble %q : !V -> tensor<8xui8>, tensor<8xf32>, tensor<8xui8>
  %r = qtensor.assemble %z, %s, %z : tensor<8xui8>, tensor<8xf32>, tensor<8xui8> -> !V
  return %r : !V
}

// -----

// quantize(dequantize(q)) with q's own qparams folds to q only where the round
// trip is provably exact (the argument is in QTensorFolds.cpp). Here f16 scales
// reconstruct f32: |q - z| <= 255 times an 11-bit scale fits f32's 24 bits and
// cannot overflow it.
!A8 = !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f16>>
!A8T = !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 8]>>

// CHECK-LABEL: func.func @quantize_dequantize_disassembled_qparams
// CHECK-SAME: (%[[Q:.*]]: !qtensor.tensor
// CHECK-NEXT: return %[[Q]]
func.func @quantize_dequantize_disassembled_qparams(%q: !A8) -> !A8 {
  %c, %s, %z = qtensor.disassemble %q : !A8 -> tensor<4x8xui8>, tensor<4xf16>, tensor<4xui8>
  %x = qtensor.dequantize %q : !A8 -> tensor<4x8xf32>
  %r = qtensor.quantize %x, %s, %z : tensor<4x8xf32>, tensor<4xf16>, tensor<4xui8> -> !A8
  return %r : !A8
}

// CHECK-LABEL: func.func @quantize_dequantize_assembled_qparams
// CHECK-SAME: (%[[C:.*]]: tensor<4x8xui8>, %[[S:.*]]: tensor<4xf16>, %[[Z:.*]]: tensor<4xui8>)
// CHECK-NEXT: %[[Q:.*]] = qtensor.assemble %[[C]], %[[S]], %[[Z]]
// CHECK-NEXT: return %[[Q]]
func.func @quantize_dequantize_assembled_qparams(%c: tensor<4x8xui8>, %s: tensor<4xf16>, %z: tensor<4xui8>) -> !A8 {
  %q = qtensor.assemble %c, %s, %z : tensor<4x8xui8>, tensor<4xf16>, tensor<4xui8> -> !A8
  %x = qtensor.dequantize %q : !A8 -> tensor<4x8xf32>
  %r = qtensor.quantize %x, %s, %z : tensor<4x8xf32>, tensor<4xf16>, tensor<4xui8> -> !A8
  return %r : !A8
}

// A repack keeps every qparam: the qparams of %q are those of its repack.
// CHECK-LABEL: func.func @quantize_dequantize_through_repack
// CHECK-SAME: (%[[Q:.*]]: !qtensor.tensor
// CHECK-NEXT: %[[P:.*]] = qtensor.repack %[[Q]]
// CHECK-NEXT: return %[[P]]
func.func @quantize_dequantize_through_repack(%q: !A8) -> !A8T {
  %c, %s, %z = qtensor.disassemble %q : !A8 -> tensor<4x8xui8>, tensor<4xf16>, tensor<4xui8>
  %p = qtensor.repack %q : !A8 -> !A8T
  %x = qtensor.dequantize %p : !A8T -> tensor<4x8xf32>
  %r = qtensor.quantize %x, %s, %z : tensor<4x8xf32>, tensor<4xf16>, tensor<4xui8> -> !A8T
  return %r : !A8T
}

// Another tensor's scales: re-quantizing with them changes the codes.
// CHECK-LABEL: func.func @quantize_dequantize_other_scales
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_other_scales(%q: !A8, %s2: tensor<4xf16>) -> !A8 {
  %c, %s, %z = qtensor.disassemble %q : !A8 -> tensor<4x8xui8>, tensor<4xf16>, tensor<4xui8>
  %x = qtensor.dequantize %q : !A8 -> tensor<4x8xf32>
  %r = qtensor.quantize %x, %s2, %z : tensor<4x8xf32>, tensor<4xf16>, tensor<4xui8> -> !A8
  return %r : !A8
}

// The result asks for another layout: that is a repack's job, not a fold's.
// CHECK-LABEL: func.func @quantize_dequantize_other_layout
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_other_layout(%q: !A8) -> !A8T {
  %c, %s, %z = qtensor.disassemble %q : !A8 -> tensor<4x8xui8>, tensor<4xf16>, tensor<4xui8>
  %x = qtensor.dequantize %q : !A8 -> tensor<4x8xf32>
  %r = qtensor.quantize %x, %s, %z : tensor<4x8xf32>, tensor<4xf16>, tensor<4xui8> -> !A8T
  return %r : !A8T
}

// dequantize(quantize(x)) is x plus the quantization error, never x.
// CHECK-LABEL: func.func @dequantize_quantize_stays
// CHECK: %[[Q:.*]] = qtensor.quantize
// CHECK: %[[X:.*]] = qtensor.dequantize %[[Q]]
// CHECK: return %[[X]]
func.func @dequantize_quantize_stays(%x: tensor<4x8xf32>, %s: tensor<4xf16>, %z: tensor<4xui8>) -> tensor<4x8xf32> {
  %q = qtensor.quantize %x, %s, %z : tensor<4x8xf32>, tensor<4xf16>, tensor<4xui8> -> !A8
  %r = qtensor.dequantize %q : !A8 -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// bf16 keeps 8 significant bits: with 8-bit codes |q - z| reaches 255 and the
// round trip loses codes (s = 1 + 2^-7, q - z = 255: s * 255 = 256.99 rounds to
// 256 in bf16, and 256 / s = 254.02 quantizes to 254). Not folded.
!B8 = !qtensor.tensor<4x8xbf16, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f16>>
// With 4-bit codes (|q - z| <= 15) bf16 is exact: folded.
!B4 = !qtensor.tensor<4x8xbf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f16>>

// CHECK-LABEL: func.func @quantize_dequantize_bf16_ui8_stays
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_bf16_ui8_stays(%q: !B8) -> !B8 {
  %c, %s, %z = qtensor.disassemble %q : !B8 -> tensor<4x8xui8>, tensor<4xf16>, tensor<4xui8>
  %x = qtensor.dequantize %q : !B8 -> tensor<4x8xbf16>
  %r = qtensor.quantize %x, %s, %z : tensor<4x8xbf16>, tensor<4xf16>, tensor<4xui8> -> !B8
  return %r : !B8
}

// CHECK-LABEL: func.func @quantize_dequantize_bf16_ui4
// CHECK-SAME: (%[[Q:.*]]: !qtensor.tensor
// CHECK-NEXT: return %[[Q]]
func.func @quantize_dequantize_bf16_ui4(%q: !B4) -> !B4 {
  %c, %s, %z = qtensor.disassemble %q : !B4 -> tensor<4x8xui4>, tensor<4xf16>, tensor<4xui4>
  %x = qtensor.dequantize %q : !B4 -> tensor<4x8xbf16>
  %r = qtensor.quantize %x, %s, %z : tensor<4x8xbf16>, tensor<4xf16>, tensor<4xui4> -> !B4
  return %r : !B4
}

// -----

// f16 scales reconstructing f16 can overflow: s = 16384, q = 5 gives 81920,
// which is inf in f16 and quantizes to 7. Unknown scales: not folded.
!H4 = !qtensor.tensor<4x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// CHECK-LABEL: func.func @quantize_dequantize_f16_may_overflow
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_f16_may_overflow(%q: !H4) -> !H4 {
  %c, %s = qtensor.disassemble %q : !H4 -> tensor<4x8xsi4>, tensor<4x2xf16>
  %x = qtensor.dequantize %q : !H4 -> tensor<4x8xf16>
  %r = qtensor.quantize %x, %s : tensor<4x8xf16>, tensor<4x2xf16> -> !H4
  return %r : !H4
}

// Constant scales are checked one by one: positive, finite, and 8 * s within
// f16 (8 = the largest |q| of si4). Folded.
// CHECK-LABEL: func.func @quantize_dequantize_f16_constant_scales
// CHECK-SAME: (%[[C:.*]]: tensor<4x8xsi4>)
// CHECK-NEXT: %[[S:.*]] = arith.constant
// CHECK-NEXT: %[[Q:.*]] = qtensor.assemble %[[C]], %[[S]]
// CHECK-NEXT: return %[[Q]]
func.func @quantize_dequantize_f16_constant_scales(%c: tensor<4x8xsi4>) -> !H4 {
  %s = arith.constant dense<[[0.5, 2.0], [1.0e-3, 8000.0], [0.25, 0.125], [1.0, 3.0]]> : tensor<4x2xf16>
  %q = qtensor.assemble %c, %s : tensor<4x8xsi4>, tensor<4x2xf16> -> !H4
  %x = qtensor.dequantize %q : !H4 -> tensor<4x8xf16>
  %r = qtensor.quantize %x, %s : tensor<4x8xf16>, tensor<4x2xf16> -> !H4
  return %r : !H4
}

// One scale of 16384 can overflow (16384 * 5 > 65504): not folded.
// CHECK-LABEL: func.func @quantize_dequantize_f16_constant_scale_overflows
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_f16_constant_scale_overflows(%c: tensor<4x8xsi4>) -> !H4 {
  %s = arith.constant dense<[[0.5, 2.0], [1.0, 16384.0], [0.25, 0.125], [1.0, 3.0]]> : tensor<4x2xf16>
  %q = qtensor.assemble %c, %s : tensor<4x8xsi4>, tensor<4x2xf16> -> !H4
  %x = qtensor.dequantize %q : !H4 -> tensor<4x8xf16>
  %r = qtensor.quantize %x, %s : tensor<4x8xf16>, tensor<4x2xf16> -> !H4
  return %r : !H4
}

// A zero scale dequantizes everything to 0, which cannot give the codes back.
// CHECK-LABEL: func.func @quantize_dequantize_zero_scale
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_zero_scale(%c: tensor<4x8xsi4>) -> !H4 {
  %s = arith.constant dense<0.0> : tensor<4x2xf16>
  %q = qtensor.assemble %c, %s : tensor<4x8xsi4>, tensor<4x2xf16> -> !H4
  %x = qtensor.dequantize %q : !H4 -> tensor<4x8xf16>
  %r = qtensor.quantize %x, %s : tensor<4x8xf16>, tensor<4x2xf16> -> !H4
  return %r : !H4
}

// -----

// f32 scales under f16 elements: s * q can be subnormal in f16 and lose the
// code (s = 1e-10: every product rounds to 0). Not folded.
!U4 = !qtensor.tensor<4x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f32>>

// CHECK-LABEL: func.func @quantize_dequantize_f16_underflow
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_f16_underflow(%c: tensor<4x8xsi4>) -> !U4 {
  %s = arith.constant dense<1.0e-10> : tensor<f32>
  %q = qtensor.assemble %c, %s : tensor<4x8xsi4>, tensor<f32> -> !U4
  %x = qtensor.dequantize %q : !U4 -> tensor<4x8xf16>
  %r = qtensor.quantize %x, %s : tensor<4x8xf16>, tensor<f32> -> !U4
  return %r : !U4
}

// -----

// Even where the types are exact (f16 scales, f32 elements), a real-valued
// minimum m (x = s * q + m) can dwarf the scale: near m = 60000 f32 values
// are 2^-8 apart, sixteen code steps of s = 2^-12. Not folded.
!M4 = !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = per_axis, axis = 0, scale = f16>>
// Truncation maps q - eps to q - 1. Not folded.
!T4 = !qtensor.tensor<4x8xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16, rounding = toward_zero>>

// CHECK-LABEL: func.func @quantize_dequantize_min_zero_point
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_min_zero_point(%q: !M4) -> !M4 {
  %c, %s, %m = qtensor.disassemble %q : !M4 -> tensor<4x8xui4>, tensor<4xf16>, tensor<4xf16>
  %x = qtensor.dequantize %q : !M4 -> tensor<4x8xf32>
  %r = qtensor.quantize %x, %s, %m : tensor<4x8xf32>, tensor<4xf16>, tensor<4xf16> -> !M4
  return %r : !M4
}

// CHECK-LABEL: func.func @quantize_dequantize_toward_zero
// CHECK: qtensor.dequantize
// CHECK: qtensor.quantize
func.func @quantize_dequantize_toward_zero(%q: !T4) -> !T4 {
  %c, %s = qtensor.disassemble %q : !T4 -> tensor<4x8xsi4>, tensor<4xf16>
  %x = qtensor.dequantize %q : !T4 -> tensor<4x8xf32>
  %r = qtensor.quantize %x, %s : tensor<4x8xf32>, tensor<4xf16> -> !T4
  return %r : !T4
}

// -----

!K = !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 4, scale = f16>>
!N = !qtensor.tensor<6x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// Two transposes cancel.
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[W:.*]]: !qtensor.tensor
// CHECK-NEXT: return %[[W]]
func.func @transpose_transpose(%w: !K) -> !K {
  %t = qtensor.transpose %w : !K -> !N
  %u = qtensor.transpose %t : !N -> !K
  return %u : !K
}

// One transpose is not the identity, even of a square per-tensor weight.
!S = !qtensor.tensor<4x4xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>
// CHECK-LABEL: func.func @transpose_square
// CHECK: %[[T:.*]] = qtensor.transpose
// CHECK-NEXT: return %[[T]]
func.func @transpose_square(%w: !S) -> !S {
  %t = qtensor.transpose %w : !S -> !S
  return %t : !S
}
