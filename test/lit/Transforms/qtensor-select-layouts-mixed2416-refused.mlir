// RUN: not qopt %s -split-input-file --qtensor-select-layouts=target=sm_90 2>&1 | FileCheck %s

// What the mixed 2/4/16 GEMV refuses names the clause: a first-level group
// it was not built for, and (at T = 17, prefill) nothing else either.

// CHECK: error: no kernel admits 'blk.0.wide_groups' for decode (T = 1) on sm_90 with fallback=forbid
// CHECK: note: mixed2416_decode_gemv: first-level group size 320 not in {64, 128, 192, 256}
!W320 = !qtensor.tensor<64x640xf16, #qtensor.mixed_2416<first_group_size = 320, second_group_size = 16, first_scale_code = ui8, second_scale = f16, sparse = replacement, sparse_value = f16, required_kernel = "mixed2416_decode_gemv">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>
func.func @wide(%x: tensor<1x640xf16>) -> tensor<1x64xf16> {
  %w = qtensor.weight "blk.0.wide_groups" : !W320
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<1x640xf16>, !W320 -> tensor<1x64xf16>
  return %y : tensor<1x64xf16>
}

// -----

// CHECK: error: no kernel admits 'blk.0.f32_act' for decode (T = 1) on sm_90 with fallback=forbid
// CHECK: note: mixed2416_decode_gemv: activations f32 not in {f16, bf16}
!W32 = !qtensor.tensor<64x256xf32, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = f16, sparse = replacement, sparse_value = f16, required_kernel = "mixed2416_decode_gemv">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>
func.func @f32(%x: tensor<1x256xf32>) -> tensor<1x64xf32> {
  %w = qtensor.weight "blk.0.f32_act" : !W32
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<1x256xf32>, !W32 -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}
