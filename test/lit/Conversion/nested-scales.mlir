// Kernels with nested scales read as stored (spec option supNNN...): s
// (and a min's z) are one-byte codes, s2 (z2) the 16-bit second level per
// super-group. In the host GEMM, before a row is read, its codes are
// decoded into f32 stack rows a super-group at a time, second level first:
// s = d * code (u8 or i8 codes), m = (-dmin) * code; the terms then read
// those rows. The GPU kernels decode each group where they load it (below).
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w4:g32:min:f16:n8:k512:scf32:xq8:sup256u8f16" | FileCheck %s --check-prefix=Q4K
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=host_gemm:w6:g16:sym:bf16:n8:k256:scf32:sup256i8bf16" | FileCheck %s --check-prefix=Q6K
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w4:g32:min:f16:n8:k512:scf32:xq8:sup256u8f16" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=LLVM
// RUN: not qopt %s --qtensor-generate-kernels="target=host kernels=host_gemm:w4:g32:min:f16:n8:k384:scf32:sup256u8f16" 2>&1 | FileCheck %s --check-prefix=BADK
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g32:min:f16:t1:n8:k512:scf32:sup256u8f16" | FileCheck %s --check-prefix=GPU
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=prefill_mma:w6:g16:sym:f16:n8:k512:scf16:sup256i8f16" 2>&1 | FileCheck %s --check-prefix=BADGPU

// Q4K-LABEL: func.func @qt_host_gemm_w4min_g32_f16_tdyn_n8_k512_s1_scf32_xq8_sup256u8f16(
// Q4K-SAME: %[[X:.*]]: memref<?x512xf16>, %[[W:.*]]: memref<?x64xi32>, %[[S:.*]]: memref<?x16xi8>, %[[S2:.*]]: memref<?x2xf16>, %[[Z:.*]]: memref<?x16xi8>, %[[Z2:.*]]: memref<?x2xf16>, %[[Y:.*]]: memref<?x?xf32, strided<[?, 1]>>)
// Q4K: %[[SCALES:.*]] = memref.alloca() : memref<16xf32>
// Q4K: %[[MINS:.*]] = memref.alloca() : memref<16xf32>
// Q4K: %[[D:.*]] = memref.load %[[S2]][%{{.*}}, %{{.*}}] : memref<?x2xf16>
// Q4K: arith.extf %[[D]] : f16 to f32
// Q4K: vector.load %[[S]][%{{.*}}, %{{.*}}] : memref<?x16xi8>, vector<8xi8>
// Q4K: arith.uitofp %{{.*}} : vector<8xi8> to vector<8xf32>
// Q4K: arith.mulf
// Q4K: vector.store %{{.*}}, %[[SCALES]]
// Q4K: memref.load %[[Z2]][%{{.*}}, %{{.*}}] : memref<?x2xf16>
// Q4K: arith.negf %{{.*}} : f32
// Q4K: vector.load %[[Z]][%{{.*}}, %{{.*}}] : memref<?x16xi8>, vector<8xi8>
// Q4K: arith.uitofp %{{.*}} : vector<8xi8> to vector<8xf32>
// Q4K: arith.mulf
// Q4K: vector.store %{{.*}}, %[[MINS]]
// The terms read the decoded rows.
// Q4K: memref.load %[[SCALES]][%{{.*}}] : memref<16xf32>
// Q4K: memref.load %[[MINS]][%{{.*}}] : memref<16xf32>

// Q6_K's form: signed int8 scale codes, 16 a super-group, no min.
// Q6K-LABEL: func.func @qt_host_gemm_w6sym_g16_bf16_tdyn_n8_k256_s1_scf32_sup256i8bf16(
// Q6K-SAME: memref<?x256xbf16>, %{{.*}}: memref<?x64xi32>, %{{.*}}: memref<?x16xi8>, %{{.*}}: memref<?x1xbf16>, %{{.*}}: memref<?x?xf32, strided<[?, 1]>>)
// Q6K: arith.extf %{{.*}} : bf16 to f32
// Q6K: arith.sitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// Q6K-NOT: arith.negf

// LLVM: llvm.func @_mlir_ciface_qt_host_gemm_w4min_g32_f16_tdyn_n8_k512_s1_scf32_xq8_sup256u8f16

// BADK: nested scales need K a multiple of the super-group 256, got 384

// The decode GEMV (here its sm_90 form) takes the same arguments and
// decodes each group's scale and min in registers where its chunk loads
// them: the code, then its super-group's value, one multiply not fused
// into the fma that uses it (the decoder rounds the product once).
// GPU-LABEL: gpu.func @qt_decode_gemv_w4min_g32_f16_t1_n8_k512_s1_scf32_sup256u8f16(
// GPU-SAME: %[[X:.*]]: memref<1x512xf16>, %[[W:.*]]: memref<8x64xi32>, %[[S:.*]]: memref<8x16xi8>, %[[S2:.*]]: memref<8x2xf16>, %[[Z:.*]]: memref<8x16xi8>, %[[Z2:.*]]: memref<8x2xf16>, %[[Y:.*]]: memref<1x8xf32>) kernel
// GPU: %[[SC:.*]] = memref.load %[[S]][%{{.*}}, %[[G:.*]]] : memref<8x16xi8>
// GPU: %[[SCF:.*]] = arith.uitofp %[[SC]] : i8 to f32
// GPU: %[[D:.*]] = memref.load %[[S2]][%{{.*}}, %{{.*}}] : memref<8x2xf16>
// GPU: %[[DF:.*]] = arith.extf %[[D]] : f16 to f32
// GPU: arith.mulf %[[DF]], %[[SCF]] : f32
// GPU: memref.load %[[Z]][%{{.*}}, %[[G]]] : memref<8x16xi8>
// GPU: memref.load %[[Z2]]
// GPU: arith.negf %{{.*}} : f32
// GPU: vector.fma

// BADGPU: nested scales decode to f32 (the exact products of the two levels), not f16

module {}
