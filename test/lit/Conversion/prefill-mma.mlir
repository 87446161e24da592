// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 kernels=prefill_mma:w4:g128:asym:f16:n96:k200:of16:bias" | FileCheck %s --check-prefix=W4
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 kernels=prefill_mma:w8:gch:sym:bf16:t48:n64:k64" | FileCheck %s --check-prefix=W8
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=prefill_mma:w4:g32:sym:f16:n40:k24:obf16" | FileCheck %s --check-prefix=HOST
// RUN: qopt %s --qtensor-generate-kernels="target=host kernels=prefill_mma:w4:g32:sym:f16:n40:k24:obf16" --qtensor-lower-kernels-to-host | FileCheck %s --check-prefix=LLVM
// RUN: rm -rf %t && mkdir -p %t/sm80 %t/sm90
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 kernels=prefill_mma:w4:g64:asym:f16:n256:k512:of16" --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: FileCheck %s --check-prefix=PTX80 < %t/sm80/qt_prefill_mma_w4asym_g64_f16_tdyn_n256_k512_s1_of16.ptx
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 kernels=prefill_mma:w8:g32:sym:bf16:n128:k256:obf16:bias" --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: FileCheck %s --check-prefix=PTX90 < %t/sm90/qt_prefill_mma_w8sym_g32_bf16_tdyn_n128_k256_s1_obf16_bias.ptx
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=prefill_mma:w4:g32:sym:f16:n64:k100" 2>&1 | FileCheck %s --check-prefix=BADK
// RUN: not qopt %s --qtensor-generate-kernels="target=sm_90 kernels=prefill_mma:w4:g32:sym:f16:tdyn:n64:k128:s2" 2>&1 | FileCheck %s --check-prefix=BADSPLIT

// The tensor-core prefill GEMM. W4 asymmetric, groups of 128, dynamic T,
// K = 200: 13 k16 steps in 4 stages of 64 columns (the last one a single
// step), so a group spans two stages and is closed by a runtime test on the
// stage index. Activations go through cp.async into two stages, the block's
// scales and zero-points through shared memory too; A fragments come from
// ldmatrix.x4, B fragments from one 128-bit load of a prefill_mma panel,
// converted with the 0x6400 half magic.

// W4: module attributes {gpu.container_module}
// W4: gpu.func @qt_prefill_mma_w4asym_g128_f16_tdyn_n96_k200_s1_of16_bias(%{{.*}}: memref<?x200xf16>, %{{.*}}: memref<2x1664xi32>, %{{.*}}: memref<96x2xf16>, %{{.*}}: memref<96x2xi8>, %{{.*}}: memref<96xf16>, %{{.*}}: memref<?x96xf16>)
// W4-SAME: workgroup(%[[STAGE:.*]] : memref<2x32x72xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[SCALES:.*]] : memref<2x1x256xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[ZEROS:.*]] : memref<2x1x256xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// W4-SAME: known_block_size = array<i32: 256, 1, 1>
// Prologue: stage 0 of the activations and of the qparams.
// W4: nvgpu.device_async_copy %{{.*}}, %[[STAGE]][%{{.*}}, %{{.*}}, %{{.*}}], 8, %{{.*}} {bypassL1} : memref<?x200xf16> to memref<2x32x72xf16, #gpu.address_space<workgroup>>
// W4: %[[FIRST:.*]] = nvgpu.device_async_create_group
// W4: memref.store %{{.*}}, %[[SCALES]]
// W4: memref.store %{{.*}}, %[[ZEROS]]
// The k loop over the first three stages: prefetch the next one, wait for
// this one, multiply, stage the next qparams.
// W4: scf.for
// W4: nvgpu.device_async_copy
// W4: %[[NEXT:.*]] = nvgpu.device_async_create_group
// W4: nvgpu.device_async_wait %[[NEXT]] {numGroups = 1 : i32}
// W4-NEXT: gpu.barrier
// W4: memref.load %[[ZEROS]]
// W4: nvgpu.ldmatrix %[[STAGE]][{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<2x32x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// W4: vector.load %{{.*}} {alignment = 16 : i64} : memref<2x1664xi32>, vector<4xi32>
// W4: arith.constant 1677747200 : i32
// W4: arith.ori
// W4: vector.bitcast %{{.*}} : vector<1xi32> to vector<2xf16>
// W4: arith.subf %{{.*}} : vector<2xf16>
// W4-COUNT-8: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// A group of 128 closes after every second stage.
// W4: arith.remui %{{.*}}, %c2
// W4: scf.if
// W4: vector.load %[[SCALES]]{{.*}} : memref<2x1x256xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// W4: arith.mulf %{{.*}} fastmath<contract> : f32
// W4-NEXT: arith.addf %{{.*}} fastmath<contract> : f32
// W4: memref.store %{{.*}}, %[[SCALES]]
// W4: gpu.barrier
// W4-NEXT: scf.yield
// The last stage, then the epilogue: bias, f16 pairs.
// W4: nvgpu.device_async_wait %[[FIRST]] {numGroups = 0 : i32}
// W4-NEXT: gpu.barrier
// W4: nvvm.mma.sync
// W4: memref.load %{{.*}} : memref<96xf16>
// W4: arith.truncf %{{.*}} : f32 to f16
// W4: vector.store %{{.*}} {alignment = 4 : i64} : memref<?x96xf16>, vector<2xf16>

// W8 symmetric, bf16, per-channel, static T = 48, f32 output: 8-bit fields
// go through the f32 magic (0x4B000000) and an exact truncation to bf16; the
// mma takes bf16 registers as i32; no qparams are staged, and the scales are
// applied once, after the k loop.
// W8: gpu.func @qt_prefill_mma_w8sym_gch_bf16_t48_n64_k64_s1(%{{.*}}: memref<48x64xbf16>, %{{.*}}: memref<2x512xi32>, %{{.*}}: memref<64x1xbf16>, %{{.*}}: memref<48x64xf32>)
// W8-SAME: workgroup(%{{.*}} : memref<2x32x72xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// W8-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<2x512xi32>, vector<4xi32>
// W8: arith.constant dense<1258291200> : vector<2xi32>
// W8: vector.bitcast %{{.*}} : vector<2xi32> to vector<2xf32>
// W8: arith.subf %{{.*}} : vector<2xf32>
// W8: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// W8: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// W8-NOT: scf.if {{.*}} -> (f32
// W8: memref.load %{{.*}} : memref<64x1xbf16>
// W8: arith.mulf
// W8-NOT: arith.truncf %{{.*}} : f32 to
// W8: vector.store %{{.*}} {alignment = 8 : i64} : memref<48x64xf32>, vector<2xf32>

// The host twin: the same per-lane code, with cp.async, ldmatrix and
// mma.sync replayed on lane arrays (no gpu, nvgpu or nvvm ops).
// HOST: func.func @qt_prefill_mma_w4sym_g32_f16_tdyn_n40_k24_s1_obf16(%{{.*}}: memref<?x24xf16>, %{{.*}}: memref<1x256xi32>, %{{.*}}: memref<40x1xf16>, %{{.*}}: memref<?x40xbf16>) attributes {llvm.emit_c_interface}
// HOST-NOT: gpu.
// HOST-NOT: nvgpu.
// HOST-NOT: nvvm.
// HOST: memref.alloca() : memref<2x32x72xf16>
// HOST: memref.alloca() : memref<2x2x256xf16>
// HOST: memref.alloca() : memref<32x2xindex>
// HOST: vector.load %{{.*}} : memref<?x24xf16>, vector<8xf16>
// HOST: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x256xi32>, vector<4xi32>
// HOST: arith.extf %{{.*}} : f16 to f32
// HOST: arith.truncf %{{.*}} : f32 to bf16

// LLVM: llvm.func @qt_prefill_mma_w4sym_g32_f16_tdyn_n40_k24_s1_obf16(
// LLVM: llvm.func @_mlir_ciface_qt_prefill_mma_w4sym_g32_f16_tdyn_n40_k24_s1_obf16(

// PTX for sm_80, W4 asymmetric f16: 16-byte cp.async with a source size
// (zero fill), the double-buffer waits, ldmatrix.x4, 128-bit code loads, the
// f16 tensor-core mma and 32-bit output pairs.
// PTX80: .target sm_80
// PTX80: .shared .align 16 .b8
// PTX80: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// PTX80: cp.async.commit_group;
// PTX80: cp.async.wait_group 1;
// PTX80-NEXT: bar.sync 0;
// PTX80: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX80: ld.global.v4.b32
// PTX80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX80: cp.async.wait_group 0;
// PTX80: st.global.b32

// PTX for sm_90, W8 symmetric bf16 with bias: the bf16 tensor-core mma and
// cvt.rn.bf16x2.f32 of the exact f32 conversion.
// PTX90: .target sm_90
// PTX90: cp.async.cg.shared.global
// PTX90: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX90: ld.global.v4.b32
// PTX90: cvt.rn.bf16x2.f32
// PTX90: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// BADK: kernel spec 'prefill_mma:w4:g32:sym:f16:n64:k100': prefill kernels stage X in 16-byte cp.async copies, so K must be a multiple of 8, got 100
// BADSPLIT: prefill kernels do not split K, got split 2

module {
}
