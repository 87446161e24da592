// RUN: qopt %s -qtensor-fuse-linear=remarks=true -split-input-file -verify-diagnostics | FileCheck %s
// Without remarks the IR is the same (stderr dropped: -split-input-file
// reports the unmet expected-remark lines even without -verify-diagnostics).
// RUN: qopt %s -qtensor-fuse-linear -split-input-file 2>/dev/null | FileCheck %s

// A dequantized weight feeding a matmul becomes qtensor.linear(X, W) with W in
// [N, K]. Each form of matmul has a case; each reason to leave one alone has a
// case whose remark (remarks=true) names it, and whose CHECKs show the IR
// untouched.

!WNK = !qtensor.tensor<6x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// linalg.matmul with a transposed-B map reads B as [N, K]: the weight as is.
// A zero fill adds nothing; the accumulator is the init's element type. The
// fill, its tensor.empty and the dequantize are left dead and erased.
// CHECK-LABEL: func.func @matmul_transposed_b_zero_init
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf16>, %[[W:.*]]: !qtensor.tensor<6x8xf16, #si4_group4>)
// CHECK-NEXT: %[[Y:.*]] = qtensor.linear %[[X]], %[[W]] accumulate(f32) : tensor<?x8xf16>, !qtensor.tensor<6x8xf16, #si4_group4> -> tensor<?x6xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_transposed_b_zero_init(%x: tensor<?x8xf16>, %w: !WNK) -> tensor<?x6xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x8xf16>
  %e = tensor.empty(%m) : tensor<?x6xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x6xf32>) -> tensor<?x6xf32>
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<?x8xf16>, tensor<6x8xf16>) outs(%z : tensor<?x6xf32>) -> tensor<?x6xf32>
  return %y : tensor<?x6xf32>
}

// The torch export form: linalg.transpose of the [N, K] weight feeding a plain
// matmul. The two transpositions cancel; f16 in, f16 out accumulates in f16.
// CHECK-LABEL: func.func @torch_transpose_then_matmul
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[W:.*]]: !qtensor.tensor
// CHECK-NEXT: %[[Y:.*]] = qtensor.linear %[[X]], %[[W]] accumulate(f16) : tensor<4x8xf16>, !qtensor.tensor<6x8xf16, #si4_group4> -> tensor<4x6xf16>
// CHECK-NEXT: return %[[Y]]
func.func @torch_transpose_then_matmul(%x: tensor<4x8xf16>, %w: !WNK) -> tensor<4x6xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4x6xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<4x6xf16>) -> tensor<4x6xf16>
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  %et = tensor.empty() : tensor<8x6xf16>
  %bt = linalg.transpose ins(%b : tensor<6x8xf16>) outs(%et : tensor<8x6xf16>) permutation = [1, 0]
  %y = linalg.matmul ins(%x, %bt : tensor<4x8xf16>, tensor<8x6xf16>) outs(%z : tensor<4x6xf16>) -> tensor<4x6xf16>
  return %y : tensor<4x6xf16>
}

// A linalg.generic with matmul maps and a widening multiply-add body, the
// product and the sum written in the other operand order.
// CHECK-LABEL: func.func @generic_matmul
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[W:.*]]: !qtensor.tensor
// CHECK-NEXT: %[[Y:.*]] = qtensor.linear %[[X]], %[[W]] accumulate(f32) : tensor<4x8xf16>, !qtensor.tensor<6x8xf16, #si4_group4> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[Y]]
func.func @generic_matmul(%x: tensor<4x8xf16>, %w: !WNK) -> tensor<4x6xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x6xf32>
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %b : tensor<4x8xf16>, tensor<6x8xf16>) outs(%zero : tensor<4x6xf32>) {
  ^bb0(%a: f16, %v: f16, %acc: f32):
    %ae = arith.extf %a : f16 to f32
    %ve = arith.extf %v : f16 to f32
    %p = arith.mulf %ve, %ae : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// A non-zero init: linalg computes init + A * B; the linear's result gets the
// init added after it (a reassociation of the sum, as in any tiled kernel).
// CHECK-LABEL: func.func @matmul_nonzero_init
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[W:.*]]: !qtensor.tensor{{.*}}, %[[C:.*]]: tensor<4x6xf32>)
// CHECK-NEXT: %[[L:.*]] = qtensor.linear %[[X]], %[[W]] accumulate(f32)
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[L]], %[[C]] : tensor<4x6xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_nonzero_init(%x: tensor<4x8xf16>, %w: !WNK, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<4x8xf16>, tensor<6x8xf16>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// An init that broadcasts an [N] vector over the rows is the linear's bias.
// CHECK-LABEL: func.func @matmul_bias_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[W:.*]]: !qtensor.tensor{{.*}}, %[[B:.*]]: tensor<6xf32>)
// CHECK-NEXT: %[[Y:.*]] = qtensor.linear %[[X]], %[[W]], %[[B]] accumulate(f32) : tensor<4x8xf16>, !qtensor.tensor<6x8xf16, #si4_group4>, tensor<6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_bias_broadcast(%x: tensor<4x8xf16>, %w: !WNK, %bias: tensor<6xf32>) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %init = linalg.broadcast ins(%bias : tensor<6xf32>) outs(%e : tensor<4x6xf32>) dimensions = [0]
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<4x8xf16>, tensor<6x8xf16>) outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// The dequantized weight has another user: it stays for that user.
// CHECK-LABEL: func.func @dequantize_with_another_user
// CHECK: %[[D:.*]] = qtensor.dequantize
// CHECK: %[[Y:.*]] = qtensor.linear
// CHECK-NOT: linalg.matmul
// CHECK: return %[[Y]], %[[D]]
func.func @dequantize_with_another_user(%x: tensor<4x8xf16>, %w: !WNK, %c: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<6x8xf16>) {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<4x8xf16>, tensor<6x8xf16>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y, %b : tensor<4x6xf32>, tensor<6x8xf16>
}

// One dequantize feeding two matmuls: both fuse, then the dequantize is dead.
// CHECK-LABEL: func.func @dequantize_shared_by_two_matmuls
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[W:.*]]: !qtensor.tensor{{.*}}, %[[C:.*]]: tensor<4x6xf32>)
// CHECK-NEXT: %[[Y1:.*]] = qtensor.linear %[[X]], %[[W]]
// CHECK-NEXT: %[[A1:.*]] = arith.addf %[[Y1]], %[[C]]
// CHECK-NEXT: %[[Y2:.*]] = qtensor.linear %[[X]], %[[W]]
// CHECK-NEXT: %[[A2:.*]] = arith.addf %[[Y2]], %[[C]]
// CHECK-NEXT: return %[[A1]], %[[A2]]
func.func @dequantize_shared_by_two_matmuls(%x: tensor<4x8xf16>, %w: !WNK, %c: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  %y1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<4x8xf16>, tensor<6x8xf16>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  %y2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<4x8xf16>, tensor<6x8xf16>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y1, %y2 : tensor<4x6xf32>, tensor<4x6xf32>
}

// No dequantize: not a candidate, no remark, untouched.
// CHECK-LABEL: func.func @matmul_of_float_weight
// CHECK: linalg.matmul
// CHECK-NOT: qtensor.linear
func.func @matmul_of_float_weight(%x: tensor<4x8xf16>, %b: tensor<8x6xf16>, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = linalg.matmul ins(%x, %b : tensor<4x8xf16>, tensor<8x6xf16>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// A plain matmul reads B as [K, N]: the weight is stored [K, N] with groups of
// 4 along K (axis 0), and qtensor.transpose gives the [N, K] view with the
// groups still along K, now axis 1.
// CHECK-DAG: #[[KN:si4_group4_axis0]] = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 4, scale = f16>
// CHECK-DAG: #[[NK:si4_group4]] = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>
!WKN = !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 4, scale = f16>>

// CHECK-LABEL: func.func @matmul_kn_weight
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[W:.*]]: !qtensor.tensor<8x6xf16, #[[KN]]>)
// CHECK-NEXT: %[[T:.*]] = qtensor.transpose %[[W]] : !qtensor.tensor<8x6xf16, #[[KN]]> -> !qtensor.tensor<6x8xf16, #[[NK]]>
// CHECK-NEXT: %[[Y:.*]] = qtensor.linear %[[X]], %[[T]] accumulate(f32) : tensor<4x8xf16>, !qtensor.tensor<6x8xf16, #[[NK]]> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_kn_weight(%x: tensor<4x8xf16>, %w: !WKN) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = qtensor.dequantize %w : !WKN -> tensor<8x6xf16>
  %y = linalg.matmul ins(%x, %b : tensor<4x8xf16>, tensor<8x6xf16>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// linalg.batch_matmul over a 2-D weight broadcast across the batch: the batch
// becomes a leading dimension of the linear's input and result.
// CHECK-LABEL: func.func @batch_matmul_broadcast_weight
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf16>, %[[W:.*]]: !qtensor.tensor<8x6xf16, #[[KN]]>)
// CHECK-NEXT: %[[T:.*]] = qtensor.transpose %[[W]] : !qtensor.tensor<8x6xf16, #[[KN]]> -> !qtensor.tensor<6x8xf16, #[[NK]]>
// CHECK-NEXT: %[[Y:.*]] = qtensor.linear %[[X]], %[[T]] accumulate(f32) : tensor<2x4x8xf16>, !qtensor.tensor<6x8xf16, #[[NK]]> -> tensor<2x4x6xf32>
// CHECK-NEXT: return %[[Y]]
func.func @batch_matmul_broadcast_weight(%x: tensor<2x4x8xf16>, %w: !WKN) -> tensor<2x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %b = qtensor.dequantize %w : !WKN -> tensor<8x6xf16>
  %eb = tensor.empty() : tensor<2x8x6xf16>
  %bb = linalg.broadcast ins(%b : tensor<8x6xf16>) outs(%eb : tensor<2x8x6xf16>) dimensions = [0]
  %y = linalg.batch_matmul ins(%x, %bb : tensor<2x4x8xf16>, tensor<2x8x6xf16>) outs(%z : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  return %y : tensor<2x4x6xf32>
}

// A linalg.generic reading B as [K, N] goes the same way.
// CHECK-LABEL: func.func @generic_matmul_kn_weight
// CHECK-NEXT: %[[T:.*]] = qtensor.transpose
// CHECK-NEXT: %[[Y:.*]] = qtensor.linear %{{.*}}, %[[T]] accumulate(f16)
// CHECK-NEXT: return %[[Y]]
func.func @generic_matmul_kn_weight(%x: tensor<4x8xf16>, %w: !WKN) -> tensor<4x6xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4x6xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<4x6xf16>) -> tensor<4x6xf16>
  %b = qtensor.dequantize %w : !WKN -> tensor<8x6xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %b : tensor<4x8xf16>, tensor<8x6xf16>) outs(%z : tensor<4x6xf16>) {
  ^bb0(%a: f16, %v: f16, %acc: f16):
    %p = arith.mulf %a, %v : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  } -> tensor<4x6xf16>
  return %y : tensor<4x6xf16>
}

// -----

// Per-output-channel scales of a [K, N] weight run along axis 1; the [N, K]
// view has them along axis 0, as qtensor.linear requires.
// CHECK-DAG: #[[KN:ui8_asym_per_axis1]] = #qtensor.affine<{{.*}}axis = 1
// CHECK-DAG: #[[NK:ui8_asym_per_axis0]] = #qtensor.affine<{{.*}}axis = 0
!PKN = !qtensor.tensor<8x6xf32, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 1, scale = f32>>

// CHECK-LABEL: func.func @matmul_kn_per_axis_weight
// CHECK: %[[T:.*]] = qtensor.transpose %{{.*}} : !qtensor.tensor<8x6xf32, #[[KN]]> -> !qtensor.tensor<6x8xf32, #[[NK]]>
// CHECK-NEXT: qtensor.linear %{{.*}}, %[[T]] accumulate(f32) : tensor<4x8xf32>, !qtensor.tensor<6x8xf32, #[[NK]]> -> tensor<4x6xf32>
func.func @matmul_kn_per_axis_weight(%x: tensor<4x8xf32>, %w: !PKN) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = qtensor.dequantize %w : !PKN -> tensor<8x6xf32>
  %y = linalg.matmul ins(%x, %b : tensor<4x8xf32>, tensor<8x6xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// Not fused: groups of a [K, N] weight that run along N (axis 1) would run
// along N in the [N, K] view too, which qtensor.linear rejects.
!GN = !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 2, scale = f16>>

// CHECK-LABEL: func.func @matmul_kn_groups_along_n
// CHECK: qtensor.dequantize
// CHECK: linalg.matmul
// CHECK-NOT: qtensor.linear
func.func @matmul_kn_groups_along_n(%x: tensor<4x8xf16>, %w: !GN, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %b = qtensor.dequantize %w : !GN -> tensor<8x6xf16>
  // expected-remark @+1 {{not fused into qtensor.linear: qtensor.linear would not verify: weight groups must run along the reduction axis 1 (K), got axis 0}}
  %y = linalg.matmul ins(%x, %b : tensor<4x8xf16>, tensor<8x6xf16>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// Not fused: the activations are f32, the weight reconstructs f16. The matmul
// widens the weight; qtensor.linear converts nothing.
!WNK = !qtensor.tensor<6x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// CHECK-LABEL: func.func @matmul_activation_type_mismatch
// CHECK: linalg.matmul
// CHECK-NOT: qtensor.linear
func.func @matmul_activation_type_mismatch(%x: tensor<4x8xf32>, %w: !WNK, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  // expected-remark @+1 {{not fused into qtensor.linear: qtensor.linear would not verify: input element type 'f32' must match the weight's reconstructed type 'f16'}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<4x8xf32>, tensor<6x8xf16>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// Not fused: f64 accumulation is no qtensor.linear output type.
!WNK32 = !qtensor.tensor<6x8xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
// CHECK-LABEL: func.func @matmul_f64_accumulator
// CHECK: linalg.matmul
// CHECK-NOT: qtensor.linear
func.func @matmul_f64_accumulator(%x: tensor<4x8xf32>, %w: !WNK32, %c: tensor<4x6xf64>) -> tensor<4x6xf64> {
  %b = qtensor.dequantize %w : !WNK32 -> tensor<6x8xf32>
  // expected-remark @+1 {{not fused into qtensor.linear: qtensor.linear would not verify: output element type must be f16, bf16 or f32, got 'f64'}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<4x8xf32>, tensor<6x8xf32>) outs(%c : tensor<4x6xf64>) -> tensor<4x6xf64>
  return %y : tensor<4x6xf64>
}

// Not fused: the dequantized tensor is the left operand (W * X^T is the
// transpose of a linear, not a linear).
// CHECK-LABEL: func.func @matmul_dequantized_lhs
// CHECK: linalg.matmul
// CHECK-NOT: qtensor.linear
func.func @matmul_dequantized_lhs(%w: !WNK, %x: tensor<8x4xf16>, %c: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %a = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  // expected-remark @+1 {{not fused into qtensor.linear: the dequantized tensor is the left operand; qtensor.linear computes X * W^T with the weight on the right}}
  %y = linalg.matmul ins(%a, %x : tensor<6x8xf16>, tensor<8x4xf16>) outs(%c : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// Not fused: A is read as [K, M]; the linear's input has K innermost.
// CHECK-LABEL: func.func @matmul_transposed_a
// CHECK: linalg.matmul
// CHECK-NOT: qtensor.linear
func.func @matmul_transposed_a(%x: tensor<8x4xf16>, %w: !WNK, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  // expected-remark @+1 {{not fused into qtensor.linear: the left operand does not have the reduction (K) innermost}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %b : tensor<8x4xf16>, tensor<6x8xf16>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// Not fused: the body negates an input between the block argument and the
// multiply. linalg's contraction matcher accepts any unary op there;
// qtensor.linear computes the plain product.
// CHECK-LABEL: func.func @generic_negated_input
// CHECK: linalg.generic
// CHECK-NOT: qtensor.linear
func.func @generic_negated_input(%x: tensor<4x8xf16>, %w: !WNK, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %b = qtensor.dequantize %w : !WNK -> tensor<6x8xf16>
  // expected-remark @+1 {{not fused into qtensor.linear: the body is not out + a * b in the accumulator type 'f32' (inputs may only be widened by arith.extf)}}
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %b : tensor<4x8xf16>, tensor<6x8xf16>) outs(%c : tensor<4x6xf32>) {
  ^bb0(%a: f16, %v: f16, %acc: f32):
    %n = arith.negf %a : f16
    %ae = arith.extf %n : f16 to f32
    %ve = arith.extf %v : f16 to f32
    %p = arith.mulf %ae, %ve : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// Not fused: a weight that differs per batch ([B, K, N] dequantized) is not
// the 2-D weight of a linear.
!W3 = !qtensor.tensor<2x8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>

// CHECK-LABEL: func.func @batch_matmul_batched_weight
// CHECK: linalg.batch_matmul
// CHECK-NOT: qtensor.linear
func.func @batch_matmul_batched_weight(%x: tensor<2x4x8xf16>, %w: !W3, %c: tensor<2x4x6xf32>) -> tensor<2x4x6xf32> {
  %b = qtensor.dequantize %w : !W3 -> tensor<2x8x6xf16>
  // expected-remark @+1 {{not fused into qtensor.linear: the dequantized weight is not indexed [N, K] or [K, N] (a weight that differs per batch is not a qtensor.linear)}}
  %y = linalg.batch_matmul ins(%x, %b : tensor<2x4x8xf16>, tensor<2x8x6xf16>) outs(%c : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  return %y : tensor<2x4x6xf32>
}

// Not fused: two reduction loops (K split in two) is not one linear.
!W3R = !qtensor.tensor<6x2x4xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>
// CHECK-LABEL: func.func @generic_two_reductions
// CHECK: linalg.generic
// CHECK-NOT: qtensor.linear
func.func @generic_two_reductions(%x: tensor<4x2x4xf16>, %w: !W3R, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %b = qtensor.dequantize %w : !W3R -> tensor<6x2x4xf16>
  // expected-remark @+1 {{not fused into qtensor.linear: has 2 reduction loops; qtensor.linear reduces over one (K)}}
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k0, k1) -> (m, k0, k1)>, affine_map<(m, n, k0, k1) -> (n, k0, k1)>, affine_map<(m, n, k0, k1) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %b : tensor<4x2x4xf16>, tensor<6x2x4xf16>) outs(%c : tensor<4x6xf32>) {
  ^bb0(%a: f16, %v: f16, %acc: f32):
    %ae = arith.extf %a : f16 to f32
    %ve = arith.extf %v : f16 to f32
    %p = arith.mulf %ae, %ve : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// Not fused: a [K, N] weight in a tiled layout has no logical [N, K] view;
// transposing tiles is a repack.
!TKN = !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 4, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 4]>>

// CHECK-LABEL: func.func @matmul_kn_tiled_weight
// CHECK: linalg.matmul
// CHECK-NOT: qtensor.linear
func.func @matmul_kn_tiled_weight(%x: tensor<4x8xf16>, %w: !TKN, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %b = qtensor.dequantize %w : !TKN -> tensor<8x8xf16>
  // expected-remark @+1 {{not fused into qtensor.linear: the [K, N] weight has no [N, K] view: input layout must be logical: rearranging a physical layout is a qtensor.repack}}
  %y = linalg.matmul ins(%x, %b : tensor<4x8xf16>, tensor<8x8xf16>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
