// RUN: qopt %s -split-input-file | FileCheck %s
// RUN: qopt %s -split-input-file | qopt -split-input-file | FileCheck %s
// RUN: qopt %s -split-input-file --mlir-print-op-generic | qopt -split-input-file | FileCheck %s
// RUN: qopt %s -split-input-file '--qtensor-select-layouts=target=sm_90 remarks=true' 2>&1 | FileCheck %s --check-prefix=ADMIT
// RUN: qopt %s -split-input-file '--qtensor-select-layouts=target=host fallback=allow remarks=true' 2>&1 | FileCheck %s --check-prefix=FALLBACK
// RUN: not qopt %s -split-input-file --qtensor-place-shards=tp=2 2>&1 | FileCheck %s --check-prefix=PLACE

// The mixed 2/4/16 family (seed M8.9 0x07D) as a weight type: it prints
// back as written; the mixed 2/4/16 GEMV admits it (T = 1 is decode), and
// the affine kernels, the full-dequant fallback included, name why not.

// CHECK: #[[LAYOUT:layout[0-9]*]] = #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">
// CHECK: #mixed2416_g64_replacement = #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "mixed2416_decode_gemv">
// CHECK-LABEL: func.func @mixed
// CHECK: qtensor.weight "blk.0.attn_q" : !qtensor.tensor<64x256xf16, #mixed2416_g64_replacement, #[[LAYOUT]]>
// CHECK: qtensor.linear %{{.*}}, %{{.*}} accumulate(f32) : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #mixed2416_g64_replacement, #[[LAYOUT]]> -> tensor<1x64xf16>
// CHECK: qtensor.dequantize %{{.*}} : !qtensor.tensor<64x256xf16, #mixed2416_g64_replacement, #[[LAYOUT]]> -> tensor<64x256xf16>

// ADMIT: remark: dispatch 'blk.0.attn_q': requested mixed_2416 g64 z16 s2=bf16 sparse=replacement:f16 act=f16 acc=f32 out=f16 epilogue=none layout=(mixed_2416, 1, group_major_lsb_first); shape [N=64, K=256, T=1]; device sm_90; topology single | decode (T = 1): [mixed2416_decode_gemv -> accepted: selected] [affine_gemv_decode_sm80 -> rejected: representation mixed_2416 not in {affine}; stored layout (mixed_2416, 1, group_major_lsb_first) is not (decode_gemv, 1, offset_binary) and no code-preserving repack converts it]
// ADMIT-SAME: selected=mixed2416_decode_gemv | layout (mixed_2416, 1, group_major_lsb_first) (the mixed_2416 streams as stored (the kernel reads the tensor's layout; no repack)), repack none
// ADMIT: qtensor.linear %{{.*}} {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "mixed2416_decode_gemv", layout = #[[ALAYOUT:layout[0-9]*]]>}
// FALLBACK: [full_dequant_linear -> rejected: representation mixed_2416 not in {affine}]
// FALLBACK-SAME: [w8a8_gemv_decode_host -> rejected: representation mixed_2416 not in {affine}; {{.*}}] selected=mixed2416_decode_gemv
// PLACE: cannot place weight "blk.0.attn_q": placement does not know how the qparams of a 'mixed_2416' descriptor follow a slice
func.func @mixed(%x: tensor<1x256xf16>) -> (tensor<1x64xf16>, tensor<64x256xf16>) {
  %w = qtensor.weight "blk.0.attn_q" : !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "mixed2416_decode_gemv">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<1x256xf16>, !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "mixed2416_decode_gemv">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">> -> tensor<1x64xf16>
  %d = qtensor.dequantize %w : !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = bf16, sparse = replacement, sparse_value = f16, required_kernel = "mixed2416_decode_gemv">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">> -> tensor<64x256xf16>
  return %y, %d : tensor<1x64xf16>, tensor<64x256xf16>
}

// -----

// Every field spelled, defaults included, prints back without them.
// CHECK: #qtensor.mixed_2416<first_group_size = 128, second_group_size = 32, first_scale_code = ui6, second_scale = f16, sparse = correction, sparse_value = bf16, required_kernel = "k">
// CHECK-LABEL: func.func @every_field
func.func @every_field(%w: !qtensor.tensor<64x256xbf16, #qtensor.mixed_2416<first_group_size = 128, second_group_size = 32, first_scale_code = ui6, second_scale = f16, sparse = correction, sparse_value = bf16, required_kernel = "k", first_group_axis = 1, second_group_axis = 0, map_granularity = group, qparam_packing = bytes, decoder_version = 1>, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>) {
  return
}
