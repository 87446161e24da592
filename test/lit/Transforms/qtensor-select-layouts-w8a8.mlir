// RUN: qopt %s '--qtensor-select-layouts=target=host activation-quant=per_token_sym remarks=true trace-file=%t.json' 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// RUN: qopt %s '--qtensor-select-layouts=target=sm_90 activation-quant=per_token_asym remarks=true' 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: qopt %s '--qtensor-select-layouts=target=host remarks=true' 2>&1 | FileCheck %s --check-prefix=PLAIN

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
func.func @w8a8(%x: tensor<?x256xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "blk.0.attn_q" : !qtensor.tensor<64x256xf16, #W8>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x256xf16>, !qtensor.tensor<64x256xf16, #W8> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
