// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=prefill_mma:w4:g32:min:f16:n4096:k4096:scf32:of16,prefill_mma:w5:g32:min:bf16:n4100:k4104:scf32:of32:bias \
// RUN:   kernels=prefill_mma:w6:g16:sym:f16:n4096:k4096:scf32:of16,prefill_mma:w3:g16:sym:bf16:n300:k520:scf32:obf16 \
// RUN:   kernels=prefill_mma:w2:g16:asym:f16:n11008:k4096:scf32:of16,prefill_mma:w2:g16:min:f16:n11008:k4096:scf32:of16,prefill_mma:w2:g16:min:bf16:n4100:k4104:scf32:obf16:bias,prefill_mma:w2:g32:min:bf16:n4096:k4096:scf32:of32,prefill_mma:w5:g32:sym:f16:n4096:k4096:of16 \
// RUN:   kernels=prefill_mma:w4:g32:min:bf16:n4096:k4096:obf16,prefill_mma:w4:gch:min:f16:n300:k520:scf32:of32 \
// RUN:   kernels=prefill_mma:w4:g32:iq4_nl:f16:n4096:k4096:of16,prefill_mma:w4:g16:e2m1:bf16:n4100:k4104:scf32:obf16 \
// RUN:   kernels=prefill_mma:w8:gch:e4m3:f16:n4096:k4096:scf32:of16,prefill_mma:w5:g64:asym:bf16:n4096:k4096:of16" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=prefill_mma:w4:g32:min:f16:n4096:k4096:scf32:of16,prefill_mma:w6:g16:sym:bf16:n4096:k4096:scf32:obf16 \
// RUN:   kernels=prefill_mma:w4:g32:iq4_nl:bf16:n4096:k4096:of16" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of prefill-mma-ptxas-gates.mlir for the forms ggml files
// keep (issue 13) and the float-code families: a float min per group
// (Q4_1, Q4_K, Q5_K, Q2_K; one more mma against a B of ones per m16 tile;
// with groups of 16, Q2_K, a loop over the tile's steps, which unrolled
// spilled at 255 registers),
// 2-, 3-, 5- and 6-bit codes in byte fields, f32 scales, groups of 16
// (Q3_K, Q6_K, NVFP4), and codebooks exact in the activation type
// (IQ4_NL, E2M1, E4M3). ptxas accepts each, with no spills, and every
// kernel reads its codes with ld.global.v4 and runs mma.sync, ldmatrix and
// cp.async, at 7B shapes with and without tails.

// GATE90-DAG: GATE qt_prefill_mma_w2asym_g16_f16_tdyn_n11008_k4096_s1_scf32_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w2min_g16_f16_tdyn_n11008_k4096_s1_scf32_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w2min_g16_bf16_tdyn_n4100_k4104_s1_scf32_obf16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w2min_g32_bf16_tdyn_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w3sym_g16_bf16_tdyn_n300_k520_s1_scf32_obf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w4e2m1_g16_bf16_tdyn_n4100_k4104_s1_scf32_obf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w4iq4_nl_g32_f16_tdyn_n4096_k4096_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w4min_g32_bf16_tdyn_n4096_k4096_s1_obf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w4min_g32_f16_tdyn_n4096_k4096_s1_scf32_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w4min_gch_f16_tdyn_n300_k520_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w5asym_g64_bf16_tdyn_n4096_k4096_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w5min_g32_bf16_tdyn_n4100_k4104_s1_scf32_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w5sym_g32_f16_tdyn_n4096_k4096_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w6sym_g16_f16_tdyn_n4096_k4096_s1_scf32_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_prefill_mma_w8e4m3_gch_f16_tdyn_n4096_k4096_s1_scf32_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_prefill_mma_w4iq4_nl_g32_bf16_tdyn_n4096_k4096_s1_of16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_prefill_mma_w4min_g32_f16_tdyn_n4096_k4096_s1_scf32_of16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_prefill_mma_w6sym_g16_bf16_tdyn_n4096_k4096_s1_scf32_obf16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
