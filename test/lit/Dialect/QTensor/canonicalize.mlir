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
