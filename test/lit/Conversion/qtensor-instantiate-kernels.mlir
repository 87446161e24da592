// Kernel instances from dispatched linears (KernelInstances.h): the same
// derivation qtc compile uses for the artifact's kernel files.
// RUN: qopt %s -split-input-file -qtensor-select-layouts="target=sm_90 phase=decode" -qtensor-instantiate-kernels="target=sm_90" | FileCheck %s --check-prefix=SM90
// What the pass prints parses and verifies again.
// RUN: qopt %s -split-input-file -qtensor-select-layouts="target=sm_90 phase=decode" -qtensor-instantiate-kernels="target=sm_90" | qopt -split-input-file | FileCheck %s --check-prefix=SM90
// RUN: qopt %s -split-input-file -qtensor-place-shards="tp=2" -qtensor-select-layouts="target=host phase=decode" -qtensor-instantiate-kernels="target=host" | FileCheck %s --check-prefix=HOST
// RUN: rm -rf %t && mkdir -p %t
// RUN: qopt %s -split-input-file -qtensor-select-layouts="target=sm_80 phase=decode" -qtensor-instantiate-kernels="target=sm_80 lower=ptx ptx-dir=%t" | FileCheck %s --check-prefix=PTX
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// RUN: qopt %s -split-input-file -qtensor-select-layouts="target=sm_90 phase=decode" -qtensor-instantiate-kernels="target=sm_90 lower=ptx host-twins=true" | FileCheck %s --check-prefix=TWINS

// Identical linears share one instance (q, k); a bias, another scale dtype
// or another local shape is another instance. Activations are bf16 with f16
// scales (what qtc writes for a bf16 checkpoint), the output is bf16.
// SM90-LABEL: func.func @block
// SM90: qtensor.linear {{.*}}qtensor.kernels = {decode = ["qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16"]}
// SM90: qtensor.linear {{.*}}qtensor.kernels = {decode = ["qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16"]}
// SM90: qtensor.linear {{.*}}qtensor.kernels = {decode = ["qt_decode_gemv_w4sym_g128_bf16_tdyn_n512_k256_s1_scf16_obf16_bias"]}
// SM90: qtensor.linear {{.*}}qtensor.kernels = {decode = ["qt_decode_gemv_w4asym_g64_bf16_tdyn_n256_k256_s1_obf16"]}
// SM90: gpu.module @qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16 {
// SM90-NEXT: gpu.func @qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16_t1(%{{.*}}: memref<?x256xbf16>, %{{.*}}: memref<256x32xi32>, %{{.*}}: memref<256x2xf16>, %{{.*}}: memref<?x256xbf16>) kernel
// SM90: gpu.func @qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16_t16(
// SM90: gpu.module @qt_decode_gemv_w4sym_g128_bf16_tdyn_n512_k256_s1_scf16_obf16_bias {
// SM90-NEXT: gpu.func @qt_decode_gemv_w4sym_g128_bf16_tdyn_n512_k256_s1_scf16_obf16_bias_t1(%{{.*}}: memref<?x256xbf16>, %{{.*}}: memref<512x32xi32>, %{{.*}}: memref<512x2xf16>, %{{.*}}: memref<512xbf16>, %{{.*}}: memref<?x512xbf16>) kernel
// SM90: gpu.module @qt_decode_gemv_w4asym_g64_bf16_tdyn_n256_k256_s1_obf16 {
// SM90-NEXT: gpu.func @qt_decode_gemv_w4asym_g64_bf16_tdyn_n256_k256_s1_obf16_t1(%{{.*}}: memref<?x256xbf16>, %{{.*}}: memref<256x32xi32>, %{{.*}}: memref<256x4xbf16>, %{{.*}}: memref<256x4xi8>, %{{.*}}: memref<?x256xbf16>) kernel
// SM90-NOT: gpu.module

// PTX-LABEL: func.func @block
// PTX: gpu.binary @qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">
// PTX: gpu.binary @qt_decode_gemv_w4sym_g128_bf16_tdyn_n512_k256_s1_scf16_obf16_bias
// PTX: gpu.binary @qt_decode_gemv_w4asym_g64_bf16_tdyn_n256_k256_s1_obf16
// PTX-NOT: gpu.module

// With host-twins, each instance's host twin (the same entry names and
// arguments, C-interface funcs) is generated into a nested module, which
// the PTX lowering leaves alone; qtc compile reads them from there.
// TWINS-LABEL: func.func @block
// TWINS: gpu.binary @qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16
// TWINS: gpu.binary @qt_decode_gemv_w4asym_g64_bf16_tdyn_n256_k256_s1_obf16
// TWINS: module @qtensor_host_twins {
// TWINS-NEXT: func.func @qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16_t1(%{{.*}}: memref<?x256xbf16>, %{{.*}}: memref<256x32xi32>, %{{.*}}: memref<256x2xf16>, %{{.*}}: memref<?x256xbf16>) attributes {llvm.emit_c_interface}
// TWINS: func.func @qt_decode_gemv_w4sym_g128_bf16_tdyn_n512_k256_s1_scf16_obf16_bias_t16(
// TWINS: func.func @qt_decode_gemv_w4asym_g64_bf16_tdyn_n256_k256_s1_obf16_t16(
// TWINS-NOT: gpu.module
// TWINS-LABEL: func.func @tp2
// TWINS: module @qtensor_host_twins {

// FILES: qt_decode_gemv_w4asym_g64_bf16_tdyn_n256_k256_s1_obf16.ptx
// FILES-NEXT: qt_decode_gemv_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16.ptx
// FILES-NEXT: qt_decode_gemv_w4sym_g128_bf16_tdyn_n512_k256_s1_scf16_obf16_bias.ptx
// FILES-NEXT: qt_decode_gemv_w4sym_g128_f16_tdyn_n256_k512_s1_of16_bias.ptx
// FILES-NEXT: qt_decode_gemv_w4sym_g128_f16_tdyn_n512_k256_s1_of16_bias.ptx
// FILES-NOT: .ptx

// On the host with tp = 2, q, k, v and gate are column-parallel: both
// ranks of q and k share one instance of the local shape N = 128, gate's
// ranks one with N = 256 and the bias slice.
// HOST-LABEL: func.func @block
// HOST: qtensor.kernels = {decode = ["qt_host_gemm_w4sym_g128_bf16_tdyn_n128_k256_s1_scf16_obf16_xq8", "qt_host_gemm_w4sym_g128_bf16_tdyn_n128_k256_s1_scf16_obf16_xq8"]}
// HOST: qtensor.kernels = {decode = ["qt_host_gemm_w4sym_g128_bf16_tdyn_n128_k256_s1_scf16_obf16_xq8", "qt_host_gemm_w4sym_g128_bf16_tdyn_n128_k256_s1_scf16_obf16_xq8"]}
// HOST: qtensor.kernels = {decode = ["qt_host_gemm_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16_bias_xq8", "qt_host_gemm_w4sym_g128_bf16_tdyn_n256_k256_s1_scf16_obf16_bias_xq8"]}
// HOST: func.func @qt_host_gemm_w4sym_g128_bf16_tdyn_n128_k256_s1_scf16_obf16_xq8(%{{.*}}: memref<?x256xbf16>, %{{.*}}: memref<?x32xi32>, %{{.*}}: memref<?x2xf16>, %{{.*}}: memref<?x?xbf16, strided<[?, 1]>>) attributes {llvm.emit_c_interface}

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
#U4 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 64, scale = bf16>
func.func @block(%x: tensor<?x256xbf16>, %b: tensor<512xbf16>) -> (tensor<?x256xbf16>, tensor<?x256xbf16>, tensor<?x512xbf16>, tensor<?x256xbf16>) {
  %wq = qtensor.weight "model.layers.0.self_attn.q_proj" : !qtensor.tensor<256x256xbf16, #W4>
  %q = qtensor.linear %x, %wq accumulate(f32) : tensor<?x256xbf16>, !qtensor.tensor<256x256xbf16, #W4> -> tensor<?x256xbf16>
  %wk = qtensor.weight "model.layers.0.self_attn.k_proj" : !qtensor.tensor<256x256xbf16, #W4>
  %k = qtensor.linear %x, %wk accumulate(f32) : tensor<?x256xbf16>, !qtensor.tensor<256x256xbf16, #W4> -> tensor<?x256xbf16>
  %wg = qtensor.weight "model.layers.0.mlp.gate_proj" : !qtensor.tensor<512x256xbf16, #W4>
  %g = qtensor.linear %x, %wg, %b accumulate(f32) : tensor<?x256xbf16>, !qtensor.tensor<512x256xbf16, #W4>, tensor<512xbf16> -> tensor<?x512xbf16>
  %wv = qtensor.weight "model.layers.0.self_attn.v_proj" : !qtensor.tensor<256x256xbf16, #U4>
  %v = qtensor.linear %x, %wv accumulate(f32) : tensor<?x256xbf16>, !qtensor.tensor<256x256xbf16, #U4> -> tensor<?x256xbf16>
  return %q, %k, %g, %v : tensor<?x256xbf16>, tensor<?x256xbf16>, tensor<?x512xbf16>, tensor<?x256xbf16>
}

// -----

// Row-parallel slices yield partial sums: the runtime adds the bias after
// the all-reduce, so their instance has no bias epilogue; the column slices
// keep theirs, and with them the int8-activation GEMM (a row slice keeps
// float activations: its K slice would start its blocks at its own offset).
// HOST-LABEL: func.func @tp2
// HOST: qtensor.kernels = {decode = ["qt_host_gemm_w4sym_g128_f16_tdyn_n256_k256_s1_of16_bias_xq8", "qt_host_gemm_w4sym_g128_f16_tdyn_n256_k256_s1_of16_bias_xq8"]}
// HOST-SAME: strategy = column
// HOST: qtensor.kernels = {decode = ["qt_host_gemm_w4sym_g128_f16_tdyn_n256_k256_s1_of16", "qt_host_gemm_w4sym_g128_f16_tdyn_n256_k256_s1_of16"]}
// HOST-SAME: strategy = row
// HOST: func.func @qt_host_gemm_w4sym_g128_f16_tdyn_n256_k256_s1_of16_bias_xq8(
// HOST: func.func @qt_host_gemm_w4sym_g128_f16_tdyn_n256_k256_s1_of16(
// HOST-NOT: func.func @qt_

// Without placement the same linears are two instances of their own shape.
// SM90-LABEL: func.func @tp2
// SM90: gpu.module @qt_decode_gemv_w4sym_g128_f16_tdyn_n512_k256_s1_of16_bias
// SM90: gpu.module @qt_decode_gemv_w4sym_g128_f16_tdyn_n256_k512_s1_of16_bias

#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @tp2(%x: tensor<?x256xf16>, %bu: tensor<512xf16>, %bd: tensor<256xf16>) -> (tensor<?x512xf16>, tensor<?x256xf16>) {
  %wu = qtensor.weight "model.layers.0.mlp.up_proj" : !qtensor.tensor<512x256xf16, #W4>
  %u = qtensor.linear %x, %wu, %bu accumulate(f32) : tensor<?x256xf16>, !qtensor.tensor<512x256xf16, #W4>, tensor<512xf16> -> tensor<?x512xf16>
  %wd = qtensor.weight "model.layers.0.mlp.down_proj" : !qtensor.tensor<256x512xf16, #W4>
  %d = qtensor.linear %u, %wd, %bd accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4>, tensor<256xf16> -> tensor<?x256xf16>
  return %u, %d : tensor<?x512xf16>, tensor<?x256xf16>
}
