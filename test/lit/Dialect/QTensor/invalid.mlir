// RUN: qopt %s -split-input-file -verify-diagnostics

// One case per verifier diagnostic of the qtensor dialect (seed M8.9 0x05C),
// each named for the failure it exercises.

// expected-error @+1 {{code type must be signed (si4) or unsigned (ui4), got signless 'i4'}}
func.func @code_signless(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = i4, scheme = symmetric, granularity = per_tensor, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{scale type must be f16, bf16 or f32, got 'f64'}}
func.func @scale_f64(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_tensor, scale = f64>>) {
  return
}

// -----

// expected-error @+1 {{code type must be 2, 3, 4, 5, 6 or 8 bits wide, got 7}}
func.func @code_7_bits(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui7, scheme = symmetric, granularity = per_tensor, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{symmetric scheme cannot have a zero-point (got integer)}}
func.func @symmetric_with_zero_point(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, zero_point = integer, granularity = per_tensor, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{asymmetric scheme needs a zero-point kind (integer, float or min)}}
func.func @asymmetric_without_zero_point(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = asymmetric, granularity = per_tensor, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{narrow_range (the restricted range [-Q, Q]) needs a signed code type and the symmetric scheme}}
func.func @narrow_range_unsigned(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_tensor, scale = f16, narrow_range = true>>) {
  return
}

// -----

// expected-error @+1 {{offset_binary encoding applies to signed codes only}}
func.func @offset_binary_unsigned(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_tensor, scale = f16, encoding = offset_binary>>) {
  return
}

// -----

// expected-error @+1 {{per_tensor granularity takes no axis (got 0)}}
func.func @per_tensor_with_axis(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_tensor, axis = 0, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{per_tensor granularity takes no group_size}}
func.func @per_tensor_with_group_size(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_tensor, group_size = 4, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{a permutation needs a per_axis or group axis}}
func.func @per_tensor_with_permutation(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_tensor, scale = f16, permutation = [1, 0]>>) {
  return
}

// -----

// expected-error @+1 {{per_axis granularity needs a non-negative axis}}
func.func @per_axis_without_axis(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_axis, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{per_axis granularity takes no group_size}}
func.func @per_axis_with_group_size(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_axis, axis = 0, group_size = 4, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{group granularity needs a non-negative axis}}
func.func @group_without_axis(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, group_size = 4, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{group granularity needs a positive group_size, got 0}}
func.func @group_without_size(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{tail rule 'exact' applies to group granularity only}}
func.func @exact_tail_per_axis(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_axis, axis = 0, tail = exact, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{decoder_version must be at least 1}}
func.func @decoder_version_zero(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, decoder_version = 0>>) {
  return
}

// -----

// expected-error @+1 {{element type must be f16, bf16 or f32, got 'f64'}}
func.func @element_f64(%w: !qtensor.tensor<4x8xf64, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{element type must be f16, bf16 or f32, got 'i8'}}
func.func @element_integer(%w: !qtensor.tensor<4x8xi8, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{expected a descriptor attribute (e.g. #qtensor.affine<...>)}}
func.func @descriptor_not_a_family(%w: !qtensor.tensor<4x8xf32, #qtensor.layout<family = "logical", version = 1, encoding = "lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{axis 2 is out of range for a rank-2 tensor}}
func.func @group_axis_out_of_range(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 2, group_size = 4, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{axis 1 is out of range for a rank-1 tensor}}
func.func @per_axis_out_of_range(%w: !qtensor.tensor<8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_axis, axis = 1, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{tail rule 'exact' needs dimension 1 (5) to be a multiple of the group size 4}}
func.func @exact_tail_not_multiple(%w: !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, tail = exact, scale = f16>>) {
  return
}

// -----

// expected-error @+1 {{permutation has 3 entries but axis 1 has 8}}
func.func @permutation_wrong_length(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, permutation = [0, 1, 2]>>) {
  return
}

// -----

// expected-error @+1 {{permutation entry 3 (4) is outside [0, 4)}}
func.func @permutation_out_of_range(%w: !qtensor.tensor<2x4xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, permutation = [0, 1, 2, 4]>>) {
  return
}

// -----

// expected-error @+1 {{permutation is not a bijection: 1 appears twice}}
func.func @permutation_not_bijection(%w: !qtensor.tensor<2x4xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, permutation = [0, 1, 1, 3]>>) {
  return
}

// -----

// expected-error @+1 {{layout: layout has 1 tile sizes for a rank-2 tensor}}
func.func @layout_tile_rank(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4]>>) {
  return
}

// -----

// expected-error @+1 {{layout: layout has 1 padding entries for a rank-2 tensor}}
func.func @layout_padding_rank(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 8], padding = [0]>>) {
  return
}

// -----

// expected-error @+1 {{the logical layout has no tiles or padding}}
func.func @layout_logical_with_tiles(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "logical", version = 1, encoding = "lsb_first", tile = [4, 8]>>) {
  return
}

// -----

// expected-error @+1 {{tile size 0 of dimension 1 must be positive}}
func.func @layout_tile_zero(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 0]>>) {
  return
}

// -----

// expected-error @+1 {{padding -1 of dimension 0 must be non-negative}}
func.func @layout_padding_negative(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 8], padding = [-1, 0]>>) {
  return
}

// -----

// expected-error @+1 {{layout: padding 4 of dimension 0 must be smaller than its tile 4}}
func.func @layout_padding_not_below_tile(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 8], padding = [4, 0]>>) {
  return
}

// -----

// expected-error @+1 {{layout: dimension 1 (4096 + padding 0) is not a multiple of the tile size 96}}
func.func @layout_not_tile_multiple(%w: !qtensor.tensor<4096x4096xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [128, 96]>>) {
  return
}

// -----

// expected-error @+1 {{layout version must be at least 1}}
func.func @layout_version_zero(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "tiled", version = 0, encoding = "lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{layout family must not be empty}}
func.func @layout_family_empty(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "", version = 1, encoding = "lsb_first">>) {
  return
}

// -----

func.func @weight_empty_name() {
  // expected-error @+1 {{'qtensor.weight' op needs a non-empty artifact tensor name}}
  %w = qtensor.weight "" : !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @quantize_shape_mismatch(%x: tensor<3x4xf32>, %s: tensor<3x2xf16>) {
  // expected-error @+1 {{'qtensor.quantize' op input shape must equal the quantized tensor's logical shape [3, 5]}}
  %q = qtensor.quantize %x, %s : tensor<3x4xf32>, tensor<3x2xf16> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @quantize_integer_input(%x: tensor<3x5xi32>, %s: tensor<3x2xf16>) {
  // expected-error @+1 {{'qtensor.quantize' op input must have a float element type, got 'i32'}}
  %q = qtensor.quantize %x, %s : tensor<3x5xi32>, tensor<3x2xf16> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @scales_grouped_along_wrong_axis(%x: tensor<3x5xf32>, %s: tensor<1x5xf16>) {
  // expected-error @+1 {{'qtensor.quantize' op scales have shape [1, 5] but the descriptor needs [3, 2] (ceil(5 / 4) = 2 groups along axis 1)}}
  %q = qtensor.quantize %x, %s : tensor<3x5xf32>, tensor<1x5xf16> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @scales_flat_group_count(%c: tensor<3x5xui4>, %s: tensor<4xf16>) {
  // expected-error @+1 {{'qtensor.assemble' op scales have shape [4] but the descriptor needs [3, 2] (ceil(5 / 4) = 2 groups along axis 1)}}
  %q = qtensor.assemble %c, %s : tensor<3x5xui4>, tensor<4xf16> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @scales_per_axis_shape(%c: tensor<3x5xui8>, %s: tensor<5xf32>) {
  // expected-error @+1 {{'qtensor.assemble' op scales have shape [5] but the descriptor needs [3] (per_axis along axis 0)}}
  %q = qtensor.assemble %c, %s : tensor<3x5xui8>, tensor<5xf32> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f32>>
  return
}

// -----

func.func @scales_per_tensor_shape(%c: tensor<3x5xui8>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'qtensor.assemble' op scales have shape [1] but the descriptor needs [] (per_tensor: one scale)}}
  %q = qtensor.assemble %c, %s : tensor<3x5xui8>, tensor<1xf32> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui8, scheme = symmetric, granularity = per_tensor, scale = f32>>
  return
}

// -----

func.func @scales_element_type(%c: tensor<3x5xui4>, %s: tensor<3x2xf32>) {
  // expected-error @+1 {{'qtensor.assemble' op scales have element type 'f32' but the descriptor needs 'f16'}}
  %q = qtensor.assemble %c, %s : tensor<3x5xui4>, tensor<3x2xf32> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @zero_points_on_symmetric(%c: tensor<3x5xui4>, %s: tensor<3x2xf16>, %z: tensor<3x2xui4>) {
  // expected-error @+1 {{'qtensor.assemble' op has zero-points but the descriptor's scheme has none}}
  %q = qtensor.assemble %c, %s, %z : tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui4> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @zero_points_missing(%c: tensor<3x5xui4>, %s: tensor<3x2xf16>) {
  // expected-error @+1 {{'qtensor.assemble' op needs zero-points of element type 'ui4': the descriptor is asymmetric}}
  %q = qtensor.assemble %c, %s : tensor<3x5xui4>, tensor<3x2xf16> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @zero_points_shape(%c: tensor<3x5xui4>, %s: tensor<3x2xf16>, %z: tensor<3x1xui4>) {
  // expected-error @+1 {{'qtensor.assemble' op zero-points have shape [3, 1] but the descriptor needs [3, 2] (ceil(5 / 4) = 2 groups along axis 1)}}
  %q = qtensor.assemble %c, %s, %z : tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x1xui4> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @zero_points_element_type(%c: tensor<3x5xui4>, %s: tensor<3x2xf16>, %z: tensor<3x2xui8>) {
  // expected-error @+1 {{'qtensor.assemble' op zero-points have element type 'ui8' but the descriptor needs 'ui4'}}
  %q = qtensor.assemble %c, %s, %z : tensor<3x5xui4>, tensor<3x2xf16>, tensor<3x2xui8> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @dequantize_result_type(%q: !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.dequantize' op result type must be 'tensor<3x5xf32>' (the logical shape and element type), got 'tensor<3x5xf16>'}}
  %x = qtensor.dequantize %q : !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<3x5xf16>
  return
}

// -----

func.func @assemble_codes_shape(%c: tensor<5x3xui4>, %s: tensor<3x2xf16>) {
  // expected-error @+1 {{'qtensor.assemble' op codes shape must equal the quantized tensor's logical shape [3, 5]}}
  %q = qtensor.assemble %c, %s : tensor<5x3xui4>, tensor<3x2xf16> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @assemble_codes_type(%c: tensor<3x5xsi4>, %s: tensor<3x2xf16>) {
  // expected-error @+1 {{'qtensor.assemble' op codes have element type 'si4' but the descriptor's code type is 'ui4'}}
  %q = qtensor.assemble %c, %s : tensor<3x5xsi4>, tensor<3x2xf16> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @assemble_code_outside_narrow_range(%s: tensor<f16>) {
  %c = arith.constant dense<[1, -7, 7, -8]> : tensor<4xsi4>
  // expected-error @+1 {{'qtensor.assemble' op code -8 at flat index 3 is outside the code range [-7, 7]}}
  %q = qtensor.assemble %c, %s : tensor<4xsi4>, tensor<f16> -> !qtensor.tensor<4xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16, narrow_range = true>>
  return
}

// -----

func.func @disassemble_codes_type(%q: !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.disassemble' op codes have element type 'ui8' but the descriptor's code type is 'ui4'}}
  %c, %s = qtensor.disassemble %q : !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<3x5xui8>, tensor<3x2xf16>
  return
}

// -----

func.func @disassemble_missing_zero_points(%q: !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.disassemble' op needs zero-points of element type 'ui4': the descriptor is asymmetric}}
  %c, %s = qtensor.disassemble %q : !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<3x5xui4>, tensor<3x2xf16>
  return
}

// -----

func.func @repack_changes_shape(%q: !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.repack' op must preserve the logical shape: [3, 5] vs [5, 3]}}
  %p = qtensor.repack %q : !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> !qtensor.tensor<5x3xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @repack_changes_element_type(%q: !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.repack' op must preserve the element type}}
  %p = qtensor.repack %q : !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> !qtensor.tensor<3x5xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
  return
}

// -----

func.func @repack_changes_groups(%q: !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.repack' op must preserve the descriptor: changing codes, groups or qparams is a conversion, not a repack}}
  %p = qtensor.repack %q : !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 2, scale = f16>>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x8xf16>, %w: !qtensor.tensor<2x6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op weight must be rank 2 [N, K], got rank 3}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x8xf16>, !qtensor.tensor<2x6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<2x6xf16>
  return
}

// -----

func.func @linear_groups_along_n(%x: tensor<2x8xf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 0, group_size = 2, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op weight groups must run along the reduction axis 1 (K), got axis 0}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x8xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 0, group_size = 2, scale = f16>> -> tensor<2x6xf16>
  return
}

// -----

func.func @linear_per_axis_along_k(%x: tensor<2x8xf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui8, scheme = symmetric, granularity = per_axis, axis = 1, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op per-axis weight scales must run along the output-channel axis 0 (N), got axis 1}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x8xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui8, scheme = symmetric, granularity = per_axis, axis = 1, scale = f16>> -> tensor<2x6xf16>
  return
}

// -----

func.func @linear_input_rank_zero(%x: tensor<f16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op input must have rank >= 1 ([..., K])}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<f16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<6xf16>
  return
}

// -----

func.func @linear_k_mismatch(%x: tensor<2x7xf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op input reduction size 7 does not match the weight's K = 8}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x7xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<2x6xf16>
  return
}

// -----

func.func @linear_input_element_type(%x: tensor<2x8xbf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op input element type 'bf16' must match the weight's reconstructed type 'f16'}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x8xbf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<2x6xf16>
  return
}

// -----

func.func @linear_result_shape(%x: tensor<2x8xf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op result shape [2, 8] must be [2, 6] (input batch dims followed by N)}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x8xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<2x8xf16>
  return
}

// -----

func.func @linear_output_type(%x: tensor<2x8xf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op output element type must be f16, bf16 or f32, got 'i32'}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x8xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<2x6xi32>
  return
}

// -----

func.func @linear_accumulator(%x: tensor<2x8xf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op accumulator must be f32 or the activation type 'f16', got 'bf16'}}
  %y = qtensor.linear %x, %w accumulate(bf16) : tensor<2x8xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<2x6xf16>
  return
}

// -----

func.func @linear_bias_shape(%x: tensor<2x8xf16>, %b: tensor<8xf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op bias shape [8] must be [6]}}
  %y = qtensor.linear %x, %w, %b accumulate(f32) : tensor<2x8xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>, tensor<8xf16> -> tensor<2x6xf16>
  return
}

// -----

func.func @linear_bias_type(%x: tensor<2x8xf16>, %b: tensor<6xf32>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op bias element type 'f32' must match the output type 'f16'}}
  %y = qtensor.linear %x, %w, %b accumulate(f32) : tensor<2x8xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>, tensor<6xf32> -> tensor<2x6xf16>
  return
}

// -----

func.func @assemble_splat_code_outside_narrow_range(%s: tensor<f16>) {
  %c = arith.constant dense<-8> : tensor<4096x4096xsi4>
  // expected-error @+1 {{'qtensor.assemble' op code -8 at flat index 0 is outside the code range [-7, 7]}}
  %q = qtensor.assemble %c, %s : tensor<4096x4096xsi4>, tensor<f16> -> !qtensor.tensor<4096x4096xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16, narrow_range = true>>
  return
}

// -----

// expected-error @+1 {{the logical layout is version 1 with encoding "lsb_first"; got version 2 with encoding "lsb_first"}}
func.func @layout_logical_other_version(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>, #qtensor.layout<family = "logical", version = 2, encoding = "lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{the logical layout is version 1 with encoding "lsb_first"; got version 1 with encoding "msb_first"}}
func.func @layout_logical_other_encoding(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>, #qtensor.layout<family = "logical", version = 1, encoding = "msb_first">>) {
  return
}

// -----

// expected-error @+1 {{omit `tile` instead of giving an empty list}}
func.func @layout_empty_tile_list(%w: !qtensor.tensor<4x8xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>, #qtensor.layout<family = "logical", version = 1, encoding = "lsb_first", tile = []>>) {
  return
}


// -----

func.func @linear_result_shape_dynamic(%x: tensor<?x8xf16>, %w: !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.linear' op result shape [4, 6] must be [?, 6] (input batch dims followed by N)}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x8xf16>, !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>> -> tensor<4x6xf16>
  return
}

// -----

func.func @transpose_input_rank(%w: !qtensor.tensor<2x6x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>) {
  // expected-error @+1 {{'qtensor.transpose' op input must be rank 2, got rank 3}}
  %t = qtensor.transpose %w : !qtensor.tensor<2x6x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>> -> !qtensor.tensor<8x6x2xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>
  return
}

// -----

func.func @transpose_tiled_input(%w: !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 4]>>) {
  // expected-error @+1 {{'qtensor.transpose' op input layout must be logical: rearranging a physical layout is a qtensor.repack}}
  %t = qtensor.transpose %w : !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 4]>> -> !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>
  return
}

// -----

func.func @transpose_tiled_result(%w: !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>) {
  // expected-error @+1 {{'qtensor.transpose' op result layout must be logical: rearranging a physical layout is a qtensor.repack}}
  %t = qtensor.transpose %w : !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>> -> !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>, #qtensor.layout<family = "tiled", version = 1, encoding = "lsb_first", tile = [4, 4]>>
  return
}

// -----

func.func @transpose_result_shape_not_swapped(%w: !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>) {
  // expected-error @+1 {{'qtensor.transpose' op result shape [8, 6] must be [6, 8] (the input's dimensions swapped)}}
  %t = qtensor.transpose %w : !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>> -> !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>
  return
}

// -----

func.func @transpose_result_element_type(%w: !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>) {
  // expected-error @+1 {{'qtensor.transpose' op result element type 'bf16' must be the input's 'f16'}}
  %t = qtensor.transpose %w : !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>> -> !qtensor.tensor<6x8xbf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>
  return
}

// -----

// Groups along K of a [K, N] weight are groups along axis 1 of its [N, K]
// transpose: keeping axis 0 would put them along N.
func.func @transpose_group_axis_not_moved(%w: !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 4, scale = f16>>) {
  // expected-error @+1 {{'qtensor.transpose' op result descriptor must be #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16> (the input's, with the axis moved to its new dimension), got #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 4, scale = f16>}}
  %t = qtensor.transpose %w : !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 4, scale = f16>> -> !qtensor.tensor<6x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 0, group_size = 4, scale = f16>>
  return
}

// -----

func.func @transpose_per_axis_not_moved(%w: !qtensor.tensor<8x6xf16, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 1, scale = f32>>) {
  // expected-error @+1 {{'qtensor.transpose' op result descriptor must be #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f32> (the input's, with the axis moved to its new dimension), got #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 1, scale = f32>}}
  %t = qtensor.transpose %w : !qtensor.tensor<8x6xf16, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 1, scale = f32>> -> !qtensor.tensor<6x8xf16, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 1, scale = f32>>
  return
}

// -----

// Every other field stays: a transpose does not change the code type.
func.func @transpose_changes_code_type(%w: !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>>) {
  // expected-error @+1 {{'qtensor.transpose' op result descriptor must be #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16> (the input's, with the axis moved to its new dimension), got #qtensor.affine<code = si8, scheme = symmetric, granularity = per_tensor, scale = f16>}}
  %t = qtensor.transpose %w : !qtensor.tensor<8x6xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = per_tensor, scale = f16>> -> !qtensor.tensor<6x8xf16, #qtensor.affine<code = si8, scheme = symmetric, granularity = per_tensor, scale = f16>>
  return
}

// -----

// #qtensor.placement on its own (seed M8.9 0x06B).

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_zero_ranks(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{placement needs at least 1 rank, got 0}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 0, dim = 1, bounds = [0], group_policy = error, qparams = []>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_row_slicing_dim_0(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{a row placement slices dim 1, got 0}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 0, bounds = [0, 4, 8], group_policy = error, qparams = [0, 4, 0, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_bounds_count(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{bounds needs ranks + 1 entries for 2 ranks, got 2}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 16], group_policy = error, qparams = [0, 2, 2, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_bounds_start(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{bounds must start at 0, got 4}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [4, 8, 16], group_policy = error, qparams = [1, 2, 2, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_empty_slice(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{rank 1 has the empty or decreasing slice [16, 16)}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 16, 16], group_policy = error, qparams = [0, 4, 4, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_replicated_unequal(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{a replicated placement gives every rank [0, 8), but bounds[2] = 4}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = replicated, ranks = 2, dim = -1, bounds = [0, 8, 4], group_policy = error, qparams = [0, 4, 0, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_replicated_nothing(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{a replicated placement needs bounds [0, N, N, ...] with N > 0, got bounds[1] = 0}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = replicated, ranks = 2, dim = -1, bounds = [0, 0, 0], group_policy = error, qparams = [0, 4, 0, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_qparams_count(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{qparams needs 2 * ranks entries for 2 ranks, got 3}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_empty_qparam_range(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{rank 1 has the empty qparam range [2, 2)}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 2, 2]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

// `qtensor.placement` checked against the weight it slices
// (QTensorPlacement.cpp).

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_on_weight_op() {
  // expected-error @+1 {{'qtensor.placement' belongs on a qtensor.linear only}}
  %w = qtensor.weight "o_proj" {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 2, 4]>} : !W_placed
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_not_a_placement(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{'qtensor.linear' op 'qtensor.placement' must be a #qtensor.placement, got 3 : i64}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = 3} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_row_bounds_short_of_k(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{'qtensor.linear' op placement: bounds [0, 8, 12] end at 12, but the weight's K (dim 1) is 16}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 12], group_policy = error, qparams = [0, 2, 2, 3]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_column_bounds_past_n(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{'qtensor.linear' op placement: bounds [0, 8, 16] end at 16, but the weight's N (dim 0) is 8}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = column, ranks = 2, dim = 0, bounds = [0, 8, 16], group_policy = error, qparams = [0, 4, 0, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_replicated_not_all_channels(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{'qtensor.linear' op placement: a replicated placement gives every rank all 8 output channels, got bounds [0, 16, 16]}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = replicated, ranks = 2, dim = -1, bounds = [0, 16, 16], group_policy = error, qparams = [0, 4, 0, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_qparams_disagree_with_bounds(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{'qtensor.linear' op placement: qparams [0, 2, 1, 4] do not follow from the bounds: expected [0, 2, 2, 4]}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 1, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_align_cuts_group(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{'qtensor.linear' op placement: rank 1 starts at K = 6, inside group 1 (G = 4), which group_policy = align does not allow}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 6, 16], group_policy = align, qparams = [0, 2, 1, 4]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @placement_repack_without_reverify(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{'qtensor.linear' op placement: a repack placement that cuts a group re-groups the weight, which changes reconstruction; the op must carry 'qtensor.reverify' until parity is re-validated}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 6, 16], group_policy = repack, qparams = [0, 2, 2, 5]>} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_permuted = !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, permutation = [7, 6, 5, 4, 3, 2, 1, 0]>>
func.func @placement_row_slice_of_permuted_k(%x: tensor<2x8xf16>, %w: !W_permuted) {
  // expected-error @+1 {{'qtensor.linear' op placement: the weight permutes axis 1 (act-order), so its groups are not contiguous ranges and a slice along it owns no qparam range}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 4, 8], group_policy = error, qparams = [0, 1, 1, 2]>} : tensor<2x8xf16>, !W_permuted -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @reverify_not_unit(%x: tensor<2x16xf16>, %w: !W_placed) {
  // expected-error @+1 {{'qtensor.linear' op 'qtensor.reverify' must be a unit attribute}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.reverify = true} : tensor<2x16xf16>, !W_placed -> tensor<2x8xf16>
  return
}

// -----

!W_placed = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
func.func @reverify_on_weight_op() {
  // expected-error @+1 {{'qtensor.reverify' belongs on a qtensor.linear only}}
  %w = qtensor.weight "o_proj" {qtensor.reverify} : !W_placed
  return
}

// -----

// Nested (second-level) qparams, seed M8.9 0x07D.

// expected-error @+1 {{nested qparams decode to exact f32 products; the scale type must be f32, got f16}}
func.func @nested_scale_not_f32(%w: !qtensor.tensor<4x512xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f16, nested = <scale_code = ui6, min_code = ui6, super_group_size = 256, super_scale = f16>>>) {
  return
}

// -----

// expected-error @+1 {{a nested descriptor with zero-point min needs min codes (min_code)}}
func.func @nested_min_without_min_code(%w: !qtensor.tensor<4x512xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, super_group_size = 256, super_scale = f16>>>) {
  return
}

// -----

// expected-error @+1 {{min codes (min_code) need zero-point min, got none}}
func.func @nested_min_code_without_min(%w: !qtensor.tensor<4x512xf32, #qtensor.affine<code = si6, scheme = symmetric, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, nested = <scale_code = si8, min_code = ui6, super_group_size = 256, super_scale = f16>>>) {
  return
}

// -----

// expected-error @+1 {{super_group_size must be a positive multiple of the group size 32, got 48}}
func.func @nested_super_group_not_multiple(%w: !qtensor.tensor<4x96xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, min_code = ui6, super_group_size = 48, super_scale = f16>>>) {
  return
}

// -----

// expected-error @+1 {{nested qparams need dimension 1 (288) to be a multiple of the super-group size 256}}
func.func @nested_axis_not_whole_super_groups(%w: !qtensor.tensor<4x288xf32, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, min_code = ui6, super_group_size = 256, super_scale = f16>>>) {
  return
}

// -----

// expected-error @+1 {{second-level scales must be f16 or bf16 (their products with 8-bit codes are exact in f32), got f32}}
func.func @nested_super_f32(%w: !qtensor.tensor<4x512xf32, #qtensor.affine<code = si6, scheme = symmetric, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, nested = <scale_code = si8, super_group_size = 256, super_scale = f32>>>) {
  return
}

// -----

// expected-error @+1 {{nested scale codes must be 2 to 8 bits wide, got 9}}
func.func @nested_scale_code_too_wide(%w: !qtensor.tensor<4x512xf32, #qtensor.affine<code = si6, scheme = symmetric, granularity = group, axis = 1, group_size = 16, tail = exact, scale = f32, nested = <scale_code = si9, super_group_size = 256, super_scale = f16>>>) {
  return
}

// -----

// expected-error @+1 {{nested qparams need tail rule 'exact'}}
func.func @nested_partial_tail(%w: !qtensor.tensor<4x512xf32, #qtensor.affine<code = si6, scheme = symmetric, granularity = group, axis = 1, group_size = 16, scale = f32, nested = <scale_code = si8, super_group_size = 256, super_scale = f16>>>) {
  return
}

// -----

// Codebooks (seed M8.9 0x07D): unsigned codes, one table entry per code,
// no zero-point.

// expected-error @+1 {{codebook iq4_nl is indexed by unsigned codes, got si4}}
func.func @codebook_signed_codes(%w: !qtensor.tensor<4x64xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, scale = f16, codebook = iq4_nl>>) {
  return
}

// -----

// expected-error @+1 {{codebook nf4 has 16 entries, one per ui8 code would need 256}}
func.func @codebook_wrong_width(%w: !qtensor.tensor<4x64xf16, #qtensor.affine<code = ui8, scheme = symmetric, granularity = group, axis = 1, group_size = 32, scale = f16, codebook = nf4>>) {
  return
}

// -----

// expected-error @+1 {{codebook iq4_nl takes zero-point none (x = s * table[q]), got min}}
func.func @codebook_with_min(%w: !qtensor.tensor<4x64xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, scale = f16, codebook = iq4_nl>>) {
  return
}

// -----

// expected-error @+2 {{expected one of [none, iq4_nl, nf4, e2m1, e4m3] for the value table unsigned codes index, got: nf5}}
// expected-error @+1 {{failed to parse QTensor_AffineDescriptorAttr parameter 'codebook'}}
func.func @codebook_unknown(%w: !qtensor.tensor<4x64xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, scale = f16, codebook = nf5>>) {
  return
}

// -----

// Scale formats (e8m0, ue4m3): one-byte float codes decoded to exact f32.

// expected-error @+1 {{scale_format e8m0 decodes to exact f32 values; the scale type must be f32, got f16}}
func.func @scale_format_f16(%w: !qtensor.tensor<4x64xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, scale = f16, codebook = e2m1, scale_format = e8m0>>) {
  return
}

// -----

// expected-error @+1 {{scale_format ue4m3 stores scales only; it takes zero-point none, got integer}}
func.func @scale_format_zero_point(%w: !qtensor.tensor<4x64xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 16, scale = f32, scale_format = ue4m3>>) {
  return
}

// -----

// expected-error @+1 {{scale_format e8m0 and nested qparams both encode the scales; a descriptor takes one}}
func.func @scale_format_nested(%w: !qtensor.tensor<4x256xf32, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, super_group_size = 256, super_scale = f16>, scale_format = e8m0>>) {
  return
}

// -----

// expected-error @+1 {{codebook e4m3 has 256 entries, one per ui4 code would need 16}}
func.func @e4m3_needs_bytes(%w: !qtensor.tensor<4x64xf16, #qtensor.affine<code = ui4, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16, codebook = e4m3>>) {
  return
}

// -----

// mixed_2416 (seed M8.9 0x07D): the verifier's rules come from
// lib/Descriptor (verifyMixed2416), so the IR and the reader agree.

// expected-error @+1 {{mixed_2416: first_group_size must be a positive multiple of 64 (a W2 group is whole 16-byte vectors), got 32}}
func.func @mixed_group_not_vector_aligned(%w: !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 32, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{mixed_2416: first-level groups run along axis 1 (input channels) and second-level groups along axis 0 (output channels), got axes 0 and 1}}
func.func @mixed_axes_swapped(%w: !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k", first_group_axis = 0, second_group_axis = 1>, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{first_scale_code must be unsigned (ui8), got 'si8'}}
func.func @mixed_signed_scale_codes(%w: !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = si8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{mixed_2416: the sparse stream is 16-bit (f16 or bf16), got f32}}
func.func @mixed_sparse_f32(%w: !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f32, required_kernel = "k">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{mixed_2416: required_kernel is empty}}
func.func @mixed_no_kernel(%w: !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{mixed_2416: K = 192 is not a multiple of first_group_size 128}}
func.func @mixed_k_not_whole_groups(%w: !qtensor.tensor<64x192xf16, #qtensor.mixed_2416<first_group_size = 128, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{mixed_2416: second_group_size 48 does not divide N = 64}}
func.func @mixed_n_not_whole_groups(%w: !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 48, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}

// -----

// expected-error @+1 {{mixed_2416: a weight matrix [N, K] is required, got shape [2, 64, 256]}}
func.func @mixed_rank_3(%w: !qtensor.tensor<2x64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}

// -----

// The logical layout is not where mixed streams live.
// expected-error @+1 {{a mixed_2416 tensor is stored in layout #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">, got #qtensor.layout<family = "logical", version = 1, encoding = "lsb_first">}}
func.func @mixed_logical_layout(%w: !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k">>) {
  return
}

// -----

func.func @mixed_assemble(%c: tensor<64x256xui4>, %s: tensor<64x4xf32>, %z: tensor<64x4xui4>) {
  // expected-error @+1 {{'qtensor.assemble' op takes affine tensors (codes and qparams are all of one); a mixed_2416 tensor has further streams, read from its weight}}
  %q = qtensor.assemble %c, %s, %z : tensor<64x256xui4>, tensor<64x4xf32>, tensor<64x4xui4> -> !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>
  return
}

// -----

func.func @mixed_quantize(%x: tensor<64x256xf16>, %s: tensor<64x4xf32>, %z: tensor<64x4xui4>) {
  // expected-error @+1 {{'qtensor.quantize' op takes affine tensors}}
  %q = qtensor.quantize %x, %s, %z : tensor<64x256xf16>, tensor<64x4xf32>, tensor<64x4xui4> -> !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "k">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>
  return
}
