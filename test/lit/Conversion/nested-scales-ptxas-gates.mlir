// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=decode_gemv:w4:g32:min:f16:t1:n4096:k4096:s1:scf32:sup256u8f16,decode_gemv:w4:g32:min:bf16:t16:n4097:k4352:s2:scf32:sup256u8bf16 \
// RUN:   kernels=decode_gemv:w6:g16:sym:f16:t1:n4096:k4096:s1:scf32:sup256i8f16,decode_gemv:w6:g16:sym:bf16:tdyn:n4099:k4352:s1:scf32:sup256i8f16 \
// RUN:   kernels=decode_gemv:w5:g32:min:f16:t1:n4096:k4096:s1:scf32:sup256u8f16,decode_gemv:w3:g16:sym:f16:t1:n4096:k4096:s1:scf32:sup256i8f16 \
// RUN:   kernels=decode_gemv:w2:g16:min:f16:t1:n11008:k4096:s1:scf32:sup256u8f16,decode_gemv:w4:g32:iq4_nl:f16:t1:n4096:k4096:s1:scf32:sup256i8f16 \
// RUN:   kernels=prefill_mma:w4:g32:min:f16:n4096:k4096:scf32:of16:sup256u8f16,prefill_mma:w5:g32:min:bf16:n4100:k4352:scf32:of32:bias:sup256u8bf16 \
// RUN:   kernels=prefill_mma:w6:g16:sym:f16:n4096:k4096:scf32:of16:sup256i8f16,prefill_mma:w3:g16:sym:bf16:n300:k512:scf32:obf16:sup256i8f16 \
// RUN:   kernels=prefill_mma:w2:g16:min:f16:n11008:k4096:scf32:of16:sup256u8f16,prefill_mma:w4:g32:iq4_nl:f16:n4096:k4096:scf32:of16:sup256i8f16" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=decode_gemv:w4:g32:min:f16:t1:n4096:k4096:s1:scf32:sup256u8f16,decode_gemv:w6:g16:sym:f16:t16:n4096:k4096:s1:scf32:sup256i8f16 \
// RUN:   kernels=prefill_mma:w4:g32:min:f16:n4096:k4096:scf32:of16:sup256u8f16,prefill_mma:w6:g16:sym:bf16:n4096:k4096:scf32:obf16:sup256i8f16" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of the GPU kernels that read a nested descriptor's two
// levels as stored (spec option `sup...`; issue 13): one-byte scale (and
// min) codes per group under a 16-bit value per super-group, decoded in
// registers where each group's scale is loaded (the decode GEMV per chunk,
// the tensor-core GEMM per staged k-tile). Q4_K, Q5_K and Q2_K (a min),
// Q6_K and Q3_K (signed scale codes), IQ4_XS (a codebook) at 7B shapes,
// with tails in N and split-K, static and dynamic T: ptxas accepts each
// with no spills; codes are read with ld.global.v4 and the tensor-core
// GEMM still runs mma.sync, ldmatrix and cp.async.

// GATE90-DAG: GATE qt_decode_gemv_w2min_g16_f16_t1_n11008_k4096_s1_scf32_sup256u8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w3sym_g16_f16_t1_n4096_k4096_s1_scf32_sup256i8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w4iq4_nl_g32_f16_t1_n4096_k4096_s1_scf32_sup256i8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w4min_g32_bf16_t16_n4097_k4352_s2_scf32_sup256u8bf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w4min_g32_f16_t1_n4096_k4096_s1_scf32_sup256u8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w5min_g32_f16_t1_n4096_k4096_s1_scf32_sup256u8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w6sym_g16_bf16_tdyn_n4099_k4352_s1_scf32_sup256i8f16_t1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w6sym_g16_bf16_tdyn_n4099_k4352_s1_scf32_sup256i8f16_t16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_decode_gemv_w6sym_g16_f16_t1_n4096_k4096_s1_scf32_sup256i8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w2min_g16_f16_tdyn_n11008_k4096_s1_scf32_of16_sup256u8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w3sym_g16_bf16_tdyn_n300_k512_s1_scf32_obf16_sup256i8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w4iq4_nl_g32_f16_tdyn_n4096_k4096_s1_scf32_of16_sup256i8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w4min_g32_f16_tdyn_n4096_k4096_s1_scf32_of16_sup256u8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w5min_g32_bf16_tdyn_n4100_k4352_s1_scf32_bias_sup256u8bf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w6sym_g16_f16_tdyn_n4096_k4096_s1_scf32_of16_sup256i8f16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_decode_gemv_w4min_g32_f16_t1_n4096_k4096_s1_scf32_sup256u8f16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_decode_gemv_w6sym_g16_f16_t16_n4096_k4096_s1_scf32_sup256i8f16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_prefill_mma_w4min_g32_f16_tdyn_n4096_k4096_s1_scf32_of16_sup256u8f16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_prefill_mma_w6sym_g16_bf16_tdyn_n4096_k4096_s1_scf32_obf16_sup256i8f16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}

module {
}
