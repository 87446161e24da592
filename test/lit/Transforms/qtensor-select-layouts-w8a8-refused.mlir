// RUN: qopt %s '--qtensor-select-layouts=target=host activation-quant=per_token_sym' -verify-diagnostics

// K = 72 is not whole 16-code chunks: the W8A8 GEMV refuses it, and no
// other kernel takes per-token activations.
#W8 = #qtensor.affine<code = si8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16>
func.func @k_not_whole_chunks(%x: tensor<1x72xf16>) -> tensor<1x64xf16> {
  %w = qtensor.weight "blk.0.ffn_down" : !qtensor.tensor<64x72xf16, #W8>
  // expected-error @+10 {{no kernel admits 'blk.0.ffn_down' for decode (T = 1) on host with fallback=forbid}}
  // expected-note @+9 {{affine_gemv_decode_sm80: needs sm_80, target is host; activations per_token_sym not in {none}}}
  // expected-note @+8 {{affine_mma_prefill_sm80: needs sm_80, target is host; activations per_token_sym not in {none}}}
  // expected-note @+7 {{affine_gemv_decode_host: activations per_token_sym not in {none}}}
  // expected-note @+6 {{affine_gemm_prefill_host: activations per_token_sym not in {none}}}
  // expected-note @+5 {{affine_gemm_host_xq8: activations per_token_sym not in {none}}}
  // expected-note @+4 {{affine_gemm_host: activations per_token_sym not in {none}}}
  // expected-note @+3 {{full_dequant_linear: full-dequant fallback forbidden by fallback=forbid; activations per_token_sym not in {none}}}
  // expected-note @+2 {{w8a8_gemv_decode_sm80: needs sm_80, target is host; K 72 not a multiple of tile 16}}
  // expected-note @+1 {{w8a8_gemv_decode_host: K 72 not a multiple of tile 16}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<1x72xf16>, !qtensor.tensor<64x72xf16, #W8> -> tensor<1x64xf16>
  return %y : tensor<1x64xf16>
}
