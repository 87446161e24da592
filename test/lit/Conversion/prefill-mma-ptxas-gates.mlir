// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=prefill_mma:w4:g32:sym:f16:n4096:k4096:of16,prefill_mma:w4:g32:sym:bf16:n4100:k4104:obf16:bias \
// RUN:   kernels=prefill_mma:w4:g64:sym:f16:n300:k520:of32,prefill_mma:w4:g64:sym:bf16:n11008:k4096:of16:bias \
// RUN:   kernels=prefill_mma:w4:g128:sym:f16:n4096:k4096:obf16,prefill_mma:w4:g128:sym:bf16:n4100:k4104:of32:bias \
// RUN:   kernels=prefill_mma:w4:gch:sym:f16:n300:k520:of16,prefill_mma:w4:gch:sym:bf16:n11008:k4096:obf16:bias \
// RUN:   kernels=prefill_mma:w4:g32:asym:f16:n4096:k4096:of32,prefill_mma:w4:g32:asym:bf16:n4100:k4104:of16:bias \
// RUN:   kernels=prefill_mma:w4:g64:asym:f16:n300:k520:obf16,prefill_mma:w4:g64:asym:bf16:n11008:k4096:of32:bias \
// RUN:   kernels=prefill_mma:w4:g128:asym:f16:n4096:k4096:of16,prefill_mma:w4:g128:asym:bf16:n4100:k4104:obf16:bias \
// RUN:   kernels=prefill_mma:w4:gch:asym:f16:n300:k520:of32,prefill_mma:w4:gch:asym:bf16:n11008:k4096:of16:bias \
// RUN:   kernels=prefill_mma:w8:g32:sym:f16:n4096:k4096:obf16,prefill_mma:w8:g32:sym:bf16:n4100:k4104:of32:bias \
// RUN:   kernels=prefill_mma:w8:g64:sym:f16:n300:k520:of16,prefill_mma:w8:g64:sym:bf16:n11008:k4096:obf16:bias \
// RUN:   kernels=prefill_mma:w8:g128:sym:f16:n4096:k4096:of32,prefill_mma:w8:g128:sym:bf16:n4100:k4104:of16:bias \
// RUN:   kernels=prefill_mma:w8:gch:sym:f16:n300:k520:obf16,prefill_mma:w8:gch:sym:bf16:n11008:k4096:of32:bias \
// RUN:   kernels=prefill_mma:w8:g32:asym:f16:n4096:k4096:of16,prefill_mma:w8:g32:asym:bf16:n4100:k4104:obf16:bias \
// RUN:   kernels=prefill_mma:w8:g64:asym:f16:n300:k520:of32,prefill_mma:w8:g64:asym:bf16:n11008:k4096:of16:bias \
// RUN:   kernels=prefill_mma:w8:g128:asym:f16:n4096:k4096:obf16,prefill_mma:w8:g128:asym:bf16:n4100:k4104:of32:bias \
// RUN:   kernels=prefill_mma:w8:gch:asym:f16:n300:k520:of16,prefill_mma:w8:gch:asym:bf16:n11008:k4096:obf16:bias" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=prefill_mma:w4:g32:sym:f16:n4100:k4104:obf16:bias,prefill_mma:w4:g32:sym:bf16:n300:k520:of32 \
// RUN:   kernels=prefill_mma:w4:g64:sym:f16:n11008:k4096:of16:bias,prefill_mma:w4:g64:sym:bf16:n4096:k4096:obf16 \
// RUN:   kernels=prefill_mma:w4:g128:sym:f16:n4100:k4104:of32:bias,prefill_mma:w4:g128:sym:bf16:n300:k520:of16 \
// RUN:   kernels=prefill_mma:w4:gch:sym:f16:n11008:k4096:obf16:bias,prefill_mma:w4:gch:sym:bf16:n4096:k4096:of32 \
// RUN:   kernels=prefill_mma:w4:g32:asym:f16:n4100:k4104:of16:bias,prefill_mma:w4:g32:asym:bf16:n300:k520:obf16 \
// RUN:   kernels=prefill_mma:w4:g64:asym:f16:n11008:k4096:of32:bias,prefill_mma:w4:g64:asym:bf16:n4096:k4096:of16 \
// RUN:   kernels=prefill_mma:w4:g128:asym:f16:n4100:k4104:obf16:bias,prefill_mma:w4:g128:asym:bf16:n300:k520:of32 \
// RUN:   kernels=prefill_mma:w4:gch:asym:f16:n11008:k4096:of16:bias,prefill_mma:w4:gch:asym:bf16:n4096:k4096:obf16 \
// RUN:   kernels=prefill_mma:w8:g32:sym:f16:n4100:k4104:of32:bias,prefill_mma:w8:g32:sym:bf16:n300:k520:of16 \
// RUN:   kernels=prefill_mma:w8:g64:sym:f16:n11008:k4096:obf16:bias,prefill_mma:w8:g64:sym:bf16:n4096:k4096:of32 \
// RUN:   kernels=prefill_mma:w8:g128:sym:f16:n4100:k4104:of16:bias,prefill_mma:w8:g128:sym:bf16:n300:k520:obf16 \
// RUN:   kernels=prefill_mma:w8:gch:sym:f16:n11008:k4096:of32:bias,prefill_mma:w8:gch:sym:bf16:n4096:k4096:of16 \
// RUN:   kernels=prefill_mma:w8:g32:asym:f16:n4100:k4104:obf16:bias,prefill_mma:w8:g32:asym:bf16:n300:k520:of32 \
// RUN:   kernels=prefill_mma:w8:g64:asym:f16:n11008:k4096:of16:bias,prefill_mma:w8:g64:asym:bf16:n4096:k4096:obf16 \
// RUN:   kernels=prefill_mma:w8:g128:asym:f16:n4100:k4104:of32:bias,prefill_mma:w8:g128:asym:bf16:n300:k520:of16 \
// RUN:   kernels=prefill_mma:w8:gch:asym:f16:n11008:k4096:obf16:bias,prefill_mma:w8:gch:asym:bf16:n4096:k4096:of32" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of issue 5 over every prefill GEMM variant: W4/W8,
// symmetric/asymmetric, groups 32/64/128/per-channel, f16/bf16 activations,
// f16/bf16/f32 outputs with and without bias, 7B shapes with and without
// tails (N = 4100: a partial panel and block; K = 4104: a half k16 step and
// a short last group; N = 300, K = 520). For each kernel ptxas must accept
// the PTX, `ptxas -v` must report 0 bytes of spill stores and loads, codes
// must be read with ld.global.v4, and mma.sync, ldmatrix and cp.async must
// be present (ptxas_gate.py exits non-zero otherwise, failing the RUN
// line). Each GATE line is checked by name, so a missing kernel fails too.

// GATE90: GATE qt_prefill_mma_w4asym_g128_bf16_tdyn_n4100_k4104_s1_obf16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4asym_g128_f16_tdyn_n4096_k4096_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4asym_g32_bf16_tdyn_n4100_k4104_s1_of16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4asym_g32_f16_tdyn_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4asym_g64_bf16_tdyn_n11008_k4096_s1_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4asym_g64_f16_tdyn_n300_k520_s1_obf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4asym_gch_bf16_tdyn_n11008_k4096_s1_of16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4asym_gch_f16_tdyn_n300_k520_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4sym_g128_bf16_tdyn_n4100_k4104_s1_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4sym_g128_f16_tdyn_n4096_k4096_s1_obf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4sym_g32_bf16_tdyn_n4100_k4104_s1_obf16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4sym_g32_f16_tdyn_n4096_k4096_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4sym_g64_bf16_tdyn_n11008_k4096_s1_of16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4sym_g64_f16_tdyn_n300_k520_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4sym_gch_bf16_tdyn_n11008_k4096_s1_obf16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w4sym_gch_f16_tdyn_n300_k520_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8asym_g128_bf16_tdyn_n4100_k4104_s1_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8asym_g128_f16_tdyn_n4096_k4096_s1_obf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8asym_g32_bf16_tdyn_n4100_k4104_s1_obf16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8asym_g32_f16_tdyn_n4096_k4096_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8asym_g64_bf16_tdyn_n11008_k4096_s1_of16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8asym_g64_f16_tdyn_n300_k520_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8asym_gch_bf16_tdyn_n11008_k4096_s1_obf16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8asym_gch_f16_tdyn_n300_k520_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8sym_g128_bf16_tdyn_n4100_k4104_s1_of16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8sym_g128_f16_tdyn_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8sym_g32_bf16_tdyn_n4100_k4104_s1_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8sym_g32_f16_tdyn_n4096_k4096_s1_obf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8sym_g64_bf16_tdyn_n11008_k4096_s1_obf16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8sym_g64_f16_tdyn_n300_k520_s1_of16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8sym_gch_bf16_tdyn_n11008_k4096_s1_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE90: GATE qt_prefill_mma_w8sym_gch_f16_tdyn_n300_k520_s1_obf16 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4asym_g128_bf16_tdyn_n300_k520_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4asym_g128_f16_tdyn_n4100_k4104_s1_obf16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4asym_g32_bf16_tdyn_n300_k520_s1_obf16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4asym_g32_f16_tdyn_n4100_k4104_s1_of16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4asym_g64_bf16_tdyn_n4096_k4096_s1_of16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4asym_g64_f16_tdyn_n11008_k4096_s1_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4asym_gch_bf16_tdyn_n4096_k4096_s1_obf16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4asym_gch_f16_tdyn_n11008_k4096_s1_of16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4sym_g128_bf16_tdyn_n300_k520_s1_of16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4sym_g128_f16_tdyn_n4100_k4104_s1_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4sym_g32_bf16_tdyn_n300_k520_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4sym_g32_f16_tdyn_n4100_k4104_s1_obf16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4sym_g64_bf16_tdyn_n4096_k4096_s1_obf16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4sym_g64_f16_tdyn_n11008_k4096_s1_of16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4sym_gch_bf16_tdyn_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w4sym_gch_f16_tdyn_n11008_k4096_s1_obf16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8asym_g128_bf16_tdyn_n300_k520_s1_of16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8asym_g128_f16_tdyn_n4100_k4104_s1_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8asym_g32_bf16_tdyn_n300_k520_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8asym_g32_f16_tdyn_n4100_k4104_s1_obf16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8asym_g64_bf16_tdyn_n4096_k4096_s1_obf16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8asym_g64_f16_tdyn_n11008_k4096_s1_of16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8asym_gch_bf16_tdyn_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8asym_gch_f16_tdyn_n11008_k4096_s1_obf16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8sym_g128_bf16_tdyn_n300_k520_s1_obf16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8sym_g128_f16_tdyn_n4100_k4104_s1_of16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8sym_g32_bf16_tdyn_n300_k520_s1_of16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8sym_g32_f16_tdyn_n4100_k4104_s1_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8sym_g64_bf16_tdyn_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8sym_g64_f16_tdyn_n11008_k4096_s1_obf16_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8sym_gch_bf16_tdyn_n4096_k4096_s1_of16 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}
// GATE80: GATE qt_prefill_mma_w8sym_gch_f16_tdyn_n11008_k4096_s1_bias arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}} mma={{[1-9][0-9]*}} ldmatrix={{[1-9][0-9]*}} cp-async={{[1-9][0-9]*}}

module {
}
