// The host GEMM's int8-activation path per CPU level: at x86-64-v3 and v4
// the codes meet X in AVX2's u8 x s8 pair multiply (the intrinsics; at
// x86-64-v4-vnni VNNI's u8 x s8 quad multiply-add), codes
// of at most 7 bits as their unsigned fields with the offset subtracted per
// four activations, 8-bit codes as |q| times x with q's sign; byte codes in
// groups of 32 two chunks at a time; codes with a min as their fields, the
// min times X's dequantized sums of four in a second accumulator; integer
// zero-points times X's sums of four subtracted. Generic code sign-extends
// both sides. Every form prefetches the next row's codes as it reads a row.
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" | FileCheck %s --check-prefix=V3
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4 kernels=host_gemm:w6:g16:sym:f16:n8:k80:scf32:xq8" | FileCheck %s --check-prefix=BYTES
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=LLVM
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" | FileCheck %s --check-prefix=GENERIC
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w8:g32:sym:f16:n8:k80:xq8" | FileCheck %s --check-prefix=W8
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w5:g32:sym:f16:n8:k64:xq8" | FileCheck %s --check-prefix=W5
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w4:g32:sym:f16:n8:k64" | FileCheck %s --check-prefix=GENERIC
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w5:g32:min:f16:n8:k64:scf32:xq8" | FileCheck %s --check-prefix=MIN
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=host_gemm:w4:g32:min:f16:n8:k64:xq8" | FileCheck %s --check-prefix=MINGENERIC
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w4:g128:asym:f16:n8:k256:xq8" | FileCheck %s --check-prefix=ASYM
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v3 kernels=host_gemm:w4:g128:sym:f16:n8:k2048:xq8" | FileCheck %s --check-prefix=ROW
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-vnni kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" | FileCheck %s --check-prefix=VNNI
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-vnni kernels=host_gemm:w8:g32:sym:f16:n8:k80:xq8" | FileCheck %s --check-prefix=VNNIW8
// RUN: qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v4-vnni kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=VNNILLVM
// RUN: not qopt %s --qtensor-generate-kernels="target=host host-cpu=x86-64-v9 kernels=host_gemm:w4:g32:sym:f16:n8:k64:xq8" 2>&1 | FileCheck %s --check-prefix=BADCPU
// RUN: not qopt %s --qtensor-instantiate-kernels="target=host host-cpu=avx2" 2>&1 | FileCheck %s --check-prefix=BADINST

// V3-LABEL: func.func @qt_host_gemm_w4sym_g32_f16_tdyn_n8_k64_s1_xq8(
// The offsets, 8 times X's sums of four, stored once per call.
// V3: %[[OFFSETS:.*]] = memref.alloca() : memref<16xi32>
// V3: arith.muli %{{.*}}, %cst{{.*}} : vector<8xi32>
// V3: vector.store %{{.*}}, %[[OFFSETS]]
// V3: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%{{.*}}, %{{.*}}) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// V3: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// V3: vector.load %[[OFFSETS]]
// V3: arith.subi %{{.*}} : vector<8xi32>
// V3: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>

// Byte codes (Q6_K's form): 16 a chunk, each masked to its 6 bits.
// BYTES: arith.andi %{{.*}}, %{{.*}} : vector<16xi8>
// BYTES: llvm.call_intrinsic "llvm.x86.ssse3.pmadd.ub.sw.128"(%{{.*}}, %{{.*}}) : (vector<16xi8>, vector<16xi8>) -> vector<8xi16>
// BYTES: llvm.call_intrinsic "llvm.x86.sse2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<8xi16>, vector<8xi16>) -> vector<4xi32>
// BYTES: arith.subi %{{.*}} : vector<4xi32>

// Q8_0's form: |q| (max(q, -q), 128 for -128 as an unsigned byte) and x
// with q's sign, two 16-byte chunks a multiply; K = 80 leaves one chunk.
// W8-NOT: memref<{{[0-9]+}}xi32>
// W8: arith.maxsi %{{.*}} : vector<32xi8>
// W8: llvm.call_intrinsic "llvm.x86.avx2.psign.b"(%{{.*}}, %{{.*}}) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
// W8: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// W8: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// W8-NOT: arith.subi %{{.*}} : vector<8xi32>
// W8: llvm.call_intrinsic "llvm.x86.ssse3.psign.b.128"
// W8: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 4, 4, 4] : vector<4xi32>, vector<4xi32>

// Q5_0's form: byte fields in pairs of chunks, offsets subtracted.
// W5: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%{{.*}}, %{{.*}}) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// W5: arith.subi %{{.*}} : vector<8xi32>

// Q5_K's form: no offsets; X's sums of four scaled by their block's scale
// once per call, and m times them beside the integer sums.
// MIN-NOT: memref<16xi32>
// MIN: %[[XM:.*]] = memref.alloca() : memref<16xf32>
// MIN: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// MIN: vector.store %{{.*}}, %[[XM]]
// MIN: arith.andi %{{.*}}, %{{.*}} : vector<32xi8>
// MIN: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%{{.*}}, %{{.*}}) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// MIN-NOT: arith.subi %{{.*}} : vector<8xi32>
// MIN: vector.fma %{{.*}} : vector<8xf32>
// MIN: vector.load %[[XM]]
// MIN: vector.fma %{{.*}} : vector<8xf32>

// Q4_1's form, generic: fields sign-extended (no offset), 8 lanes of
// X's sums per 32-code chunk.
// MINGENERIC-NOT: llvm.call_intrinsic
// MINGENERIC: memref.alloca() : memref<16xf32>
// MINGENERIC: arith.extsi %{{.*}} : vector<32xi8> to vector<32xi32>
// MINGENERIC: vector.load %{{.*}} : memref<16xf32>, vector<8xf32>

// GPTQ's form (integer zero-points): X's plain sums of four stored once,
// each term's z times them subtracted from the integer sums.
// ASYM: %[[SUMS:.*]] = memref.alloca() : memref<64xi32>
// ASYM-NOT: arith.muli %{{.*}}, %cst{{.*}} : vector<8xi32>
// ASYM: vector.store %{{.*}}, %[[SUMS]]
// ASYM: %[[Z:.*]] = memref.load %arg3
// ASYM: arith.extui %[[Z]] : i8 to i32
// ASYM: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// ASYM: vector.load %[[SUMS]]
// ASYM: arith.muli %{{.*}}, %{{.*}} : vector<8xi32>
// ASYM: arith.subi %{{.*}} : vector<8xi32>

// Per row: its 16-bit scales widened to f32 eight at a time (each term
// then broadcasts its scale from memory); per chunk read, the next row's
// chunk prefetched (the row after the last is the last).
// ROW: %[[WIDE:.*]] = memref.alloca() : memref<16xf32>
// ROW: vector.load %arg2[%{{.*}}, %{{.*}}] : memref<?x16xf16>, vector<8xf16>
// ROW: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// ROW: vector.store %{{.*}}, %[[WIDE]]
// ROW: %[[LAST:.*]] = arith.subi %{{.*}}, %c1
// ROW: %[[NEXT:.*]] = arith.minui %{{.*}}, %[[LAST]] : index
// ROW: memref.prefetch %arg1[%[[NEXT]], %{{.*}}], read, locality<3>, data
// ROW: memref.load %[[WIDE]]

// LLVM: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// LLVM-NOT: = vector.
// LLVM-NOT: = arith.

// GENERIC-NOT: llvm.call_intrinsic
// GENERIC-NOT: memref<16xi32>

// BADCPU: error: qtensor-generate-kernels: unknown host-cpu 'x86-64-v9', expected one of generic, x86-64-v2, x86-64-v3, x86-64-v4, x86-64-v4-vnni, x86-64-v4-amx
// BADINST: error: qtensor-instantiate-kernels: unknown host-cpu 'avx2', expected one of generic, x86-64-v2, x86-64-v3, x86-64-v4, x86-64-v4-vnni, x86-64-v4-amx

// At x86-64-v4-vnni one vpdpbusd replaces the pair multiply and its pair
// sum, its accumulator starting at minus the offsets' products; 8-bit codes
// keep |q| and the sign; the lowered code calls the intrinsic.
// VNNI-LABEL: func.func @qt_host_gemm_w4sym_g32_f16_tdyn_n8_k64_s1_xq8(
// VNNI: %[[OFF:.*]] = vector.load %{{.*}} : memref<16xi32>, vector<8xi32>
// VNNI: %[[START:.*]] = arith.subi %{{.*}}, %[[OFF]] : vector<8xi32>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%[[START]], %{{.*}}, %{{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// VNNI-NOT: pmadd
// VNNIW8: llvm.call_intrinsic "llvm.x86.avx2.psign.b"
// VNNIW8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%cst{{.*}}, %{{.*}}, %{{.*}})
// VNNIW8-NOT: pmadd
// VNNILLVM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"

module {
}
