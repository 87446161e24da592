// RUN: qopt %s -split-input-file -verify-diagnostics

// One case per diagnostic of #qtensor.dispatch and of the qtensor.dispatch /
// qtensor.prepacked discardable attributes (QTensorDispatch.cpp).

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @dispatch_without_kernels(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{dispatch selects no kernel: give decode, prefill or both}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", layout = <family = "logical", version = 1, encoding = "lsb_first">>} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @dispatch_without_target(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{dispatch needs the target it was selected for}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "", decode = "full_dequant_linear", layout = <family = "logical", version = 1, encoding = "lsb_first">>} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @dispatch_empty_kernel_id(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{a selected kernel id must not be empty}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "", layout = <family = "logical", version = 1, encoding = "lsb_first">>} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @fallback_flag_without_its_phase(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{prefill_fallback needs a prefill kernel}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "full_dequant_linear", prefill_fallback = true, layout = <family = "logical", version = 1, encoding = "lsb_first">>} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @decode_fallback_flag_without_its_phase(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{decode_fallback needs a decode kernel}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", prefill = "full_dequant_linear", decode_fallback = true, layout = <family = "logical", version = 1, encoding = "lsb_first">>} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @secondary_layout_with_one_phase(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{a secondary layout serves the second of two phases; select both}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "full_dequant_linear", layout = <family = "logical", version = 1, encoding = "lsb_first">, secondary_layout = <family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [64, 16]>>} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @secondary_layout_repeats_layout(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{secondary_layout repeats layout}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "a", prefill = "b", layout = <family = "logical", version = 1, encoding = "lsb_first">, secondary_layout = <family = "logical", version = 1, encoding = "lsb_first">>} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @dispatch_layout_differs_from_operand(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{'qtensor.linear' op dispatch layout #qtensor.layout<family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [64, 16]> differs from the weight operand's layout #qtensor.layout<family = "logical", version = 1, encoding = "lsb_first">}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_mma_prefill_sm80", layout = <family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [64, 16]>>} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

func.func @dispatch_on_another_op() {
  // expected-error @+1 {{'qtensor.dispatch' belongs on a qtensor.linear only}}
  %c = arith.constant {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "k", layout = <family = "logical", version = 1, encoding = "lsb_first">>} 0 : i32
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @dispatch_not_a_dispatch(%x: tensor<1x256xf16>, %w: !qtensor.tensor<64x256xf16, #W4>) {
  // expected-error @+1 {{'qtensor.linear' op 'qtensor.dispatch' must be a #qtensor.dispatch, got "affine_gemv_decode_sm80"}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = "affine_gemv_decode_sm80"} : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #W4> -> tensor<1x64xf16>
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @prepacked_logical_weight() {
  // expected-error @+1 {{'qtensor.weight' op a prepacked weight must have a quantized type in its kernel layout, got '!qtensor.tensor<64x256xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>'}}
  %w = qtensor.weight "w" {qtensor.prepacked} : !qtensor.tensor<64x256xf16, #W4>
  return
}

// -----

func.func @prepacked_on_another_op() {
  // expected-error @+1 {{'qtensor.prepacked' belongs on a qtensor.weight only}}
  %c = arith.constant {qtensor.prepacked} 0 : i32
  return
}

// -----

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
#MMA = #qtensor.layout<family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [64, 16]>
func.func @prepacked_not_unit() {
  // expected-error @+1 {{'qtensor.weight' op 'qtensor.prepacked' must be a unit attribute}}
  %w = qtensor.weight "w" {qtensor.prepacked = 1 : i32} : !qtensor.tensor<64x256xf16, #W4, #MMA>
  return
}
