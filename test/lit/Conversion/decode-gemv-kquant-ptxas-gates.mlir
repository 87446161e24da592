// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=decode_gemv:w4:g32:min:f16:t1:n4096:k4096:s1:scf32,decode_gemv:w4:g32:min:bf16:t16:n4097:k4100:s2:scf32 \
// RUN:   kernels=decode_gemv:w5:g32:min:f16:t1:n4096:k4096:s1:scf32,decode_gemv:w6:g16:sym:f16:t1:n4096:k4096:s1:scf32 \
// RUN:   kernels=decode_gemv:w6:g16:sym:bf16:t16:n4099:k4112:s1:scf32,decode_gemv:w5:g32:sym:f16:t1:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w4:g32:min:f16:t1:n11008:k4096:s1,decode_gemv:w2:g16:min:f16:t1:n4096:k4096:s1:scf32 \
// RUN:   kernels=decode_gemv:w3:g16:sym:f16:t1:n4096:k4096:s1:scf32" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=decode_gemv:w4:g32:min:f16:t1:n4096:k4096:s1:scf32,decode_gemv:w6:g16:sym:f16:t16:n4096:k4096:s1:scf32" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of decode-gemv-ptxas-gates.mlir for ggml's K-quants and
// legacy types kept as stored: a float min per group (Q4_1, Q4_K, Q5_K,
// Q2_K; each lane decoded to s * q + m with one fma before the dot),
// 2-, 3-, 5- and 6-bit codes one per byte field (16-code chunks; Q6_K's
// groups of 16 are a whole chunk), f32 scales decoded at load from the two
// levels. ptxas accepts the PTX, `ptxas -v` reports no spills at T = 1 and
// 16, with tails in N and K and split-K, and codes are read with
// ld.global.v4.

// GATE90-DAG: GATE qt_decode_gemv_w2min_g16_f16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w3sym_g16_f16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w4min_g32_bf16_t16_n4097_k4100_s2_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w4min_g32_f16_t1_n11008_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w4min_g32_f16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w5min_g32_f16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w5sym_g32_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w6sym_g16_bf16_t16_n4099_k4112_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w6sym_g16_f16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_decode_gemv_w4min_g32_f16_t1_n4096_k4096_s1_scf32 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_decode_gemv_w6sym_g16_f16_t16_n4096_k4096_s1_scf32 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}

module {
}
