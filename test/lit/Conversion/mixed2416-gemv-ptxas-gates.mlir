// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=mixed2416_gemv:g64:z16:f16:t1:n4096:k4096,mixed2416_gemv:g64:z16:bf16:t4:n4096:k4096:s2bf16:correct \
// RUN:   kernels=mixed2416_gemv:g128:z8:bf16:t16:n4096:k11008:s2bf16:spbf16:of16:bias,mixed2416_gemv:g256:z16:f16:t1:n11008:k4096" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=mixed2416_gemv:g64:z16:f16:t1:n4096:k4096,mixed2416_gemv:g64:z16:f16:t16:n4096:k4096" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of the mixed 2/4/16 decode GEMV (seed 0x07D): ptxas
// accepts the PTX and reports no spills from T = 1 to 16, for G1 of 64, 128
// and 256, both sparse semantics and 16-bit outputs with a bias; the code
// streams and the activations are read with ld.global.v4.

// GATE90-DAG: GATE qt_mixed2416_gemv_g64_z16_f16_t1_n4096_k4096 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_mixed2416_gemv_g64_z16_bf16_t4_n4096_k4096_s2bf16_corr arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_mixed2416_gemv_g128_z8_bf16_t16_n4096_k11008_s2bf16_spbf16_of16_bias arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-DAG: GATE qt_mixed2416_gemv_g256_z16_f16_t1_n11008_k4096 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-NOT: FAIL
// GATE80-DAG: GATE qt_mixed2416_gemv_g64_z16_f16_t1_n4096_k4096 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-DAG: GATE qt_mixed2416_gemv_g64_z16_f16_t16_n4096_k4096 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-NOT: FAIL
module {}
