// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=w8a8_gemv:g128:sym:sym:f16:t1:n4096:k4096,w8a8_gemv:gch:asym:asym:bf16:t16:n4096:k11008:scf32:of16:bias \
// RUN:   kernels=w8a8_gemv:g32:asym:sym:f16:t4:n11008:k4096" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=w8a8_gemv:g128:sym:asym:f16:t1:n4096:k4096,w8a8_gemv:g64:sym:sym:bf16:t16:n4096:k4096" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of the W8A8 kernels: both the activation quantizer and
// the GEMV assemble with no spills and read with ld.global.v4 (the
// quantizer's 8 activations a lane, the GEMV's 16 weight codes a chunk).

// GATE90-DAG: GATE qt_quantize_a8sym_f16_t1_k4096 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_quantize_a8asym_bf16_t16_k11008 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_quantize_a8sym_f16_t4_k4096 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_w8a8_gemv_w8sym_a8sym_g128_f16_t1_n4096_k4096 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_w8a8_gemv_w8asym_a8asym_gch_bf16_t16_n4096_k11008_scf32_of16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_w8a8_gemv_w8asym_a8sym_g32_f16_t4_n11008_k4096 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-NOT: FAIL
// GATE80-DAG: GATE qt_quantize_a8asym_f16_t1_k4096 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_w8a8_gemv_w8sym_a8asym_g128_f16_t1_n4096_k4096 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_w8a8_gemv_w8sym_a8sym_g64_bf16_t16_n4096_k4096 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-NOT: FAIL
module {}
