// RUN: qopt %s '--qtensor-select-layouts=target=host remarks=true trace-file=%t.json' 2>&1 | FileCheck %s --check-prefix=SELECT
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// RUN: qopt %s --qtensor-select-layouts=target=host --qtensor-instantiate-kernels=target=host | FileCheck %s --check-prefix=HOST
// RUN: qopt %s --qtensor-select-layouts=target=sm_90 '--qtensor-instantiate-kernels=target=sm_90 host-twins=true' | FileCheck %s --check-prefix=GPU

// A mixed_2416 linear with a dynamic T (seed M8.9 0x07D): decode admits the
// mixed 2/4/16 GEMV for T in [1, 16], prefill runs it in chunks of at most
// 16 rows, and the weight keeps its layout (the kernel reads the streams as
// stored). Instantiation builds one entry per T = 1..16: host functions, or
// one GPU module holding the 16 kernels (with their host twins).

!W = !qtensor.tensor<64x256xf16, #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16, first_scale_code = ui8, second_scale = f16, sparse = replacement, sparse_value = f16, required_kernel = "mixed2416_decode_gemv">, #qtensor.layout<family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>

// SELECT: remark: dispatch 'blk.0.attn_q': requested mixed_2416 g64 z16 s2=f16 sparse=replacement:f16 act=f16 acc=f32 out=f16 epilogue=bias
// SELECT-SAME: | decode (T in [1, 16]): [mixed2416_decode_gemv -> accepted: selected]
// SELECT-SAME: | prefill (T in [17, inf)): [mixed2416_decode_gemv -> accepted: selected: runs T > 16 in chunks of at most 16 rows through its decode entries (T = 1..16)]
// SELECT-SAME: [full_dequant_linear -> rejected: full-dequant fallback forbidden by fallback=forbid; representation mixed_2416 not in {affine}]
// SELECT-SAME: [w8a8_gemv_decode_host -> rejected: representation mixed_2416 not in {affine}; {{.*}}; activations none not in {per_token_sym, per_token_asym}] selected=mixed2416_decode_gemv
// SELECT-SAME: repack none
// SELECT: qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "mixed2416_decode_gemv", prefill = "mixed2416_decode_gemv", layout = <family = "mixed_2416", version = 1, encoding = "group_major_lsb_first">>
// SELECT: remark: qtensor-select-layouts on host: 1 linears, 0 fallbacks, 0 prepacked, 0 load-time repacks, 0 secondary layouts

// TRACE: "phase": "prefill",
// TRACE-NEXT: "selected": "mixed2416_decode_gemv",
// TRACE-NEXT: "fallback": false,
// TRACE: "representation": "mixed_2416",
// TRACE-NEXT: "first_group_size": 64,
// TRACE-NEXT: "second_group_size": 16,
// TRACE: "reason": "selected: runs T > 16 in chunks of at most 16 rows through its decode entries (T = 1..16)"

// HOST: qtensor.kernels = {decode = ["qt_mixed2416_gemv_g64_z16_f16_n64_k256_of16_bias"], prefill = ["qt_mixed2416_gemv_g64_z16_f16_n64_k256_of16_bias"]}
// HOST: func.func @qt_mixed2416_gemv_g64_z16_f16_t1_n64_k256_of16_bias(%{{.*}}: memref<1x256xf16>, %{{.*}}: memref<32xi8>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<65xi32>, %{{.*}}: memref<64x4xi8>, %{{.*}}: memref<64x4xi8>, %{{.*}}: memref<4x4xf16>, %{{.*}}: memref<4x4xf16>, %{{.*}}: memref<?xf16>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<65xi32>, %{{.*}}: memref<64xf16>, %{{.*}}: memref<1x64xf16>)
// HOST-COUNT-14: func.func @qt_mixed2416_gemv_g64_z16_f16_t{{[0-9]+}}_n64_k256_of16_bias(
// HOST: func.func @qt_mixed2416_gemv_g64_z16_f16_t16_n64_k256_of16_bias(%{{.*}}: memref<16x256xf16>

// GPU: gpu.module @qt_mixed2416_gemv_g64_z16_f16_n64_k256_of16_bias {
// GPU: gpu.func @qt_mixed2416_gemv_g64_z16_f16_t1_n64_k256_of16_bias(
// GPU-COUNT-14: gpu.func @qt_mixed2416_gemv_g64_z16_f16_t{{[0-9]+}}_n64_k256_of16_bias(
// GPU: gpu.func @qt_mixed2416_gemv_g64_z16_f16_t16_n64_k256_of16_bias(
// GPU: module @qtensor_host_twins {
// GPU: func.func @qt_mixed2416_gemv_g64_z16_f16_t1_n64_k256_of16_bias(
// GPU: func.func @qt_mixed2416_gemv_g64_z16_f16_t16_n64_k256_of16_bias(
func.func @forward(%x: tensor<?x256xf16>, %b: tensor<64xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "blk.0.attn_q" : !W
  %y = qtensor.linear %x, %w, %b accumulate(f32) : tensor<?x256xf16>, !W, tensor<64xf16> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
