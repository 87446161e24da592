// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 kernels=w8a8_gemv:g64:asym:asym:f16:t2:n8:k128:bias,w8a8_gemv:g64:sym:asym:f16:t2:n16:k128" | FileCheck %s --check-prefix=GPU
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=w8a8_gemv:gch:sym:sym:bf16:t1:n8:k64:scf32" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=HOST
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=w8a8_gemv:g64:sym:sym:f16:t1:n16:k72" 2>&1 | FileCheck %s --check-prefix=BADK
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=w8a8_gemv:g64:sym:sym:f16:t1:n16:k128,w8a8_gemv:g64:sym:sym:f16:t1:n16:k128" 2>&1 | FileCheck %s --check-prefix=DUP
// RUN: rm -rf %t && mkdir -p %t
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 kernels=w8a8_gemv:g64:asym:asym:f16:t2:n8:k128" --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t" > /dev/null
// RUN: FileCheck %s --check-prefix=NAN < %t/qt_quantize_a8asym_f16_t2_k128.ptx

// W8A8 builds two kernels per spec: the per-token activation quantizer
// (one warp per token: 16-byte activation loads, an xor butterfly of min,
// max and max |x|, f32 division and the biased add/subtract round to
// nearest even, 8-byte code stores) and the GEMV (int8 codes times int8
// activations in i32 with the zero-point corrections, one fma per chunk).
// Two GEMVs over the same tokens and K share one quantizer.

// GPU: gpu.module @qt_quantize_a8asym_f16_t2_k128
// GPU: gpu.func @qt_quantize_a8asym_f16_t2_k128(%{{.*}}: memref<2x128xf16>, %{{.*}}: memref<2x128xi8>, %{{.*}}: memref<2xf32>, %{{.*}}: memref<2xi32>) kernel
// GPU: vector.load %{{.*}} {alignment = 16 : i64} : memref<2x128xf16>, vector<8xf16>
// GPU: gpu.shuffle  xor
// GPU: arith.minimumf
// GPU: arith.divf
// GPU: arith.constant 0x4B400000 : f32
// GPU: vector.store %{{.*}} {alignment = 8 : i64} : memref<2x128xi8>, vector<8xi8>
// GPU: gpu.module @qt_w8a8_gemv_w8asym_a8asym_g64_f16_t2_n8_k128_bias
// GPU: gpu.func @qt_w8a8_gemv_w8asym_a8asym_g64_f16_t2_n8_k128_bias(%{{.*}}: memref<2x128xi8>, %{{.*}}: memref<2xf32>, %{{.*}}: memref<2xi32>, %{{.*}}: memref<8x32xi32>, %{{.*}}: memref<8x2xf16>, %{{.*}}: memref<8x2xi8>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<2x8xf32>) kernel
// GPU: vector.load %{{.*}} {alignment = 16 : i64} : memref<8x32xi32>, vector<4xi32>
// GPU: vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// GPU: arith.muli %{{.*}} : vector<16xi32>
// GPU: arith.sitofp
// GPU: gpu.module @qt_w8a8_gemv_w8sym_a8asym_g64_f16_t2_n16_k128
// GPU-NOT: gpu.module @qt_quantize

// HOST: llvm.func @_mlir_ciface_qt_quantize_a8sym_bf16_t1_k64(
// HOST: llvm.func @_mlir_ciface_qt_w8a8_gemv_w8sym_a8sym_gch_bf16_t1_n8_k64_scf32(

// BADK: K must be a multiple of 16 (whole chunks in the correction sums), got 72
// DUP: kernel 'qt_w8a8_gemv_w8sym_a8sym_g64_f16_t1_n16_k128' already exists
module {}

// A NaN activation reaches its token's statistics through the IEEE maximum
// (max.NaN on sm_80+), so the token's scale and outputs are NaN rather than
// codes of the other values (W8A8GemvHostTest checks the outputs).
// NAN: max.NaN.f32
// NAN-NOT: {{max\.f32}}
