// RUN: qopt %s | FileCheck %s
// RUN: qopt %s | qopt | FileCheck %s
// RUN: qopt %s --mlir-print-op-generic | qopt | FileCheck %s
// RUN: qopt %s > %t.1 && qopt %t.1 > %t.2 && diff %t.1 %t.2

// The seed's worked examples (M8.9 0x03B, M8.1 0x07, 0x04) as types, and every
// op in both its custom and generic form.

// Aliases name each descriptor by code type and granularity.
// CHECK-DAG: #[[LAYOUT_ALL:layout[0-9]*]] = #qtensor.layout<family = "tiled", version = 3, encoding = "msb_first", tile = [16, 8], padding = [12, 0]>
// CHECK-DAG: #[[LAYOUT_K:layout[0-9]*]] = #qtensor.layout<family = "tiled_k_major", version = 1, encoding = "lsb_first", tile = [128, 64]>
// CHECK-DAG: #si3_per_axis0 = #qtensor.affine<code = si3, scheme = symmetric, granularity = per_axis, axis = 0, scale = f32>
// CHECK-DAG: #si4_group32 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, scale = f16, encoding = offset_binary>
// CHECK-DAG: #si4_group4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, narrow_range = true>
// CHECK-DAG: #ui2_asym_per_tensor = #qtensor.affine<code = ui2, scheme = asymmetric, zero_point = min, granularity = per_tensor, scale = f16>
// CHECK-DAG: #ui4_asym_group4 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = float, granularity = group, axis = 1, group_size = 4, tail = exact, scale = bf16, rounding = nearest_away, saturation = reject, permutation = [7, 6, 5, 4, 3, 2, 1, 0], decoder_version = 2>
// CHECK-DAG: #ui4_asym_group64 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 64, scale = f16>
// CHECK-DAG: #si4_group128 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-DAG: #ui8_asym_per_axis0 = #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f32>
// CHECK-DAG: #ui4_asym_group32_nested256 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, min_code = ui6, super_group_size = 256, super_scale = f16>>
// CHECK-DAG: #ui4_group32_iq4_nl = #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f16, codebook = iq4_nl>
// CHECK-DAG: #ui4_group32_e2m1_e8m0 = #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, codebook = e2m1, scale_format = e8m0>
// CHECK-DAG: #ui4_group16_e2m1_ue4m3 = #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, codebook = e2m1, scale_format = ue4m3>
// CHECK-DAG: #ui8_per_axis0_e4m3 = #qtensor.affine<code = ui8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16, codebook = e4m3>
// CHECK-DAG: #ui4_group64_nf4 = #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 64, scale = bf16, codebook = nf4>
// CHECK-DAG: #si6_group16_nested256 = #qtensor.affine<code = si6, scheme = symmetric, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, encoding = offset_binary, nested = <scale_code = si8, super_group_size = 256, super_scale = f16>>

// 4096x4096 W4, groups of 128 along K, FP16 scales: scales are [4096, 32].
// CHECK-LABEL: func.func @w4_g128_fp16
// CHECK-SAME: (%{{.*}}: !qtensor.tensor<4096x4096xf16, #si4_group128>)
// CHECK: qtensor.disassemble %{{.*}} : !qtensor.tensor<4096x4096xf16, #si4_group128> -> tensor<4096x4096xsi4>, tensor<4096x32xf16>
func.func @w4_g128_fp16(%w: !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>) -> (tensor<4096x4096xsi4>, tensor<4096x32xf16>) {
  %c, %s = qtensor.disassemble %w : !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>> -> tensor<4096x4096xsi4>, tensor<4096x32xf16>
  return %c, %s : tensor<4096x4096xsi4>, tensor<4096x32xf16>
}

// Asymmetric per-output-channel W8 with integer zero-points.
// CHECK-LABEL: func.func @w8_asymmetric_per_channel
// CHECK: %[[Q:.*]] = qtensor.assemble %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x256xui8>, tensor<64xf32>, tensor<64xui8> -> !qtensor.tensor<64x256xf16, #ui8_asym_per_axis0>
// CHECK: qtensor.dequantize %[[Q]] : !qtensor.tensor<64x256xf16, #ui8_asym_per_axis0> -> tensor<64x256xf16>
func.func @w8_asymmetric_per_channel(%c: tensor<64x256xui8>, %s: tensor<64xf32>, %z: tensor<64xui8>) -> tensor<64x256xf16> {
  %q = qtensor.assemble %c, %s, %z : tensor<64x256xui8>, tensor<64xf32>, tensor<64xui8> -> !qtensor.tensor<64x256xf16, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f32>>
  %x = qtensor.dequantize %q : !qtensor.tensor<64x256xf16, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f32>> -> tensor<64x256xf16>
  return %x : tensor<64x256xf16>
}

// 3x5 with G = 4: two groups per row, the second a one-element tail (M8.1 0x07).
// CHECK-LABEL: func.func @tail_3x5_g4
// CHECK: qtensor.quantize %{{.*}}, %{{.*}} : tensor<3x5xf32>, tensor<3x2xf16> -> !qtensor.tensor<3x5xf32, #si4_group4>
func.func @tail_3x5_g4(%x: tensor<3x5xf32>, %s: tensor<3x2xf16>) -> tensor<3x5xf32> {
  %q = qtensor.quantize %x, %s : tensor<3x5xf32>, tensor<3x2xf16> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, narrow_range = true>>
  %y = qtensor.dequantize %q : !qtensor.tensor<3x5xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, narrow_range = true>> -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// Every optional field away from its default, a permutation and a tiled layout.
// CHECK-LABEL: func.func @all_fields
// CHECK-SAME: !qtensor.tensor<4x8xbf16, #ui4_asym_group4, #[[LAYOUT_ALL]]>
func.func @all_fields(%w: !qtensor.tensor<4x8xbf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = float, granularity = group, axis = 1, group_size = 4, tail = exact, scale = bf16, rounding = nearest_away, saturation = reject, permutation = [7, 6, 5, 4, 3, 2, 1, 0], decoder_version = 2>, #qtensor.layout<family = "tiled", version = 3, encoding = "msb_first", tile = [16, 8], padding = [12, 0]>>) {
  return
}

// ggml Q4_0 expressed as an affine descriptor: offset-8 signed codes.
// CHECK-LABEL: func.func @q4_0_like
// CHECK-SAME: !qtensor.tensor<8x64xf32, #si4_group32>
func.func @q4_0_like(%w: !qtensor.tensor<8x64xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, scale = f16, encoding = offset_binary>>) {
  return
}

// Scale-and-min (ggml Q4_1 style) per tensor, 2-bit and 3-bit codes.
// CHECK-LABEL: func.func @min_per_tensor_and_narrow_widths
// CHECK: qtensor.assemble %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xui2>, tensor<f16>, tensor<f16> -> !qtensor.tensor<2x3xf16, #ui2_asym_per_tensor>
// CHECK: qtensor.assemble %{{.*}}, %{{.*}} : tensor<5xsi3>, tensor<5xf32> -> !qtensor.tensor<5xf32, #si3_per_axis0>
func.func @min_per_tensor_and_narrow_widths(%c: tensor<2x3xui2>, %s: tensor<f16>, %m: tensor<f16>, %c3: tensor<5xsi3>, %s3: tensor<5xf32>) {
  %a = qtensor.assemble %c, %s, %m : tensor<2x3xui2>, tensor<f16>, tensor<f16> -> !qtensor.tensor<2x3xf16, #qtensor.affine<code = ui2, scheme = asymmetric, zero_point = min, granularity = per_tensor, scale = f16>>
  %b = qtensor.assemble %c3, %s3 : tensor<5xsi3>, tensor<5xf32> -> !qtensor.tensor<5xf32, #qtensor.affine<code = si3, scheme = symmetric, granularity = per_axis, axis = 0, scale = f32>>
  return
}

// Repack into a tiled layout keeps shape, element type and descriptor.
// CHECK-LABEL: func.func @repack_and_linear
// CHECK: %[[W:.*]] = qtensor.weight "blk.0.ffn_up" : !qtensor.tensor<256x512xf16, #ui4_asym_group64>
// CHECK: %[[P:.*]] = qtensor.repack %[[W]] : !qtensor.tensor<256x512xf16, #ui4_asym_group64> -> !qtensor.tensor<256x512xf16, #ui4_asym_group64, #[[LAYOUT_K]]>
// CHECK: qtensor.linear %{{.*}}, %[[P]], %{{.*}} accumulate(f32) : tensor<2x7x512xf16>, !qtensor.tensor<256x512xf16, #ui4_asym_group64, #[[LAYOUT_K]]>, tensor<256xf16> -> tensor<2x7x256xf16>
// CHECK: qtensor.linear %{{.*}}, %[[P]] accumulate(f16) : tensor<?x512xf16>, {{.*}} -> tensor<?x256xf32>
func.func @repack_and_linear(%x: tensor<2x7x512xf16>, %xd: tensor<?x512xf16>, %b: tensor<256xf16>) -> (tensor<2x7x256xf16>, tensor<?x256xf32>) {
  %w = qtensor.weight "blk.0.ffn_up" : !qtensor.tensor<256x512xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 64, scale = f16>>
  %p = qtensor.repack %w : !qtensor.tensor<256x512xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 64, scale = f16>> -> !qtensor.tensor<256x512xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 64, scale = f16>, #qtensor.layout<family = "tiled_k_major", version = 1, encoding = "lsb_first", tile = [128, 64]>>
  %y = qtensor.linear %x, %p, %b accumulate(f32) : tensor<2x7x512xf16>, !qtensor.tensor<256x512xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 64, scale = f16>, #qtensor.layout<family = "tiled_k_major", version = 1, encoding = "lsb_first", tile = [128, 64]>>, tensor<256xf16> -> tensor<2x7x256xf16>
  %yd = qtensor.linear %xd, %p accumulate(f16) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 64, scale = f16>, #qtensor.layout<family = "tiled_k_major", version = 1, encoding = "lsb_first", tile = [128, 64]>> -> tensor<?x256xf32>
  return %y, %yd : tensor<2x7x256xf16>, tensor<?x256xf32>
}

// A float weight reference (unquantized tensors live in the artifact too).
// CHECK-LABEL: func.func @float_weight
// CHECK: qtensor.weight "model.norm.weight" : tensor<4096xf32>
func.func @float_weight() -> tensor<4096xf32> {
  %w = qtensor.weight "model.norm.weight" : tensor<4096xf32>
  return %w : tensor<4096xf32>
}

// A [K, N] weight with groups along K (axis 0) and its [N, K] view, whose
// groups along K are axis 1.
// CHECK-LABEL: func.func @transpose_kn_weight
// CHECK: %[[T:.*]] = qtensor.transpose %{{.*}} : !qtensor.tensor<512x256xf16, #{{.*}}> -> !qtensor.tensor<256x512xf16, #si4_group128>
// CHECK: return %[[T]]
func.func @transpose_kn_weight(%w: !qtensor.tensor<512x256xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 128, scale = f16>>) -> !qtensor.tensor<256x512xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>> {
  %t = qtensor.transpose %w : !qtensor.tensor<512x256xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 128, scale = f16>> -> !qtensor.tensor<256x512xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>
  return %t : !qtensor.tensor<256x512xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>
}

// Placements as qtensor-place-shards writes them: a cut group's qparams held
// by both neighbours (replicate_boundary), and re-grouped ranks with the
// re-verification mark (repack).
// CHECK-LABEL: func.func @placements
// CHECK: qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 6, 12], group_policy = replicate_boundary, qparams = [0, 2, 1, 3]>}
// CHECK: qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 6, 12], group_policy = repack, qparams = [0, 2, 2, 4]>, qtensor.reverify}
func.func @placements(%x: tensor<2x12xf16>, %w: !qtensor.tensor<8x12xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) -> (tensor<2x8xf16>, tensor<2x8xf16>) {
  %a = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 6, 12], group_policy = replicate_boundary, qparams = [0, 2, 1, 3]>} : tensor<2x12xf16>, !qtensor.tensor<8x12xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<2x8xf16>
  %b = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 6, 12], group_policy = repack, qparams = [0, 2, 2, 4]>, qtensor.reverify} : tensor<2x12xf16>, !qtensor.tensor<8x12xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<2x8xf16>
  return %a, %b : tensor<2x8xf16>, tensor<2x8xf16>
}

// ggml Q4_K and Q6_K: first-level scale (and min) codes under f16
// super-block scales; the qparam operands are the decoded f32 first level.
// CHECK-LABEL: func.func @ggml_k_quants
// CHECK: qtensor.disassemble %{{.*}} : !qtensor.tensor<8x512xf32, #ui4_asym_group32_nested256> -> tensor<8x512xui4>, tensor<8x16xf32>, tensor<8x16xf32>
// CHECK: qtensor.disassemble %{{.*}} : !qtensor.tensor<8x512xf32, #si6_group16_nested256> -> tensor<8x512xsi6>, tensor<8x32xf32>
func.func @ggml_k_quants(%a: !qtensor.tensor<8x512xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, min_code = ui6, super_group_size = 256, super_scale = f16>>>, %b: !qtensor.tensor<8x512xf32, #qtensor.affine<code = si6, scheme = symmetric, encoding = offset_binary, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, nested = <scale_code = si8, super_group_size = 256, super_scale = f16>>>) -> (tensor<8x512xui4>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x512xsi6>, tensor<8x32xf32>) {
  %c, %s, %m = qtensor.disassemble %a : !qtensor.tensor<8x512xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, min_code = ui6, super_group_size = 256, super_scale = f16>>> -> tensor<8x512xui4>, tensor<8x16xf32>, tensor<8x16xf32>
  %c6, %s6 = qtensor.disassemble %b : !qtensor.tensor<8x512xf32, #qtensor.affine<code = si6, scheme = symmetric, encoding = offset_binary, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, nested = <scale_code = si8, super_group_size = 256, super_scale = f16>>> -> tensor<8x512xsi6>, tensor<8x32xf32>
  return %c, %s, %m, %c6, %s6 : tensor<8x512xui4>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x512xsi6>, tensor<8x32xf32>
}

// Codebooks: ui4 codes index a declared 16-entry table (ggml IQ4_NL, NF4).
// CHECK-LABEL: func.func @codebooks
// CHECK: qtensor.disassemble %{{.*}} : !qtensor.tensor<8x64xf16, #ui4_group32_iq4_nl> -> tensor<8x64xui4>, tensor<8x2xf16>
// CHECK: qtensor.disassemble %{{.*}} : !qtensor.tensor<8x128xbf16, #ui4_group64_nf4> -> tensor<8x128xui4>, tensor<8x2xbf16>
func.func @codebooks(%a: !qtensor.tensor<8x64xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f16, codebook = iq4_nl>>, %b: !qtensor.tensor<8x128xbf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 64, scale = bf16, codebook = nf4>>) -> (tensor<8x64xui4>, tensor<8x2xf16>, tensor<8x128xui4>, tensor<8x2xbf16>) {
  %c, %s = qtensor.disassemble %a : !qtensor.tensor<8x64xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f16, codebook = iq4_nl>> -> tensor<8x64xui4>, tensor<8x2xf16>
  %c2, %s2 = qtensor.disassemble %b : !qtensor.tensor<8x128xbf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 64, scale = bf16, codebook = nf4>> -> tensor<8x128xui4>, tensor<8x2xbf16>
  return %c, %s, %c2, %s2 : tensor<8x64xui4>, tensor<8x2xf16>, tensor<8x128xui4>, tensor<8x2xbf16>
}

// FP4: e2m1 codes with e8m0 (MXFP4) and ue4m3 (NVFP4) scales; the scale
// operand carries the decoded f32 values.
// CHECK-LABEL: func.func @fp4
// CHECK: qtensor.disassemble %{{.*}} : !qtensor.tensor<8x64xbf16, #ui4_group32_e2m1_e8m0> -> tensor<8x64xui4>, tensor<8x2xf32>
// CHECK: qtensor.disassemble %{{.*}} : !qtensor.tensor<8x64xf16, #ui4_group16_e2m1_ue4m3> -> tensor<8x64xui4>, tensor<8x4xf32>
func.func @fp4(%a: !qtensor.tensor<8x64xbf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, codebook = e2m1, scale_format = e8m0>>, %b: !qtensor.tensor<8x64xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, codebook = e2m1, scale_format = ue4m3>>) -> (tensor<8x64xui4>, tensor<8x2xf32>, tensor<8x64xui4>, tensor<8x4xf32>) {
  %c, %s = qtensor.disassemble %a : !qtensor.tensor<8x64xbf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, codebook = e2m1, scale_format = e8m0>> -> tensor<8x64xui4>, tensor<8x2xf32>
  %c2, %s2 = qtensor.disassemble %b : !qtensor.tensor<8x64xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, codebook = e2m1, scale_format = ue4m3>> -> tensor<8x64xui4>, tensor<8x4xf32>
  return %c, %s, %c2, %s2 : tensor<8x64xui4>, tensor<8x2xf32>, tensor<8x64xui4>, tensor<8x4xf32>
}

// FP8: ui8 codes that are E4M3 floats, a scale per output channel.
// CHECK-LABEL: func.func @fp8
// CHECK: qtensor.disassemble %{{.*}} : !qtensor.tensor<8x64xf16, #ui8_per_axis0_e4m3> -> tensor<8x64xui8>, tensor<8xf16>
func.func @fp8(%a: !qtensor.tensor<8x64xf16, #qtensor.affine<code = ui8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16, codebook = e4m3>>) -> (tensor<8x64xui8>, tensor<8xf16>) {
  %c, %s = qtensor.disassemble %a : !qtensor.tensor<8x64xf16, #qtensor.affine<code = ui8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16, codebook = e4m3>> -> tensor<8x64xui8>, tensor<8xf16>
  return %c, %s : tensor<8x64xui8>, tensor<8xf16>
}

