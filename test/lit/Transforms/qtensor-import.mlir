// RUN: qopt %s -qtensor-import -split-input-file -allow-unregistered-dialect | FileCheck %s
// RUN: qopt %s -qtensor-import=remarks=true -split-input-file -allow-unregistered-dialect -verify-diagnostics | FileCheck %s
// RUN: qopt %s -qtensor-import -split-input-file -allow-unregistered-dialect | qopt -split-input-file -allow-unregistered-dialect | FileCheck %s

// Upstream quant types and raw arith dequantizations become qtensor ops with
// the granularity recovered from the type or from the broadcast structure and
// checked against the shapes. Each reason to leave one alone has a case whose
// remark (remarks=true) names it and whose CHECKs show the IR untouched. The
// third RUN line re-parses the output: everything the pass writes verifies.

//===----------------------------------------------------------------------===//
// quant.scast / quant.dcast / quant.qcast
//===----------------------------------------------------------------------===//

// Per tensor: one scale, zero-point 0 (symmetric); i8 storage is si8 codes.
// CHECK: #si8_per_tensor = #qtensor.affine<code = si8, scheme = symmetric, granularity = per_tensor, scale = f32>
// CHECK-LABEL: func.func @quant_per_tensor
// CHECK-SAME: (%[[C:.*]]: tensor<4x8xi8>)
// CHECK-DAG: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG: %[[CODES:.*]] = tensor.bitcast %[[C]] : tensor<4x8xi8> to tensor<4x8xsi8>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[CODES]], %[[S]] : tensor<4x8xsi8>, tensor<f32> -> !qtensor.tensor<4x8xf32, #si8_per_tensor>
// CHECK: %[[D:.*]] = qtensor.dequantize %[[Q]] : !qtensor.tensor<4x8xf32, #si8_per_tensor> -> tensor<4x8xf32>
// CHECK: return %[[D]]
// CHECK-NOT: quant.
func.func @quant_per_tensor(%c: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %q = quant.scast %c : tensor<4x8xi8> to tensor<4x8x!quant.uniform<i8:f32, 0.5>>
  %d = quant.dcast %q : tensor<4x8x!quant.uniform<i8:f32, 0.5>> to tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// Per axis, unsigned with zero-points: integer zero-points in the code type;
// scales are rounded to the expressed type f16, which qtensor reconstructs.
// CHECK: #ui8_asym_per_axis0 = #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f16>
// CHECK-LABEL: func.func @quant_per_axis_asymmetric
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01, 2.000000e+00]> : tensor<3xf16>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<[128, 120, 3]> : tensor<3xui8>
// CHECK-DAG: %[[CODES:.*]] = tensor.bitcast %{{.*}} : tensor<3x8xi8> to tensor<3x8xui8>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[CODES]], %[[S]], %[[Z]] : tensor<3x8xui8>, tensor<3xf16>, tensor<3xui8> -> !qtensor.tensor<3x8xf16, #ui8_asym_per_axis0>
// CHECK: qtensor.dequantize %[[Q]] : !qtensor.tensor<3x8xf16, #ui8_asym_per_axis0> -> tensor<3x8xf16>
func.func @quant_per_axis_asymmetric(%c: tensor<3x8xi8>) -> tensor<3x8xf16> {
  %q = quant.scast %c : tensor<3x8xi8> to tensor<3x8x!quant.uniform<u8:f16:0, {0.5:128, 0.25:120, 2.0:3}>>
  %d = quant.dcast %q : tensor<3x8x!quant.uniform<u8:f16:0, {0.5:128, 0.25:120, 2.0:3}>> to tensor<3x8xf16>
  return %d : tensor<3x8xf16>
}

// -----

// Sub-channel {0:1, 1:4}: groups of 4 along axis 1, one row of scales per
// row. The range [-8, 7] of i8 storage is exactly si4: the codes are
// truncated to i4 (lossless within the declared range) and reinterpreted.
// CHECK: #si4_group4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = bf16>
// CHECK-LABEL: func.func @quant_sub_channel_si4_in_i8
// CHECK-SAME: (%[[C:.*]]: tensor<2x8xi8>)
// CHECK-DAG: %[[S:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xbf16>
// CHECK-DAG: %[[T:.*]] = arith.trunci %[[C]] : tensor<2x8xi8> to tensor<2x8xi4>
// CHECK-DAG: %[[CODES:.*]] = tensor.bitcast %[[T]] : tensor<2x8xi4> to tensor<2x8xsi4>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[CODES]], %[[S]] : tensor<2x8xsi4>, tensor<2x2xbf16> -> !qtensor.tensor<2x8xbf16, #si4_group4>
// CHECK: qtensor.dequantize %[[Q]]
func.func @quant_sub_channel_si4_in_i8(%c: tensor<2x8xi8>) -> tensor<2x8xbf16> {
  %q = quant.scast %c : tensor<2x8xi8> to tensor<2x8x!quant.uniform<i8<-8:7>:bf16:{0:1, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>>
  %d = quant.dcast %q : tensor<2x8x!quant.uniform<i8<-8:7>:bf16:{0:1, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<2x8xbf16>
  return %d : tensor<2x8xbf16>
}

// -----

// Sub-channel {1:4} alone: axis 0 is one block, so every row shares the same
// group scales and zero-points. qtensor groups are row-bounded: the qparams
// are replicated per row, exactly.
// CHECK: #ui8_asym_group4 = #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 4, scale = f32>
// CHECK-LABEL: func.func @quant_sub_channel_shared_rows
// CHECK-DAG: %[[S:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<{{\[\[}}1, 2], [1, 2], [1, 2]]> : tensor<3x2xui8>
// CHECK: qtensor.assemble %{{.*}}, %[[S]], %[[Z]] : tensor<3x8xui8>, tensor<3x2xf32>, tensor<3x2xui8> -> !qtensor.tensor<3x8xf32, #ui8_asym_group4>
func.func @quant_sub_channel_shared_rows(%c: tensor<3x8xi8>) -> tensor<3x8xf32> {
  %q = quant.scast %c : tensor<3x8xi8> to tensor<3x8x!quant.uniform<u8:f32:{1:4}, {{1.0:1, 2.0:2}}>>
  %d = quant.dcast %q : tensor<3x8x!quant.uniform<u8:f32:{1:4}, {{1.0:1, 2.0:2}}>> to tensor<3x8xf32>
  return %d : tensor<3x8xf32>
}

// -----

// Constant codes are checked against the storage range before they are
// narrowed: -8 is not in i8<-7:7>, so si4 narrow_range cannot hold it.
// CHECK-LABEL: func.func @quant_constant_code_outside_range
// CHECK: quant.scast
// CHECK-NOT: qtensor.
func.func @quant_constant_code_outside_range() -> tensor<4xf32> {
  %c = arith.constant dense<[1, -7, 7, -8]> : tensor<4xi8>
  // expected-remark @+1 {{qtensor-import: 'quant.scast' not imported: constant code -8 at flat index 3 is outside the storage range [-7, 7]}}
  %q = quant.scast %c : tensor<4xi8> to tensor<4x!quant.uniform<i8<-7:7>:f32, 0.5>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8<-7:7>:f32, 0.5>> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// Constant codes inside the range are narrowed here: si4 constants that
// qtensor.assemble checks.
// CHECK: #si4_per_tensor = #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f32, narrow_range = true>
// CHECK-LABEL: func.func @quant_constant_codes_narrowed
// CHECK: %[[CODES:.*]] = arith.constant dense<[1, -7, 7, 0]> : tensor<4xsi4>
// CHECK: qtensor.assemble %[[CODES]], %{{.*}} : tensor<4xsi4>, tensor<f32> -> !qtensor.tensor<4xf32, #si4_per_tensor>
func.func @quant_constant_codes_narrowed() -> tensor<4xf32> {
  %c = arith.constant dense<[1, -7, 7, 0]> : tensor<4xi8>
  %q = quant.scast %c : tensor<4xi8> to tensor<4x!quant.uniform<i8<-7:7>:f32, 0.5>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8<-7:7>:f32, 0.5>> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// Replicating shared scales per row is bounded: 2^25 rows of 2 groups would
// need more constant qparams than the import writes out.
// CHECK-LABEL: func.func @quant_replication_too_large
// CHECK: quant.scast
// CHECK-NOT: qtensor.
func.func @quant_replication_too_large(%c: tensor<33554432x8xi8>) -> tensor<33554432x8xf32> {
  // expected-remark @+1 {{qtensor-import: 'quant.scast' not imported: the qparam tensor would hold more than 16777216 entries}}
  %q = quant.scast %c : tensor<33554432x8xi8> to tensor<33554432x8x!quant.uniform<i8:f32:{1:4}, {{1.0, 2.0}}>>
  %d = quant.dcast %q : tensor<33554432x8x!quant.uniform<i8:f32:{1:4}, {{1.0, 2.0}}>> to tensor<33554432x8xf32>
  return %d : tensor<33554432x8xf32>
}

// -----

// quant.qcast becomes qtensor.quantize with the type's qparams; the restricted
// range [-7, 7] of i8 storage is si4 with narrow_range. The storage cast back
// to i8 takes the codes apart and widens them again.
// CHECK: #si4_group4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f32, narrow_range = true>
// CHECK-LABEL: func.func @quant_qcast_narrow_range
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[S:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[Q:.*]] = qtensor.quantize %[[X]], %[[S]] : tensor<2x8xf32>, tensor<2x2xf32> -> !qtensor.tensor<2x8xf32, #si4_group4>
// CHECK: %[[D:.*]] = qtensor.dequantize %[[Q]] : !qtensor.tensor<2x8xf32, #si4_group4> -> tensor<2x8xf32>
// CHECK: %[[CODES:.*]], %{{.*}} = qtensor.disassemble %[[Q]] : !qtensor.tensor<2x8xf32, #si4_group4> -> tensor<2x8xsi4>, tensor<2x2xf32>
// CHECK: %[[I4:.*]] = tensor.bitcast %[[CODES]] : tensor<2x8xsi4> to tensor<2x8xi4>
// CHECK: %[[I8:.*]] = arith.extsi %[[I4]] : tensor<2x8xi4> to tensor<2x8xi8>
// CHECK: return %[[D]], %[[I8]]
// CHECK-NOT: quant.
func.func @quant_qcast_narrow_range(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi8>) {
  %q = quant.qcast %x : tensor<2x8xf32> to tensor<2x8x!quant.uniform<i8<-7:7>:f32:{0:1, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>>
  %d = quant.dcast %q : tensor<2x8x!quant.uniform<i8<-7:7>:f32:{0:1, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<2x8xf32>
  %s = quant.scast %q : tensor<2x8x!quant.uniform<i8<-7:7>:f32:{0:1, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<2x8xi8>
  return %d, %s : tensor<2x8xf32>, tensor<2x8xi8>
}

// -----

// A storage-cast round trip gives back the very integers it started from;
// all-zero per-axis zero-points make an unsigned symmetric descriptor.
// CHECK: #ui8_per_axis0 = #qtensor.affine<code = ui8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f32>
// CHECK-LABEL: func.func @quant_scast_round_trip
// CHECK-SAME: (%[[C:.*]]: tensor<2x8xi8>)
// CHECK: %[[Q:.*]] = qtensor.assemble %{{.*}}, %{{.*}} : tensor<2x8xui8>, tensor<2xf32> -> !qtensor.tensor<2x8xf32, #ui8_per_axis0>
// CHECK: %[[D:.*]] = qtensor.dequantize %[[Q]]
// CHECK: return %[[C]], %[[D]]
func.func @quant_scast_round_trip(%c: tensor<2x8xi8>) -> (tensor<2x8xi8>, tensor<2x8xf32>) {
  %q = quant.scast %c : tensor<2x8xi8> to tensor<2x8x!quant.uniform<u8:f32:0, {0.5:0, 0.25:0}>>
  %d = quant.dcast %q : tensor<2x8x!quant.uniform<u8:f32:0, {0.5:0, 0.25:0}>> to tensor<2x8xf32>
  %i = quant.scast %q : tensor<2x8x!quant.uniform<u8:f32:0, {0.5:0, 0.25:0}>> to tensor<2x8xi8>
  return %i, %d : tensor<2x8xi8>, tensor<2x8xf32>
}

// -----

// A use that cannot take a !qtensor.tensor keeps the quant value alive; the
// dequantize is imported all the same.
// CHECK-LABEL: func.func @quant_value_also_returned
// CHECK: %[[Q:.*]] = quant.scast
// CHECK: %[[D:.*]] = qtensor.dequantize
// CHECK: return %[[D]], %[[Q]]
func.func @quant_value_also_returned(%c: tensor<4xi8>) -> (tensor<4xf32>, tensor<4x!quant.uniform<i8:f32, 0.5>>) {
  // expected-remark @+1 {{qtensor-import: 'quant.scast' result keeps its quant type for 1 use(s) that cannot take a !qtensor.tensor (first: 'func.return'); its quant.dcast and quant.scast uses were imported}}
  %q = quant.scast %c : tensor<4xi8> to tensor<4x!quant.uniform<i8:f32, 0.5>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.5>> to tensor<4xf32>
  return %d, %q : tensor<4xf32>, tensor<4x!quant.uniform<i8:f32, 0.5>>
}

// -----

// CHECK-LABEL: func.func @quant_two_d_blocks
// CHECK: quant.scast
// CHECK: quant.dcast
// CHECK-NOT: qtensor.
func.func @quant_two_d_blocks(%c: tensor<4x8xi8>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{qtensor-import: 'quant.scast' not imported: scales form 2-D blocks (2 along axis 0, 4 along axis 1); #qtensor.affine groups run along one axis}}
  %q = quant.scast %c : tensor<4x8xi8> to tensor<4x8x!quant.uniform<i8:f32:{0:2, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>>
  %d = quant.dcast %q : tensor<4x8x!quant.uniform<i8:f32:{0:2, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @quant_storage_i16
// CHECK: quant.scast
// CHECK: quant.dcast
func.func @quant_storage_i16(%c: tensor<4xi16>) -> tensor<4xf32> {
  // expected-remark @+1 {{qtensor-import: 'quant.scast' not imported: its storage type i16 has 16 bits; qtensor codes have 2, 3, 4, 5, 6 or 8}}
  %q = quant.scast %c : tensor<4xi16> to tensor<4x!quant.uniform<i16:f32, 0.5>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i16:f32, 0.5>> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @quant_storage_range_no_code
// CHECK: quant.scast
func.func @quant_storage_range_no_code(%c: tensor<4xi8>) -> tensor<4xf32> {
  // expected-remark @+1 {{qtensor-import: 'quant.scast' not imported: its storage range [1, 255] of u8 is neither the full nor the narrow range of a 2-, 3-, 4-, 5-, 6- or 8-bit code}}
  %q = quant.scast %c : tensor<4xi8> to tensor<4x!quant.uniform<u8<1:255>:f32, 0.5>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<u8<1:255>:f32, 0.5>> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @quant_narrow_range_with_zero_point
// CHECK: quant.scast
func.func @quant_narrow_range_with_zero_point(%c: tensor<4xi8>) -> tensor<4xf32> {
  // expected-remark @+1 {{qtensor-import: 'quant.scast' not imported: its narrow storage range comes with non-zero zero-points; qtensor's narrow_range is symmetric only}}
  %q = quant.scast %c : tensor<4xi8> to tensor<4x!quant.uniform<i8<-127:127>:f32, 0.5:3>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8<-127:127>:f32, 0.5:3>> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @quant_zero_point_outside_codes
// CHECK: quant.scast
func.func @quant_zero_point_outside_codes(%c: tensor<4xi8>) -> tensor<4xf32> {
  // expected-remark @+1 {{qtensor-import: 'quant.scast' not imported: zero-point 9 is outside the code range [-8, 7]}}
  %q = quant.scast %c : tensor<4xi8> to tensor<4x!quant.uniform<i8<-8:7>:f32, 0.5:9>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8<-8:7>:f32, 0.5:9>> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @quant_expressed_f64
// CHECK: quant.qcast
func.func @quant_expressed_f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-remark @+1 {{qtensor-import: 'quant.qcast' not imported: its expressed type f64 is not f16, bf16 or f32, the types qtensor reconstructs}}
  %q = quant.qcast %x : tensor<4xf64> to tensor<4x!quant.uniform<i8:f64, 0.5>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8:f64, 0.5>> to tensor<4xf64>
  return %d : tensor<4xf64>
}

// -----

// CHECK-LABEL: func.func @quant_dynamic_shape
// CHECK: quant.scast
func.func @quant_dynamic_shape(%c: tensor<?xi8>) -> tensor<?xf32> {
  // expected-remark @+1 {{qtensor-import: 'quant.scast' not imported: its shape tensor<?x!quant.uniform<i8:f32, 5.000000e-01>> is dynamic; qtensor tensors have static shapes}}
  %q = quant.scast %c : tensor<?xi8> to tensor<?x!quant.uniform<i8:f32, 0.5>>
  %d = quant.dcast %q : tensor<?x!quant.uniform<i8:f32, 0.5>> to tensor<?xf32>
  return %d : tensor<?xf32>
}

// -----

// A quantized value of any other origin is read as its codes: a quant.scast
// to its storage type (the same bits), then assembled. A function argument
// keeps its type; its dcast reads the codes.
// CHECK-LABEL: func.func @quant_dcast_of_argument
// CHECK-SAME: (%[[ARG:.*]]: tensor<4x!quant.uniform<i8:f32, 5.000000e-01>>)
// CHECK: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[RAW:.*]] = quant.scast %[[ARG]] : tensor<4x!quant.uniform<i8:f32, 5.000000e-01>> to tensor<4xi8>
// CHECK: %[[C:.*]] = tensor.bitcast %[[RAW]] : tensor<4xi8> to tensor<4xsi8>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[C]], %[[S]] : tensor<4xsi8>, tensor<f32> -> !qtensor.tensor<4xf32, #si8_per_tensor>
// CHECK: %[[D:.*]] = qtensor.dequantize %[[Q]] : !qtensor.tensor<4xf32, #si8_per_tensor> -> tensor<4xf32>
// CHECK: return %[[D]]
func.func @quant_dcast_of_argument(%q: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4xf32> {
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.5>> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// A quantized ml_program global (external: its codes live outside the
// module), per-axis u8 with zero-points.
// CHECK-LABEL: func.func @quant_dcast_of_global
// CHECK: %[[W:.*]] = ml_program.global_load_const @w
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01, 2.000000e+00]> : tensor<3xf16>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<[128, 120, 3]> : tensor<3xui8>
// CHECK: %[[RAW:.*]] = quant.scast %[[W]] : {{.*}} to tensor<3x8xi8>
// CHECK: %[[C:.*]] = tensor.bitcast %[[RAW]] : tensor<3x8xi8> to tensor<3x8xui8>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[C]], %[[S]], %[[Z]] : tensor<3x8xui8>, tensor<3xf16>, tensor<3xui8> -> !qtensor.tensor<3x8xf16, #ui8_asym_per_axis0>
// CHECK: qtensor.dequantize %[[Q]]
// CHECK-NOT: quant.dcast
ml_program.global private @w(#ml_program.extern : tensor<3x8x!quant.uniform<u8:f16:0, {0.5:128, 0.25:120, 2.0:3}>>) : tensor<3x8x!quant.uniform<u8:f16:0, {0.5:128, 0.25:120, 2.0:3}>>
func.func @quant_dcast_of_global() -> tensor<3x8xf16> {
  %q = ml_program.global_load_const @w : tensor<3x8x!quant.uniform<u8:f16:0, {0.5:128, 0.25:120, 2.0:3}>>
  %d = quant.dcast %q : tensor<3x8x!quant.uniform<u8:f16:0, {0.5:128, 0.25:120, 2.0:3}>> to tensor<3x8xf16>
  return %d : tensor<3x8xf16>
}

// -----

// A front end's own constant op (another dialect), sub-channel si4 in i8
// storage: the codes are narrowed as for quant.scast.
// CHECK-LABEL: func.func @quant_dcast_of_other_op
// CHECK: %[[V:.*]] = "frontend.const"()
// CHECK: %[[RAW:.*]] = quant.scast %[[V]] : {{.*}} to tensor<2x8xi8>
// CHECK: %[[N:.*]] = arith.trunci %[[RAW]] : tensor<2x8xi8> to tensor<2x8xi4>
// CHECK: %[[C:.*]] = tensor.bitcast %[[N]] : tensor<2x8xi4> to tensor<2x8xsi4>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[C]], {{.*}} -> !qtensor.tensor<2x8xbf16, #si4_group4>
// CHECK: qtensor.dequantize %[[Q]]
func.func @quant_dcast_of_other_op() -> tensor<2x8xbf16> {
  %q = "frontend.const"() : () -> tensor<2x8x!quant.uniform<i8<-8:7>:bf16:{0:1, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>>
  %d = quant.dcast %q : tensor<2x8x!quant.uniform<i8<-8:7>:bf16:{0:1, 1:4}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<2x8xbf16>
  return %d : tensor<2x8xbf16>
}

// -----

// What cannot be imported is named at the dcast, with the reason.
// CHECK-LABEL: func.func @quant_dcast_of_dynamic_argument
// CHECK: quant.dcast
func.func @quant_dcast_of_dynamic_argument(%q: tensor<?x!quant.uniform<i8:f32, 0.5>>) -> tensor<?xf32> {
  // expected-remark @+1 {{qtensor-import: 'quant.dcast' of block argument #0 not imported: its shape tensor<?x!quant.uniform<i8:f32, 5.000000e-01>> is dynamic; qtensor tensors have static shapes}}
  %d = quant.dcast %q : tensor<?x!quant.uniform<i8:f32, 0.5>> to tensor<?xf32>
  return %d : tensor<?xf32>
}

//===----------------------------------------------------------------------===//
// The arith dequantization feeding a contraction
//===----------------------------------------------------------------------===//

// -----

// Per-output-channel scales broadcast along K, a matmul reading B as [N, K]:
// per_axis along axis 0. The dead chain is erased.
// CHECK: #si8_per_axis0 = #qtensor.affine<code = si8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16>
// CHECK-LABEL: func.func @arith_per_axis
// CHECK-SAME: (%[[X:.*]]: tensor<2x16xf16>, %[[C:.*]]: tensor<8x16xi8>, %[[S:.*]]: tensor<8xf16>)
// CHECK: %[[CODES:.*]] = tensor.bitcast %[[C]] : tensor<8x16xi8> to tensor<8x16xsi8>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[CODES]], %[[S]] : tensor<8x16xsi8>, tensor<8xf16> -> !qtensor.tensor<8x16xf16, #si8_per_axis0>
// CHECK: %[[W:.*]] = qtensor.dequantize %[[Q]] : !qtensor.tensor<8x16xf16, #si8_per_axis0> -> tensor<8x16xf16>
// CHECK-NOT: arith.sitofp
// CHECK-NOT: arith.mulf
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.matmul {{.*}} ins(%[[X]], %[[W]] : tensor<2x16xf16>, tensor<8x16xf16>)
func.func @arith_per_axis(%x: tensor<2x16xf16>, %c: tensor<8x16xi8>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  %f = arith.sitofp %c : tensor<8x16xi8> to tensor<8x16xf16>
  %e = tensor.empty() : tensor<8x16xf16>
  %sb = linalg.broadcast ins(%s : tensor<8xf16>) outs(%e : tensor<8x16xf16>) dimensions = [1]
  %w = arith.mulf %f, %sb : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Grouped asymmetric W4: [8, 2] scales and i4 zero-points broadcast to
// [8, 2, 8] and collapsed to [8, 16]: groups of 8 along K. The zero-points
// are converted with uitofp before the broadcast, like the codes (extui then
// uitofp): integer zero-points, ui4.
// CHECK: #ui4_asym_group8 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 8, scale = f16>
// CHECK-LABEL: func.func @arith_grouped_integer_zero_points
// CHECK-SAME: (%[[X:.*]]: tensor<2x16xf16>, %[[C:.*]]: tensor<8x16xi4>, %[[S:.*]]: tensor<8x2xf16>, %[[Z:.*]]: tensor<8x2xi4>)
// CHECK-DAG: %[[CODES:.*]] = tensor.bitcast %[[C]] : tensor<8x16xi4> to tensor<8x16xui4>
// CHECK-DAG: %[[ZC:.*]] = tensor.bitcast %[[Z]] : tensor<8x2xi4> to tensor<8x2xui4>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[CODES]], %[[S]], %[[ZC]] : tensor<8x16xui4>, tensor<8x2xf16>, tensor<8x2xui4> -> !qtensor.tensor<8x16xf16, #ui4_asym_group8>
// CHECK: %[[W:.*]] = qtensor.dequantize %[[Q]]
// CHECK-NOT: arith.uitofp
// CHECK: linalg.matmul {{.*}} ins(%[[X]], %[[W]] :
func.func @arith_grouped_integer_zero_points(%x: tensor<2x16xf16>, %c: tensor<8x16xi4>, %s: tensor<8x2xf16>, %z: tensor<8x2xi4>) -> tensor<2x8xf16> {
  %ce = arith.extui %c : tensor<8x16xi4> to tensor<8x16xi32>
  %f = arith.uitofp %ce : tensor<8x16xi32> to tensor<8x16xf16>
  %e3 = tensor.empty() : tensor<8x2x8xf16>
  %sb = linalg.broadcast ins(%s : tensor<8x2xf16>) outs(%e3 : tensor<8x2x8xf16>) dimensions = [2]
  %sc = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<8x2x8xf16> into tensor<8x16xf16>
  %zf = arith.uitofp %z : tensor<8x2xi4> to tensor<8x2xf16>
  %zb = linalg.broadcast ins(%zf : tensor<8x2xf16>) outs(%e3 : tensor<8x2x8xf16>) dimensions = [2]
  %zc = tensor.collapse_shape %zb [[0], [1, 2]] : tensor<8x2x8xf16> into tensor<8x16xf16>
  %sub = arith.subf %f, %zc : tensor<8x16xf16>
  %w = arith.mulf %sub, %sc : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// A real-valued zero-point tensor is a float zero-point in the scale type.
// CHECK: #ui4_asym_group8 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = float, granularity = group, axis = 1, group_size = 8, scale = f16>
// CHECK-LABEL: func.func @arith_grouped_float_zero_points
// CHECK-SAME: %[[S:[^:]*]]: tensor<4x2xf16>, %[[Z:[^:]*]]: tensor<4x2xf16>)
// CHECK: qtensor.assemble %{{.*}}, %[[S]], %[[Z]] : tensor<4x16xui4>, tensor<4x2xf16>, tensor<4x2xf16> -> !qtensor.tensor<4x16xf16, #ui4_asym_group8>
func.func @arith_grouped_float_zero_points(%x: tensor<2x16xf16>, %c: tensor<4x16xi4>, %s: tensor<4x2xf16>, %z: tensor<4x2xf16>) -> tensor<2x4xf16> {
  %f = arith.uitofp %c : tensor<4x16xi4> to tensor<4x16xf16>
  %e3 = tensor.empty() : tensor<4x2x8xf16>
  %sb = linalg.broadcast ins(%s : tensor<4x2xf16>) outs(%e3 : tensor<4x2x8xf16>) dimensions = [2]
  %sc = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<4x2x8xf16> into tensor<4x16xf16>
  %zb = linalg.broadcast ins(%z : tensor<4x2xf16>) outs(%e3 : tensor<4x2x8xf16>) dimensions = [2]
  %zc = tensor.collapse_shape %zb [[0], [1, 2]] : tensor<4x2x8xf16> into tensor<4x16xf16>
  %sub = arith.subf %f, %zc : tensor<4x16xf16>
  %w = arith.mulf %sc, %sub : tensor<4x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x4xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x4xf16>) -> tensor<2x4xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<4x16xf16>) outs(%acc : tensor<2x4xf16>) -> tensor<2x4xf16>
  return %y : tensor<2x4xf16>
}

// -----

// The other grouped spelling: codes expanded to [K/G, G, N], scales
// broadcast in the expanded space, the result collapsed back for a plain
// matmul reading B as [K, N]. The logical weight is the [16, 8] codes, with
// groups of 8 along K = axis 0; the expand/collapse pair disappears.
// CHECK: #si4_group8_axis0 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 8, scale = f32>
// CHECK-LABEL: func.func @arith_grouped_expanded_codes
// CHECK-SAME: (%[[X:.*]]: tensor<2x16xf32>, %[[C:.*]]: tensor<16x8xi4>, %[[S:.*]]: tensor<2x8xf32>)
// CHECK: %[[CODES:.*]] = tensor.bitcast %[[C]] : tensor<16x8xi4> to tensor<16x8xsi4>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[CODES]], %[[S]] : tensor<16x8xsi4>, tensor<2x8xf32> -> !qtensor.tensor<16x8xf32, #si4_group8_axis0>
// CHECK: %[[W:.*]] = qtensor.dequantize %[[Q]] : !qtensor.tensor<16x8xf32, #si4_group8_axis0> -> tensor<16x8xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<2x16xf32>, tensor<16x8xf32>)
func.func @arith_grouped_expanded_codes(%x: tensor<2x16xf32>, %c: tensor<16x8xi4>, %s: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c3 = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 8, 8] : tensor<16x8xi4> into tensor<2x8x8xi4>
  %f = arith.sitofp %c3 : tensor<2x8x8xi4> to tensor<2x8x8xf32>
  %e3 = tensor.empty() : tensor<2x8x8xf32>
  %sb = linalg.broadcast ins(%s : tensor<2x8xf32>) outs(%e3 : tensor<2x8x8xf32>) dimensions = [1]
  %w3 = arith.mulf %f, %sb : tensor<2x8x8xf32>
  %w = tensor.collapse_shape %w3 [[0, 1], [2]] : tensor<2x8x8xf32> into tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// 3-D codes [N, K/G, G] with [N, K/G] scales, collapsed to [N, K] for the
// matmul: the codes are collapsed the same way. The float zero-point 8.0 is
// an exact ui4 code: an integer zero-point.
// CHECK: #ui4_asym_group8 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 8, scale = f16>
// CHECK-LABEL: func.func @arith_grouped_three_d_codes
// CHECK-SAME: (%[[X:.*]]: tensor<2x16xf16>, %[[C:.*]]: tensor<4x2x8xi4>, %[[S:.*]]: tensor<4x2xf16>)
// CHECK-DAG: %[[C2:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0], [1, 2]] : tensor<4x2x8xi4> into tensor<4x16xi4>
// CHECK-DAG: %[[CODES:.*]] = tensor.bitcast %[[C2]] : tensor<4x16xi4> to tensor<4x16xui4>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<8> : tensor<4x2xui4>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[CODES]], %[[S]], %[[Z]] : tensor<4x16xui4>, tensor<4x2xf16>, tensor<4x2xui4> -> !qtensor.tensor<4x16xf16, #ui4_asym_group8>
// CHECK: %[[W:.*]] = qtensor.dequantize %[[Q]]
// CHECK: linalg.matmul {{.*}} ins(%[[X]], %[[W]] :
func.func @arith_grouped_three_d_codes(%x: tensor<2x16xf16>, %c: tensor<4x2x8xi4>, %s: tensor<4x2xf16>) -> tensor<2x4xf16> {
  %f = arith.uitofp %c : tensor<4x2x8xi4> to tensor<4x2x8xf16>
  %eight = arith.constant dense<8.0> : tensor<4x2x8xf16>
  %sub = arith.subf %f, %eight : tensor<4x2x8xf16>
  %e3 = tensor.empty() : tensor<4x2x8xf16>
  %sb = linalg.broadcast ins(%s : tensor<4x2xf16>) outs(%e3 : tensor<4x2x8xf16>) dimensions = [2]
  %w3 = arith.mulf %sub, %sb : tensor<4x2x8xf16>
  %w = tensor.collapse_shape %w3 [[0], [1, 2]] : tensor<4x2x8xf16> into tensor<4x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x4xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x4xf16>) -> tensor<2x4xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<4x16xf16>) outs(%acc : tensor<2x4xf16>) -> tensor<2x4xf16>
  return %y : tensor<2x4xf16>
}

// -----

// Run-time group scales shared by every row ([K/G] broadcast over N and G):
// replicated per row with a linalg.broadcast to the [N, K/G] qtensor needs.
// CHECK: #si4_group8 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 8, scale = f16>
// CHECK-LABEL: func.func @arith_group_scales_shared_by_rows
// CHECK-SAME: %[[S:[^:]*]]: tensor<2xf16>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<8x2xf16>
// CHECK: %[[SR:.*]] = linalg.broadcast ins(%[[S]] : tensor<2xf16>) outs(%[[INIT]] : tensor<8x2xf16>) dimensions = [0]
// CHECK: qtensor.assemble %{{.*}}, %[[SR]] : tensor<8x16xsi4>, tensor<8x2xf16> -> !qtensor.tensor<8x16xf16, #si4_group8>
func.func @arith_group_scales_shared_by_rows(%x: tensor<2x16xf16>, %c: tensor<8x16xi4>, %s: tensor<2xf16>) -> tensor<2x8xf16> {
  %f = arith.sitofp %c : tensor<8x16xi4> to tensor<8x16xf16>
  %e3 = tensor.empty() : tensor<8x2x8xf16>
  %sb = linalg.broadcast ins(%s : tensor<2xf16>) outs(%e3 : tensor<8x2x8xf16>) dimensions = [0, 2]
  %sc = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<8x2x8xf16> into tensor<8x16xf16>
  %w = arith.mulf %f, %sc : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// A splat constant scale is per tensor; constant codes stay constants in the
// code type, where qtensor.assemble checks their range.
// CHECK: #si4_per_tensor = #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>
// CHECK-LABEL: func.func @arith_per_tensor_constant_codes
// CHECK-DAG: %[[CODES:.*]] = arith.constant dense<{{\[\[}}1, -2], [3, -8]]> : tensor<2x2xsi4>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<1.250000e-01> : tensor<f16>
// CHECK: qtensor.assemble %[[CODES]], %[[S]] : tensor<2x2xsi4>, tensor<f16> -> !qtensor.tensor<2x2xf16, #si4_per_tensor>
func.func @arith_per_tensor_constant_codes(%x: tensor<3x2xf16>) -> tensor<3x2xf16> {
  %c = arith.constant dense<[[1, -2], [3, -8]]> : tensor<2x2xi4>
  %f = arith.sitofp %c : tensor<2x2xi4> to tensor<2x2xf16>
  %s = arith.constant dense<0.125> : tensor<2x2xf16>
  %w = arith.mulf %f, %s : tensor<2x2xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<3x2xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<3x2xf16>) -> tensor<3x2xf16>
  %y = linalg.matmul ins(%x, %w : tensor<3x2xf16>, tensor<2x2xf16>) outs(%acc : tensor<3x2xf16>) -> tensor<3x2xf16>
  return %y : tensor<3x2xf16>
}

// -----

// The elementwise linalg.generic spelling (torch-mlir, IREE): scales read
// through (n, k floordiv 4), so K = 10 makes three groups, the last a
// two-element tail (qtensor's tail = partial). The zero-point 8 is subtracted
// as an integer after widening the codes: ui4 codes, integer zero-point 8.
// The weight reaches the matmul through a linalg.transpose, which stays.
// CHECK: #ui4_asym_group4 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 4, scale = f16>
// CHECK-LABEL: func.func @arith_generic_group_tail
// CHECK-SAME: (%[[X:.*]]: tensor<2x10xf16>, %[[C:.*]]: tensor<8x10xi4>, %[[S:.*]]: tensor<8x3xf16>)
// CHECK-DAG: %[[CODES:.*]] = tensor.bitcast %[[C]] : tensor<8x10xi4> to tensor<8x10xui4>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<8> : tensor<8x3xui4>
// CHECK: %[[Q:.*]] = qtensor.assemble %[[CODES]], %[[S]], %[[Z]] : tensor<8x10xui4>, tensor<8x3xf16>, tensor<8x3xui4> -> !qtensor.tensor<8x10xf16, #ui4_asym_group4>
// CHECK: %[[W:.*]] = qtensor.dequantize %[[Q]]
// CHECK-NOT: linalg.generic
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<8x10xf16>)
// CHECK: linalg.matmul ins(%[[X]], %[[T]] :
#id = affine_map<(n, k) -> (n, k)>
#group4 = affine_map<(n, k) -> (n, k floordiv 4)>
func.func @arith_generic_group_tail(%x: tensor<2x10xf16>, %c: tensor<8x10xi4>, %s: tensor<8x3xf16>) -> tensor<2x8xf16> {
  %e = tensor.empty() : tensor<8x10xf16>
  %w = linalg.generic {indexing_maps = [#id, #group4, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : tensor<8x10xi4>, tensor<8x3xf16>) outs(%e : tensor<8x10xf16>) {
  ^bb0(%q: i4, %sc: f16, %out: f16):
    %q32 = arith.extui %q : i4 to i32
    %eight = arith.constant 8 : i32
    %d = arith.subi %q32, %eight : i32
    %f = arith.sitofp %d : i32 to f16
    %r = arith.mulf %f, %sc : f16
    linalg.yield %r : f16
  } -> tensor<8x10xf16>
  %et = tensor.empty() : tensor<10x8xf16>
  %t = linalg.transpose ins(%w : tensor<8x10xf16>) outs(%et : tensor<10x8xf16>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul ins(%x, %t : tensor<2x10xf16>, tensor<10x8xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// The generic spelling with [N, 1] scales read through (n, 0) and signed
// codes (extsi then sitofp): per_axis along N.
// CHECK: #si4_per_axis0 = #qtensor.affine<code = si4, scheme = symmetric, granularity = per_axis, axis = 0, scale = bf16>
// CHECK-LABEL: func.func @arith_generic_per_axis_unit_dim
// CHECK-SAME: %[[S:[^:]*]]: tensor<4x1xbf16>)
// CHECK: %[[S1:.*]] = tensor.collapse_shape %[[S]] {{\[\[}}0, 1]] : tensor<4x1xbf16> into tensor<4xbf16>
// CHECK: qtensor.assemble %{{.*}}, %[[S1]] : tensor<4x8xsi4>, tensor<4xbf16> -> !qtensor.tensor<4x8xbf16, #si4_per_axis0>
func.func @arith_generic_per_axis_unit_dim(%x: tensor<2x8xbf16>, %c: tensor<4x8xi4>, %s: tensor<4x1xbf16>) -> tensor<2x4xbf16> {
  %e = tensor.empty() : tensor<4x8xbf16>
  %w = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n, 0)>, affine_map<(n, k) -> (n, k)>], iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : tensor<4x8xi4>, tensor<4x1xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%q: i4, %sc: bf16, %out: bf16):
    %q8 = arith.extsi %q : i4 to i8
    %f = arith.sitofp %q8 : i8 to bf16
    %r = arith.mulf %sc, %f : bf16
    linalg.yield %r : bf16
  } -> tensor<4x8xbf16>
  %zero = arith.constant 0.0 : bf16
  %o = tensor.empty() : tensor<2x4xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%o : tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x8xbf16>, tensor<4x8xbf16>) outs(%acc : tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// Near misses: each stays as it is; remarks=true says why.

// Scales broadcast along the wrong axis: one per K, shared by every output
// channel, is no weight quantization a linear kernel knows.
// CHECK-LABEL: func.func @arith_scales_along_reduction
// CHECK: arith.mulf
// CHECK-NOT: qtensor.
func.func @arith_scales_along_reduction(%x: tensor<2x16xf16>, %c: tensor<8x16xi8>, %s: tensor<16xf16>) -> tensor<2x8xf16> {
  %f = arith.sitofp %c : tensor<8x16xi8> to tensor<8x16xf16>
  %e = tensor.empty() : tensor<8x16xf16>
  %sb = linalg.broadcast ins(%s : tensor<16xf16>) outs(%e : tensor<8x16xf16>) dimensions = [0]
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: the scales vary along axis 1, the dimension the contraction reduces over (K); per-axis weight scales must run along the output channels}}
  %w = arith.mulf %f, %sb : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Groups along N (the collapse runs over the output channels).
// CHECK-LABEL: func.func @arith_groups_along_output_channels
// CHECK: arith.mulf
// CHECK-NOT: qtensor.
func.func @arith_groups_along_output_channels(%x: tensor<2x16xf16>, %c: tensor<8x16xi4>, %s: tensor<2x16xf16>) -> tensor<2x8xf16> {
  %f = arith.sitofp %c : tensor<8x16xi4> to tensor<8x16xf16>
  %e3 = tensor.empty() : tensor<2x4x16xf16>
  %sb = linalg.broadcast ins(%s : tensor<2x16xf16>) outs(%e3 : tensor<2x4x16xf16>) dimensions = [1]
  %sc = tensor.collapse_shape %sb [[0, 1], [2]] : tensor<2x4x16xf16> into tensor<8x16xf16>
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: the scales form groups of 4 along axis 0, an output-channel dimension; weight groups must run along the reduction axis (K)}}
  %w = arith.mulf %f, %sc : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// The group count does not fit K: groups of 4 over K = 10 make 3, the scales
// have 4 (the generic verifier only asks for at least 3).
// CHECK-LABEL: func.func @arith_group_count_mismatch
// CHECK: linalg.generic
// CHECK-NOT: qtensor.
func.func @arith_group_count_mismatch(%x: tensor<2x10xf16>, %c: tensor<8x10xi4>, %s: tensor<8x4xf16>) -> tensor<2x8xf16> {
  %e = tensor.empty() : tensor<8x10xf16>
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: scales have 4 entries along axis 1 but groups of 4 over its 10 elements need ceil(10 / 4) = 3}}
  %w = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n, k floordiv 4)>, affine_map<(n, k) -> (n, k)>], iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : tensor<8x10xi4>, tensor<8x4xf16>) outs(%e : tensor<8x10xf16>) {
  ^bb0(%q: i4, %sc: f16, %out: f16):
    %f = arith.sitofp %q : i4 to f16
    %r = arith.mulf %f, %sc : f16
    linalg.yield %r : f16
  } -> tensor<8x10xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x10xf16>, tensor<8x10xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// 2-D blocks: 2 rows x 4 columns share one scale.
// CHECK-LABEL: func.func @arith_two_d_blocks
// CHECK: linalg.generic
// CHECK-NOT: qtensor.
func.func @arith_two_d_blocks(%x: tensor<2x16xf16>, %c: tensor<8x16xi4>, %s: tensor<4x4xf16>) -> tensor<2x8xf16> {
  %e = tensor.empty() : tensor<8x16xf16>
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: scales form 2-D blocks (2 along axis 0, 4 along axis 1); #qtensor.affine groups run along one axis}}
  %w = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n floordiv 2, k floordiv 4)>, affine_map<(n, k) -> (n, k)>], iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : tensor<8x16xi4>, tensor<4x4xf16>) outs(%e : tensor<8x16xf16>) {
  ^bb0(%q: i4, %sc: f16, %out: f16):
    %f = arith.sitofp %q : i4 to f16
    %r = arith.mulf %f, %sc : f16
    linalg.yield %r : f16
  } -> tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Scales broadcast over the inner split of K repeat with a period: no
// granularity.
// CHECK-LABEL: func.func @arith_scales_periodic_within_group
// CHECK: arith.mulf
// CHECK-NOT: qtensor.
func.func @arith_scales_periodic_within_group(%x: tensor<2x16xf32>, %c: tensor<4x16xi4>, %s: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %c3 = tensor.expand_shape %c [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xi4> into tensor<4x2x8xi4>
  %f = arith.sitofp %c3 : tensor<4x2x8xi4> to tensor<4x2x8xf32>
  %e3 = tensor.empty() : tensor<4x2x8xf32>
  %sb = linalg.broadcast ins(%s : tensor<4x8xf32>) outs(%e3 : tensor<4x2x8xf32>) dimensions = [1]
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: scale dimension 1 cycles within a block of axis 1: entries repeat periodically along it, which is no quantization granularity}}
  %w3 = arith.mulf %f, %sb : tensor<4x2x8xf32>
  %w = tensor.collapse_shape %w3 [[0], [1, 2]] : tensor<4x2x8xf32> into tensor<4x16xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf32>, tensor<4x16xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Zero-points grouped while the scales are per output channel.
// CHECK-LABEL: func.func @arith_zero_points_finer_than_scales
// CHECK: arith.mulf
// CHECK-NOT: qtensor.
func.func @arith_zero_points_finer_than_scales(%x: tensor<2x16xf16>, %c: tensor<8x16xi4>, %s: tensor<8xf16>, %z: tensor<8x2xf16>) -> tensor<2x8xf16> {
  %f = arith.uitofp %c : tensor<8x16xi4> to tensor<8x16xf16>
  %e = tensor.empty() : tensor<8x16xf16>
  %sb = linalg.broadcast ins(%s : tensor<8xf16>) outs(%e : tensor<8x16xf16>) dimensions = [1]
  %e3 = tensor.empty() : tensor<8x2x8xf16>
  %zb = linalg.broadcast ins(%z : tensor<8x2xf16>) outs(%e3 : tensor<8x2x8xf16>) dimensions = [2]
  %zc = tensor.collapse_shape %zb [[0], [1, 2]] : tensor<8x2x8xf16> into tensor<8x16xf16>
  %sub = arith.subf %f, %zc : tensor<8x16xf16>
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: zero-points vary along axis 1 in blocks of 8 but the scales are per_axis along axis 0; zero-points must share the scales' qparam shape}}
  %w = arith.mulf %sub, %sb : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Sign-extended codes converted as unsigned: negative codes become huge.
// CHECK-LABEL: func.func @arith_extsi_then_uitofp
// CHECK: arith.uitofp
// CHECK-NOT: qtensor.
func.func @arith_extsi_then_uitofp(%x: tensor<2x16xf16>, %c: tensor<8x16xi4>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  %ce = arith.extsi %c : tensor<8x16xi4> to tensor<8x16xi16>
  %f = arith.uitofp %ce : tensor<8x16xi16> to tensor<8x16xf16>
  %e = tensor.empty() : tensor<8x16xf16>
  %sb = linalg.broadcast ins(%s : tensor<8xf16>) outs(%e : tensor<8x16xf16>) dimensions = [1]
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: the codes are sign-extended and then converted by arith.uitofp, which turns negative values into large ones}}
  %w = arith.mulf %f, %sb : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// q - z in the codes' own width wraps.
// CHECK-LABEL: func.func @arith_subi_in_code_width
// CHECK: arith.subi
// CHECK-NOT: qtensor.
func.func @arith_subi_in_code_width(%x: tensor<2x16xf16>, %c: tensor<8x16xi8>, %z: tensor<8x16xi8>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  %d = arith.subi %c, %z : tensor<8x16xi8>
  %f = arith.sitofp %d : tensor<8x16xi8> to tensor<8x16xf16>
  %e = tensor.empty() : tensor<8x16xf16>
  %sb = linalg.broadcast ins(%s : tensor<8xf16>) outs(%e : tensor<8x16xf16>) dimensions = [1]
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: arith.subi runs in the codes' own width, where q - z wraps; the import needs the codes extended first}}
  %w = arith.mulf %f, %sb : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// 16-bit codes: the qtensor descriptor has none.
// CHECK-LABEL: func.func @arith_codes_i16
// CHECK: arith.sitofp
// CHECK-NOT: qtensor.
func.func @arith_codes_i16(%x: tensor<2x16xf32>, %c: tensor<8x16xi16>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  %f = arith.sitofp %c : tensor<8x16xi16> to tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %sb = linalg.broadcast ins(%s : tensor<8xf32>) outs(%e : tensor<8x16xf32>) dimensions = [1]
  // expected-remark @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: qtensor rejects the descriptor: code type must be 2, 3, 4, 5, 6 or 8 bits wide, got 16}}
  %w = arith.mulf %f, %sb : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf32>, tensor<8x16xf32>) outs(%acc : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A dequantization that reaches no contraction is left alone.
// CHECK-LABEL: func.func @arith_no_contraction
// CHECK: arith.mulf
// CHECK-NOT: qtensor.
func.func @arith_no_contraction(%c: tensor<8x16xi8>, %s: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %f = arith.sitofp %c : tensor<8x16xi8> to tensor<8x16xf16>
  // expected-remark @+1 {{qtensor-import: dequantization not imported: its result reaches no contraction operand (directly or through a linalg.transpose and a tensor.collapse_shape)}}
  %w = arith.mulf %f, %s : tensor<8x16xf16>
  return %w : tensor<8x16xf16>
}

// -----

// A plain float weight is no candidate: no remark, nothing changes.
// CHECK-LABEL: func.func @float_weight_untouched
// CHECK: arith.mulf
// CHECK-NOT: qtensor.
func.func @float_weight_untouched(%x: tensor<2x16xf16>, %w0: tensor<8x16xf16>, %g: tensor<8x16xf16>) -> tensor<2x8xf16> {
  %w = arith.mulf %w0, %g : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}
