// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g128:sym:f16:t2:n8:k196" | FileCheck %s --check-prefix=W4
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 kernels=decode_gemv:w8:g64:asym:bf16:t1:n4:k128:s2" | FileCheck %s --check-prefix=W8
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=decode_gemv:w4:gch:asym:f16:t3:n5:k40" | FileCheck %s --check-prefix=HOST
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=decode_gemv:w4:gch:asym:f16:t3:n5:k40" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=LLVM
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w7:g128:sym:f16:t1:n8:k64" 2>&1 | FileCheck %s --check-prefix=BADWIDTH
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g96:sym:f16:t1:n8:k64" 2>&1 | FileCheck %s --check-prefix=BADGROUP
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g32:sym:f16:t17:n8:k64" 2>&1 | FileCheck %s --check-prefix=BADROWS
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g32:sym:f16:t1:n8:k64:s3" 2>&1 | FileCheck %s --check-prefix=BADSPLIT
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_70 kernels=decode_gemv:w4:g32:sym:f16:t1:n8:k64" 2>&1 | FileCheck %s --check-prefix=BADTARGET
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g32:sym:f16:t1:n8:k64,decode_gemv:w4:g32:sym:f16:t1:n8:k64" 2>&1 | FileCheck %s --check-prefix=DUP
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w8:g32:asym:bf16:tdyn:n6:k64:scf16:of16:bias" | FileCheck %s --check-prefix=DYN
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=decode_gemv:w4:g64:sym:f16:tdyn:n6:k64:obf16" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=DYNLLVM
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g32:sym:f16:t1:n8:k256:s2:of16" 2>&1 | FileCheck %s --check-prefix=SPLIT16
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g32:sym:f16:t1:n8:k64:bias:bias" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g32:sym:f16:t1:n8:k64:of8" 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g32:sym:f16:t0:n8:k64" 2>&1 | FileCheck %s --check-prefix=BADT

// The decode GEMV is built from upstream dialects only. W4, T = 2, K = 196:
// 7 chunks of 32 codes (28 words) per row, the last one a tail of 4 codes
// read through a masked load of X; rows of 392 bytes are only 2-byte aligned.

// W4: module attributes {gpu.container_module}
// W4: gpu.module @qt_decode_gemv_w4sym_g128_f16_t2_n8_k196_s1
// W4: gpu.func @qt_decode_gemv_w4sym_g128_f16_t2_n8_k196_s1(%{{.*}}: memref<2x196xf16>, %{{.*}}: memref<8x28xi32>, %{{.*}}: memref<8x2xf16>, %{{.*}}: memref<2x8xf32>) kernel
// W4-NOT: known_block_size
// W4: scf.for
// W4: vector.load %{{.*}} {alignment = 16 : i64} : memref<8x28xi32>, vector<4xi32>
// W4: vector.shuffle
// W4: arith.shrui
// W4: arith.andi
// The magic number 0x4B000000 (2^23) and the symmetric bias 2^23 + 8.
// W4: arith.constant dense<1258291200> : vector<32xi32>
// W4: arith.ori
// W4: vector.bitcast %{{.*}} : vector<32xi32> to vector<32xf32>
// W4: arith.constant 0x4B000008 : f32
// W4: vector.load %{{.*}} {alignment = 2 : i64} : memref<2x196xf16>, vector<32xf16>
// W4: vector.reduction <add>
// W4: arith.mulf %{{.*}} fastmath<contract> : f32
// W4: arith.addf %{{.*}} fastmath<contract> : f32
// W4: vector.maskedload
// W4-COUNT-5: gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// W4: memref.store %{{.*}} : memref<2x8xf32>
// W4-NOT: memref.atomic_rmw

// W8 asymmetric, bf16, split-K 2: zero-points are an i8 operand, K is an
// exact multiple of the 16-code chunk (aligned X loads, no tail), and split
// partial sums are added atomically.
// W8: gpu.func @qt_decode_gemv_w8asym_g64_bf16_t1_n4_k128_s2(%{{.*}}: memref<1x128xbf16>, %{{.*}}: memref<4x32xi32>, %{{.*}}: memref<4x2xbf16>, %{{.*}}: memref<4x2xi8>, %{{.*}}: memref<1x4xf32>) kernel
// W8: gpu.block_id y
// W8: arith.constant dense<[0, 8, 16, 24, 0, 8, 16, 24
// W8: arith.extui %{{.*}} : i8 to i32
// W8: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x128xbf16>, vector<16xbf16>
// W8-NOT: vector.maskedload
// W8: memref.atomic_rmw addf

// HOST: func.func @qt_decode_gemv_w4asym_gch_f16_t3_n5_k40_s1(%{{.*}}: memref<3x40xf16>, %{{.*}}: memref<5x8xi32>, %{{.*}}: memref<5x1xf16>, %{{.*}}: memref<5x1xi8>, %{{.*}}: memref<3x5xf32>) attributes {llvm.emit_c_interface}
// HOST-NOT: gpu.
// HOST: memref.alloca() : memref<32x3xf32>
// HOST: vector.load %{{.*}} {alignment = 16 : i64} : memref<5x8xi32>, vector<4xi32>
// HOST: arith.xori
// HOST: memref.copy

// LLVM: llvm.func @qt_decode_gemv_w4asym_gch_f16_t3_n5_k40_s1(
// LLVM: llvm.intr.vector.reduce.fadd
// LLVM: llvm.intr.masked.load
// LLVM: llvm.func @_mlir_ciface_qt_decode_gemv_w4asym_gch_f16_t3_n5_k40_s1(
// LLVM-NOT: unrealized_conversion_cast

// Dynamic T: one entry per T bucket, T read from x; rows of a bucket that
// may not exist (T = 3 in the [3, 4] entry) read row T - 1 and are stored
// only when t < T. Scales are f16 for bf16 activations; the bias is added in
// f32 and the sum rounded once to the f16 output.
// DYN: gpu.module @qt_decode_gemv_w8asym_g32_bf16_tdyn_n6_k64_s1_scf16_of16_bias {
// DYN: gpu.func @qt_decode_gemv_w8asym_g32_bf16_tdyn_n6_k64_s1_scf16_of16_bias_t1(%{{.*}}: memref<?x64xbf16>, %{{.*}}: memref<6x16xi32>, %{{.*}}: memref<6x2xf16>, %{{.*}}: memref<6x2xi8>, %[[B1:.*]]: memref<6xf16>, %[[Y1:.*]]: memref<?x6xf16>) kernel
// DYN: %[[T1:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x64xbf16>
// DYN: %[[BIAS1:.*]] = memref.load %[[B1]][%{{.*}}] : memref<6xf16>
// DYN: %[[BIASF:.*]] = arith.extf %[[BIAS1]] : f16 to f32
// DYN: %[[SUM:.*]] = arith.addf %{{.*}}, %[[BIASF]] : f32
// DYN: %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to f16
// DYN: memref.store %[[OUT]], %[[Y1]][%{{.*}}, %{{.*}}] : memref<?x6xf16>
// DYN: gpu.func @qt_decode_gemv_w8asym_g32_bf16_tdyn_n6_k64_s1_scf16_of16_bias_t2(
// DYN: gpu.func @qt_decode_gemv_w8asym_g32_bf16_tdyn_n6_k64_s1_scf16_of16_bias_t4(
// DYN: %[[T4:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x64xbf16>
// DYN: %[[FROM3:.*]] = arith.subi %[[T4]], %c3{{.*}} : index
// DYN: arith.cmpi ule, %[[FROM3]], %c1{{.*}} : index
// DYN: %[[LAST:.*]] = arith.subi %[[T4]], %c1{{.*}} : index
// DYN: arith.minui %c3{{.*}}, %[[LAST]] : index
// DYN: %[[ROW3:.*]] = arith.cmpi ult, %c3{{.*}}, %[[T4]] : index
// DYN: scf.if %[[ROW3]] {
// DYN: gpu.func @qt_decode_gemv_w8asym_g32_bf16_tdyn_n6_k64_s1_scf16_of16_bias_t8(
// DYN: gpu.func @qt_decode_gemv_w8asym_g32_bf16_tdyn_n6_k64_s1_scf16_of16_bias_t16(
// DYN-NOT: gpu.func

// DYNLLVM: llvm.func @_mlir_ciface_qt_decode_gemv_w4sym_g64_f16_tdyn_n6_k64_s1_obf16_t1(
// DYNLLVM: llvm.func @_mlir_ciface_qt_decode_gemv_w4sym_g64_f16_tdyn_n6_k64_s1_obf16_t16(
// DYNLLVM-NOT: arith.truncf
// DYNLLVM-NOT: llvm.fptrunc {{.*}} to bf16

// SPLIT16: split-K 2 needs an f32 output (partial sums are added atomically), got f16
// TWICE: kernel spec 'decode_gemv:w4:g32:sym:f16:t1:n8:k64:bias:bias': option 'bias' given twice
// BADOPT: kernel spec 'decode_gemv:w4:g32:sym:f16:t1:n8:k64:of8': unknown option 'of8'
// BADT: kernel spec 'decode_gemv:w4:g32:sym:f16:t0:n8:k64': bad rows 't0'

// BADWIDTH: error: qtensor-generate-kernels: kernel spec 'decode_gemv:w7:g128:sym:f16:t1:n8:k64': code width must be 2, 3, 4, 5, 6 or 8 bits, got 7
// BADGROUP: error: qtensor-generate-kernels: kernel spec 'decode_gemv:w4:g96:sym:f16:t1:n8:k64': group size must be 32, 64, 128 (16 for byte codes, or W4 codes without a zero-point) or per-channel, got 96
// BADROWS: decode kernels take T in [1, 16] rows, got 17
// BADSPLIT: split-K must be in [1, 2] (the 32-code chunks of K = 64), got 3
// BADTARGET: error: qtensor-generate-kernels: unknown target 'sm_70', expected sm_80, sm_90 or host
// DUP: error: kernel 'qt_decode_gemv_w4sym_g32_f16_t1_n8_k64_s1' already exists

module {
}
