// RUN: qopt %s '--qtensor-select-layouts=target=host activation-quant=per_token_sym remarks=true trace-file=%t.json' 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// RUN: qopt %s '--qtensor-select-layouts=target=sm_90 activation-quant=per_token_asym remarks=true' 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: qopt %s '--qtensor-select-layouts=target=host remarks=true' 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: qopt %s '--qtensor-select-layouts=target=host activation-quant=per_token_sym' '--qtensor-instantiate-kernels=target=host activation-quant=per_token_sym' | FileCheck %s --check-prefix=INST
// RUN: qopt %s '--qtensor-select-layouts=target=sm_90 activation-quant=per_token_asym' '--qtensor-instantiate-kernels=target=sm_90 host-twins=true activation-quant=per_token_asym' | FileCheck %s --check-prefix=INSTGPU
// RUN: not qopt %s '--qtensor-select-layouts=target=host activation-quant=per_token_sym' --qtensor-instantiate-kernels=target=host 2>&1 | FileCheck %s --check-prefix=MISMATCH

// activation-quant (qtc compile --quant w8a8) gives every affine linear's
// signature per-token activations: only the W8A8 GEMV admits them, for
// decode and, in chunks of 16 rows, for prefill. Without it nothing
// changes: the W8A8 kernels refuse an op with float activations.

#W8 = #qtensor.affine<code = si8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16>

// HOST: remark: dispatch 'blk.0.attn_q': requested affine si8 twos_complement zp=none per-channel scale=f16 {{.*}} activations=per_token_sym
// HOST-SAME: | decode (T in [1, 16]): [affine_gemv_decode_sm80 -> rejected: needs sm_80, target is host; activations per_token_sym not in {none}]
// HOST-SAME: [w8a8_gemv_decode_host -> accepted: selected] selected=w8a8_gemv_decode_host
// HOST-SAME: | prefill (T in [17, inf)):
// HOST-SAME: [w8a8_gemv_decode_host -> accepted: selected: T above 16 runs in chunks of 16 rows] selected=w8a8_gemv_decode_host
// HOST: qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "w8a8_gemv_decode_host", prefill = "w8a8_gemv_decode_host", layout = <family = "decode_gemv"

// TRACE: "activation_quant": "per_token_sym"
// TRACE: "phase": "prefill",
// TRACE-NEXT: "selected": "w8a8_gemv_decode_host",
// TRACE: "reason": "selected: T above 16 runs in chunks of 16 rows"

// GPU: activations=per_token_asym
// GPU: qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "w8a8_gemv_decode_sm80", prefill = "w8a8_gemv_decode_sm80"

// PLAIN: [w8a8_gemv_decode_host -> rejected: activations none not in {per_token_sym, per_token_asym}] selected=affine_gemm_host_xq8
// One instance per shape: the quantizer and GEMV for every T of [1, 16]
// (host functions; on a GPU one gpu.module holding the 32, and the host
// twins).
// INST: qtensor.kernels = {decode = ["qt_w8a8_gemv_w8sym_a8sym_gch_f16_n64_k256_of16"], prefill = ["qt_w8a8_gemv_w8sym_a8sym_gch_f16_n64_k256_of16"]}
// INST: func.func @qt_quantize_a8sym_f16_t1_k256(%{{.*}}: memref<1x256xf16>, %{{.*}}: memref<1x256xi8>, %{{.*}}: memref<1xf32>)
// INST: func.func @qt_w8a8_gemv_w8sym_a8sym_gch_f16_t1_n64_k256_of16(%{{.*}}: memref<1x256xi8>, %{{.*}}: memref<1xf32>, %{{.*}}: memref<64x64xi32>, %{{.*}}: memref<64x1xf16>, %{{.*}}: memref<1x64xf16>)
// INST: func.func @qt_quantize_a8sym_f16_t16_k256(
// INST: func.func @qt_w8a8_gemv_w8sym_a8sym_gch_f16_t16_n64_k256_of16(
// INSTGPU: gpu.module @qt_w8a8_gemv_w8sym_a8asym_gch_f16_n64_k256_of16
// INSTGPU: gpu.func @qt_quantize_a8asym_f16_t1_k256
// INSTGPU: gpu.func @qt_w8a8_gemv_w8sym_a8asym_gch_f16_t1_n64_k256_of16
// INSTGPU: gpu.func @qt_w8a8_gemv_w8sym_a8asym_gch_f16_t16_n64_k256_of16
// INSTGPU-NOT: gpu.module
// INSTGPU: module @qtensor_host_twins
// INSTGPU: func.func @qt_quantize_a8asym_f16_t1_k256(%{{.*}}: memref<1x256xf16>, %{{.*}}: memref<1x256xi8>, %{{.*}}: memref<1xf32>, %{{.*}}: memref<1xi32>)
// INSTGPU: func.func @qt_w8a8_gemv_w8sym_a8asym_gch_f16_t16_n64_k256_of16(
// MISMATCH: error: linear 'blk.0.attn_q': decode kernel 'w8a8_gemv_decode_host': takes activations per_token_sym per_token_asym, the compile's are activation-quant=none
func.func @w8a8(%x: tensor<?x256xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "blk.0.attn_q" : !qtensor.tensor<64x256xf16, #W8>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x256xf16>, !qtensor.tensor<64x256xf16, #W8> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
