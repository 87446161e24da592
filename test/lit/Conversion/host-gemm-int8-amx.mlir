// The host GEMM with int8 activations at x86-64-v4-amx: T = 1 is the VNNI
// integer GEMV; T > 1 quantizes X per 32 into the tile layout (four codes
// of each of 16 tokens a row) and multiplies 16 weight rows by 16 tokens by
// 32 codes a tdpbssd, each product scaled by the tokens' block scales and
// the row's group scale. Groups of 16 (Q6_K) take 16-code steps; codes with
// a min (Q4_K) go in unsigned (tdpbusd), the min times X's step sums in the
// same accumulators; with an integer zero-point (GPTQ) z times X's integer
// step sums comes off the products. K not a multiple of 32 keeps the f32
// GEMM at T > 1, as does the x86-64-v4-vnni level. The lowered code calls
// LLVM's x86 tile intrinsics.
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-amx kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" | FileCheck %s --check-prefix=AMX
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-amx kernels=host_gemm:w8:gch:sym:bf16:n8:k32768:xq8" | FileCheck %s --check-prefix=LONG
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-amx kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=LLVM
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-amx kernels=host_gemm:w4:g128:asym:f16:n8:k256:xq8" | FileCheck %s --check-prefix=ZP
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-amx kernels=host_gemm:w6:g16:sym:f16:n8:k64:scf32:xq8" | FileCheck %s --check-prefix=G16
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-amx kernels=host_gemm:w4:g32:min:f16:n8:k64:scf32:xq8" | FileCheck %s --check-prefix=MIN
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-amx kernels=host_gemm:w4:g32:sym:f16:n8:k80:xq8" | FileCheck %s --check-prefix=FLOAT
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-vnni kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" | FileCheck %s --check-prefix=FLOAT

// AMX-LABEL: func.func @qt_host_gemm_w4sym_g32_f16_tdyn_n8_k64_s1_xq8(
// AMX: scf.if
// AMX: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// AMX: } else {
// 64 tokens a pass at K = 64: four blocks of 16 quads x 64 bytes.
// AMX: %[[X:.*]] = memref.alloca() : memref<4x16x64xi8>
// AMX: %[[XS:.*]] = memref.alloca() : memref<4x2x16xf32>
// AMX: %[[W:.*]] = memref.alloca() : memref<16x64xi8>
// AMX: %[[WS:.*]] = memref.alloca() : memref<16x2xf32>
// AMX: %[[C:.*]] = memref.alloca() : memref<16x16xi32>
// AMX: vector.store %{{.*}}, %[[X]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x16x64xi8>, vector<4xi8>
// AMX: arith.subi %{{.*}} : vector<32xi8>
// AMX: vector.store %{{.*}}, %[[W]]
// AMX: %[[A:.*]] = amx.tile_load %[[W]][%{{.*}}, %{{.*}}] : memref<16x64xi8> into !amx.tile<16x32xi8>
// AMX: %[[B:.*]] = amx.tile_load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x16x64xi8> into !amx.tile<8x64xi8>
// AMX: %[[ZERO:.*]] = amx.tile_zero : !amx.tile<16x16xi32>
// AMX: %[[P:.*]] = amx.tile_muli %[[A]], %[[B]], %[[ZERO]] : !amx.tile<16x32xi8>, !amx.tile<8x64xi8>, !amx.tile<16x16xi32>
// AMX: amx.tile_store %[[C]][%{{.*}}, %{{.*}}], %[[P]] : memref<16x16xi32>, !amx.tile<16x16xi32>
// AMX: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// AMX: vector.fma %{{.*}} : vector<16xf32>

// The longest row (32768 codes): 64 tokens would take 2 MiB of stack, so
// a pass is 32 tokens (X's tiles within 1 MiB).
// LONG: memref.alloca() : memref<2x8192x64xi8>
// LONG: amx.tile_muli

// LLVM: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tilezero.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tdpbssd.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tilestored64.internal"

// G16: amx.tile_load %{{.*}} : memref<16x64xi8> into !amx.tile<16x16xi8>
// G16: amx.tile_load %{{.*}} : memref<4x16x64xi8> into !amx.tile<4x64xi8>
// G16: amx.tile_muli %{{.*}}, %{{.*}}, %{{.*}} : !amx.tile<16x16xi8>, !amx.tile<4x64xi8>, !amx.tile<16x16xi32>

// MIN: %[[XSUMS:.*]] = memref.alloca() : memref<4x2x16xf32>
// MIN: %[[MINS:.*]] = memref.alloca() : memref<16x2xf32>
// MIN: vector.reduction <add>, %{{.*}} : vector<32xi32> into i32
// MIN: memref.store %{{.*}}, %[[XSUMS]]
// MIN: amx.tile_muli %{{.*}} zext, %{{.*}}, %{{.*}} :
// MIN: vector.load %[[XSUMS]]
// MIN: vector.fma
// MIN: memref.load %[[MINS]]
// MIN: vector.fma

// ZP: %[[XINT:.*]] = memref.alloca() : memref<4x8x16xi32>
// ZP: %[[ZS:.*]] = memref.alloca() : memref<16x8xi32>
// ZP: memref.store %{{.*}}, %[[XINT]]
// ZP: arith.extui %{{.*}} : i8 to i32
// ZP: memref.store %{{.*}}, %[[ZS]]
// ZP: amx.tile_muli %{{.*}} zext, %{{.*}}, %{{.*}} :
// ZP: vector.load %[[XINT]]{{.*}} vector<16xi32>
// ZP: memref.load %[[ZS]]
// ZP: arith.muli %{{.*}} : vector<16xi32>
// ZP: arith.subi %{{.*}} : vector<16xi32>
// ZP: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>

// FLOAT-NOT: amx.

module {
}
