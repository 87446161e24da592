// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=decode_gemv:w4:g32:e2m1:bf16:t1:n4096:k4096:s1:scf32,decode_gemv:w4:g32:e2m1:bf16:t16:n4097:k4100:s1:scf32 \
// RUN:   kernels=decode_gemv:w4:g16:e2m1:f16:t1:n4096:k4096:s1:scf32,decode_gemv:w4:g16:e2m1:f16:t16:n4096:k4096:s1:scf32 \
// RUN:   kernels=decode_gemv:w4:g16:e2m1:bf16:t1:n4099:k4112:s4:scf32,decode_gemv:w4:g16:sym:f16:t1:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w8:gch:e4m3:f16:t1:n4096:k4096:s1,decode_gemv:w8:gch:e4m3:bf16:t16:n4097:k4100:s2" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=decode_gemv:w4:g16:e2m1:f16:t1:n4096:k4096:s1:scf32,decode_gemv:w4:g32:e2m1:f16:t16:n4096:k4096:s1:scf32" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of decode-gemv-ptxas-gates.mlir for FP4 and FP8
// weights. FP8: E4M3 codes decoded from their bits, per-channel scales.
// FP4: E2M1
// codes (a chain of compare-and-selects in registers) under f32 scales
// decoded at load from their e8m0 (MXFP4, groups of 32) or ue4m3 (NVFP4,
// groups of 16: two scales per 32-code chunk, each half summed and scaled
// on its own) bytes. ptxas accepts the PTX, `ptxas -v` reports no spills at
// T = 1 and 16, with tails in N and K (K = 4112: a half chunk) and split-K,
// and codes are still read with ld.global.v4.

// GATE90: GATE qt_decode_gemv_w4e2m1_g16_bf16_t1_n4099_k4112_s4_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4e2m1_g16_f16_t16_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4e2m1_g16_f16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4e2m1_g32_bf16_t16_n4097_k4100_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4e2m1_g32_bf16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g16_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8e4m3_gch_bf16_t16_n4097_k4100_s2 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8e4m3_gch_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4e2m1_g16_f16_t1_n4096_k4096_s1_scf32 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4e2m1_g32_f16_t16_n4096_k4096_s1_scf32 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}

module {
}
