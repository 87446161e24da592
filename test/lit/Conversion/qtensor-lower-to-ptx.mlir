// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g128:sym:f16:t4:n256:k4096,decode_gemv:w8:g32:asym:bf16:t1:n64:k4100:s2" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" | FileCheck %s --check-prefix=SM90
// RUN: FileCheck %s --check-prefix=PTX90 < %t/sm90/qt_decode_gemv_w4sym_g128_f16_t4_n256_k4096_s1.ptx
// RUN: FileCheck %s --check-prefix=SPLIT < %t/sm90/qt_decode_gemv_w8asym_g32_bf16_t1_n64_k4100_s2.ptx
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 kernels=decode_gemv:w4:g64:asym:bf16:t16:n100:k1000" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-version=78 ptx-dir=%t/sm80" | FileCheck %s --check-prefix=SM80
// RUN: FileCheck %s --check-prefix=PTX80 < %t/sm80/qt_decode_gemv_w4asym_g64_bf16_t16_n100_k1000_s1.ptx
// RUN: %if ptxas %{ %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90 %}
// RUN: %if ptxas %{ %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80 %}

// Diagnostics before anything reaches the NVPTX backend (which aborts the
// process for sm_90 below PTX 7.8).
// RUN: not qopt %s --qtensor-lower-to-ptx="chip=sm_90 ptx-version=70" 2>&1 | FileCheck %s --check-prefix=LOWPTX
// RUN: not qopt %s --qtensor-lower-to-ptx="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not qopt %s --qtensor-lower-to-ptx="chip=sm_90 ptx-version=79" 2>&1 | FileCheck %s --check-prefix=BADPTX
// RUN: not qopt %s --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/missing" 2>&1 | FileCheck %s --check-prefix=NODIR

// Each gpu.module becomes a gpu.binary holding PTX; the default PTX ISA is
// the chip's minimum (7.8 for sm_90).
// SM90: gpu.binary @qt_decode_gemv_w4sym_g128_f16_t4_n256_k4096_s1 [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx78">
// SM90-SAME: assembly = "
// SM90: gpu.binary @qt_decode_gemv_w8asym_g32_bf16_t1_n64_k4100_s2
// SM90-NOT: gpu.module

// PTX90: .version 7.8
// PTX90-NEXT: .target sm_90
// PTX90: .visible .entry qt_decode_gemv_w4sym_g128_f16_t4_n256_k4096_s1(
// No .maxntid: under it ptxas caps some entries at 72 registers and spills.
// PTX90-NOT: .maxntid
// Codes and (16-byte aligned, K % 8 == 0) activations in 128-bit loads.
// PTX90: ld.global.v4.b32
// PTX90: fma.rn.f32
// PTX90-COUNT-20: shfl.sync.bfly.b32
// PTX90-NOT: atom.global

// Split-K adds partial sums atomically; K = 4100 rows are 2-byte aligned,
// so only the codes use 128-bit loads there.
// SPLIT: .visible .entry qt_decode_gemv_w8asym_g32_bf16_t1_n64_k4100_s2(
// SPLIT: ld.global.v4.b32
// SPLIT: atom.global.add.f32

// SM80: gpu.binary @qt_decode_gemv_w4asym_g64_bf16_t16_n100_k1000_s1 [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx78">
// PTX80: .version 7.8
// PTX80-NEXT: .target sm_80
// PTX80: ld.global.v4.b32

// GATE90: GATE qt_decode_gemv_w4sym_g128_f16_t4_n256_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g32_bf16_t1_n64_k4100_s2 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_g64_bf16_t16_n100_k1000_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}

// LOWPTX: error: qtensor-lower-to-ptx: sm_90 needs PTX ISA 7.8 or later, got 7.0
// BADCHIP: error: qtensor-lower-to-ptx: unsupported chip 'sm_75', expected sm_80 or sm_90
// BADPTX: error: qtensor-lower-to-ptx: unknown PTX ISA version 79, expected 70-78, 80-88 or 90
// NODIR: error: qtensor-lower-to-ptx: ptx-dir '{{.*}}missing' is not an existing directory

module {
}
