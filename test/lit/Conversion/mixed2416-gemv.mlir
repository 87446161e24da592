// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 kernels=mixed2416_gemv:g64:z2:f16:t2:n6:k192:of16:bias" | FileCheck %s --check-prefix=GPU
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=mixed2416_gemv:g64:z2:f16:t2:n6:k192:correct" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=HOST
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=mixed2416_gemv:g64:z5:f16:t2:n6:k192,decode_gemv:w4:g32:sym:f16:t1:n8:k64" 2>&1 | FileCheck %s --check-prefix=BADG2
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=mixed2416_gemv:g96:z2:f16:t1:n6:k192" 2>&1 | FileCheck %s --check-prefix=BADG1
// RUN: not qopt %s --qtensor-generate-kernels="target=host kernels=mixed2416_gemv:g64:z2:f16:t1:n6:k192:correct:replace" 2>&1 | FileCheck %s --check-prefix=TWICE

// The mixed 2/4/16 decode GEMV reads the family's streams as stored: the
// precision map (3 bytes for 6 x 3 groups), the W2 and W4 code streams, the
// row table of W4 groups, qs and z1 per group, s2 and z2 per 2 rows of a
// group column, the CSR outliers, the bias and y. A group's code words come
// from one stream or the other (scf.if on its map bit); W2 codes of a
// 64-group are one 16-byte load, spread to one code per nibble and
// interleaved into W4 words; W4 codes are one 32-byte load. The steps of
// 32 codes then unpack the same way whatever the width, with no branch.

// GPU: gpu.func @qt_mixed2416_gemv_g64_z2_f16_t2_n6_k192_of16_bias(%{{.*}}: memref<2x192xf16>, %{{.*}}: memref<3xi8>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<7xi32>, %{{.*}}: memref<6x3xi8>, %{{.*}}: memref<6x3xi8>, %{{.*}}: memref<3x3xf16>, %{{.*}}: memref<3x3xf16>, %{{.*}}: memref<?xf16>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<7xi32>, %{{.*}}: memref<6xf16>, %{{.*}}: memref<2x6xf16>) kernel
// GPU: scf.if %{{.*}} -> (vector<8xi32>)
// GPU: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xi32>, vector<8xi32>
// GPU: } else {
// GPU: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xi32>, vector<4xi32>
// GPU: arith.shli
// GPU: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xi32>, vector<4xi32>
// GPU: scf.for
// GPU-NOT: scf.if
// GPU: vector.load %{{.*}} {alignment = 16 : i64} : memref<2x192xf16>, vector<32xf16>
// GPU: vector.reduction <add>
// GPU: gpu.shuffle  xor
// GPU: arith.truncf %{{.*}} : f32 to f16

// HOST: llvm.func @_mlir_ciface_qt_mixed2416_gemv_g64_z2_f16_t2_n6_k192_corr(

// BADG2: kernel spec 'mixed2416_gemv:g64:z5:f16:t2:n6:k192': second-level group size 5 must divide N = 6
// BADG2-NOT: gpu.module
// BADG1: first-level group size must be a multiple of 64 up to 256, got 96
// TWICE: option 'replace' given twice
module {}
