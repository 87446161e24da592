// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=decode_gemv:w4:g32:sym:f16:t1:n4096:k4096:s1,decode_gemv:w4:g32:sym:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w4:g32:sym:bf16:t1:n4099:k4100:s1,decode_gemv:w4:g32:sym:bf16:t16:n4097:k4100:s1 \
// RUN:   kernels=decode_gemv:w4:g64:sym:f16:t1:n4096:k4096:s4,decode_gemv:w4:g64:sym:f16:t16:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w4:g64:sym:bf16:t1:n4097:k4100:s4,decode_gemv:w4:g64:sym:bf16:t16:n4098:k4100:s4 \
// RUN:   kernels=decode_gemv:w4:g128:sym:f16:t1:n4096:k4096:s1,decode_gemv:w4:g128:sym:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w4:g128:sym:bf16:t1:n4098:k4100:s1,decode_gemv:w4:g128:sym:bf16:t16:n4099:k4100:s1 \
// RUN:   kernels=decode_gemv:w4:gch:sym:f16:t1:n4096:k4096:s4,decode_gemv:w4:gch:sym:f16:t16:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w4:gch:sym:bf16:t1:n4099:k4100:s4,decode_gemv:w4:gch:sym:bf16:t16:n4097:k4100:s4 \
// RUN:   kernels=decode_gemv:w4:g32:asym:f16:t1:n4096:k4096:s1,decode_gemv:w4:g32:asym:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w4:g32:asym:bf16:t1:n4097:k4100:s1,decode_gemv:w4:g32:asym:bf16:t16:n4098:k4100:s1 \
// RUN:   kernels=decode_gemv:w4:g64:asym:f16:t1:n4096:k4096:s4,decode_gemv:w4:g64:asym:f16:t16:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w4:g64:asym:bf16:t1:n4098:k4100:s4,decode_gemv:w4:g64:asym:bf16:t16:n4099:k4100:s4 \
// RUN:   kernels=decode_gemv:w4:g128:asym:f16:t1:n4096:k4096:s1,decode_gemv:w4:g128:asym:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w4:g128:asym:bf16:t1:n4099:k4100:s1,decode_gemv:w4:g128:asym:bf16:t16:n4097:k4100:s1 \
// RUN:   kernels=decode_gemv:w4:gch:asym:f16:t1:n4096:k4096:s4,decode_gemv:w4:gch:asym:f16:t16:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w4:gch:asym:bf16:t1:n4097:k4100:s4,decode_gemv:w4:gch:asym:bf16:t16:n4098:k4100:s4 \
// RUN:   kernels=decode_gemv:w8:g32:sym:f16:t1:n4096:k4096:s1,decode_gemv:w8:g32:sym:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w8:g32:sym:bf16:t1:n4098:k4100:s1,decode_gemv:w8:g32:sym:bf16:t16:n4099:k4100:s1 \
// RUN:   kernels=decode_gemv:w8:g64:sym:f16:t1:n4096:k4096:s4,decode_gemv:w8:g64:sym:f16:t16:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w8:g64:sym:bf16:t1:n4099:k4100:s4,decode_gemv:w8:g64:sym:bf16:t16:n4097:k4100:s4 \
// RUN:   kernels=decode_gemv:w8:g128:sym:f16:t1:n4096:k4096:s1,decode_gemv:w8:g128:sym:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w8:g128:sym:bf16:t1:n4097:k4100:s1,decode_gemv:w8:g128:sym:bf16:t16:n4098:k4100:s1 \
// RUN:   kernels=decode_gemv:w8:gch:sym:f16:t1:n4096:k4096:s4,decode_gemv:w8:gch:sym:f16:t16:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w8:gch:sym:bf16:t1:n4098:k4100:s4,decode_gemv:w8:gch:sym:bf16:t16:n4099:k4100:s4 \
// RUN:   kernels=decode_gemv:w8:g32:asym:f16:t1:n4096:k4096:s1,decode_gemv:w8:g32:asym:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w8:g32:asym:bf16:t1:n4099:k4100:s1,decode_gemv:w8:g32:asym:bf16:t16:n4097:k4100:s1 \
// RUN:   kernels=decode_gemv:w8:g64:asym:f16:t1:n4096:k4096:s4,decode_gemv:w8:g64:asym:f16:t16:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w8:g64:asym:bf16:t1:n4097:k4100:s4,decode_gemv:w8:g64:asym:bf16:t16:n4098:k4100:s4 \
// RUN:   kernels=decode_gemv:w8:g128:asym:f16:t1:n4096:k4096:s1,decode_gemv:w8:g128:asym:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w8:g128:asym:bf16:t1:n4098:k4100:s1,decode_gemv:w8:g128:asym:bf16:t16:n4099:k4100:s1 \
// RUN:   kernels=decode_gemv:w8:gch:asym:f16:t1:n4096:k4096:s4,decode_gemv:w8:gch:asym:f16:t16:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w8:gch:asym:bf16:t1:n4099:k4100:s4,decode_gemv:w8:gch:asym:bf16:t16:n4097:k4100:s4" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=decode_gemv:w4:g32:sym:f16:t1:n4096:k4096:s1,decode_gemv:w4:g32:sym:bf16:t1:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w4:g64:sym:f16:t16:n4099:k4100:s1,decode_gemv:w4:g64:sym:bf16:t16:n4097:k4100:s1 \
// RUN:   kernels=decode_gemv:w4:g128:sym:f16:t1:n4096:k4096:s4,decode_gemv:w4:g128:sym:bf16:t1:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w4:gch:sym:f16:t16:n4097:k4100:s4,decode_gemv:w4:gch:sym:bf16:t16:n4098:k4100:s4 \
// RUN:   kernels=decode_gemv:w4:g32:asym:f16:t1:n4096:k4096:s1,decode_gemv:w4:g32:asym:bf16:t1:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w4:g64:asym:f16:t16:n4098:k4100:s1,decode_gemv:w4:g64:asym:bf16:t16:n4099:k4100:s1 \
// RUN:   kernels=decode_gemv:w4:g128:asym:f16:t1:n4096:k4096:s4,decode_gemv:w4:g128:asym:bf16:t1:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w4:gch:asym:f16:t16:n4099:k4100:s4,decode_gemv:w4:gch:asym:bf16:t16:n4097:k4100:s4 \
// RUN:   kernels=decode_gemv:w8:g32:sym:f16:t1:n4096:k4096:s1,decode_gemv:w8:g32:sym:bf16:t1:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w8:g64:sym:f16:t16:n4097:k4100:s1,decode_gemv:w8:g64:sym:bf16:t16:n4098:k4100:s1 \
// RUN:   kernels=decode_gemv:w8:g128:sym:f16:t1:n4096:k4096:s4,decode_gemv:w8:g128:sym:bf16:t1:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w8:gch:sym:f16:t16:n4098:k4100:s4,decode_gemv:w8:gch:sym:bf16:t16:n4099:k4100:s4 \
// RUN:   kernels=decode_gemv:w8:g32:asym:f16:t1:n4096:k4096:s1,decode_gemv:w8:g32:asym:bf16:t1:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w8:g64:asym:f16:t16:n4099:k4100:s1,decode_gemv:w8:g64:asym:bf16:t16:n4097:k4100:s1 \
// RUN:   kernels=decode_gemv:w8:g128:asym:f16:t1:n4096:k4096:s4,decode_gemv:w8:g128:asym:bf16:t1:n4096:k4096:s4 \
// RUN:   kernels=decode_gemv:w8:gch:asym:f16:t16:n4097:k4100:s4,decode_gemv:w8:gch:asym:bf16:t16:n4098:k4100:s4" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of issue 5 over every decode GEMV variant: W4/W8,
// symmetric/asymmetric, groups 32/64/128/per-channel, f16/bf16, T = 1 and 16,
// with and without tails in N and K, with and without split-K. For each
// kernel ptxas must accept the PTX, `ptxas -v` must report 0 bytes of spill
// stores and loads, and codes must be read with ld.global.v4 (ptxas_gate.py
// exits non-zero otherwise, failing the RUN line). Each GATE line is checked
// by name so that a kernel missing from the directory fails too. (Repeated
// `kernels=` entries append to the list.)

// GATE90: GATE qt_decode_gemv_w4asym_g128_bf16_t16_n4097_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g128_bf16_t1_n4099_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g128_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g128_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g32_bf16_t16_n4098_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g32_bf16_t1_n4097_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g32_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g32_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g64_bf16_t16_n4099_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g64_bf16_t1_n4098_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g64_f16_t16_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_g64_f16_t1_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_gch_bf16_t16_n4098_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_gch_bf16_t1_n4097_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_gch_f16_t16_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4asym_gch_f16_t1_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g128_bf16_t16_n4099_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g128_bf16_t1_n4098_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g128_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g128_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g32_bf16_t16_n4097_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g32_bf16_t1_n4099_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g32_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g32_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g64_bf16_t16_n4098_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g64_bf16_t1_n4097_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g64_f16_t16_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g64_f16_t1_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_gch_bf16_t16_n4097_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_gch_bf16_t1_n4099_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_gch_f16_t16_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_gch_f16_t1_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g128_bf16_t16_n4099_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g128_bf16_t1_n4098_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g128_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g128_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g32_bf16_t16_n4097_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g32_bf16_t1_n4099_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g32_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g32_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g64_bf16_t16_n4098_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g64_bf16_t1_n4097_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g64_f16_t16_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_g64_f16_t1_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_gch_bf16_t16_n4097_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_gch_bf16_t1_n4099_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_gch_f16_t16_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8asym_gch_f16_t1_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g128_bf16_t16_n4098_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g128_bf16_t1_n4097_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g128_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g128_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g32_bf16_t16_n4099_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g32_bf16_t1_n4098_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g32_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g32_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g64_bf16_t16_n4097_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g64_bf16_t1_n4099_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g64_f16_t16_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_g64_f16_t1_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_gch_bf16_t16_n4099_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_gch_bf16_t1_n4098_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_gch_f16_t16_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w8sym_gch_f16_t1_n4096_k4096_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_g128_bf16_t1_n4096_k4096_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_g128_f16_t1_n4096_k4096_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_g32_bf16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_g32_f16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_g64_bf16_t16_n4099_k4100_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_g64_f16_t16_n4098_k4100_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_gch_bf16_t16_n4097_k4100_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4asym_gch_f16_t16_n4099_k4100_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4sym_g128_bf16_t1_n4096_k4096_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4sym_g128_f16_t1_n4096_k4096_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4sym_g32_bf16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4sym_g32_f16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4sym_g64_bf16_t16_n4097_k4100_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4sym_g64_f16_t16_n4099_k4100_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4sym_gch_bf16_t16_n4098_k4100_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4sym_gch_f16_t16_n4097_k4100_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8asym_g128_bf16_t1_n4096_k4096_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8asym_g128_f16_t1_n4096_k4096_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8asym_g32_bf16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8asym_g32_f16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8asym_g64_bf16_t16_n4097_k4100_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8asym_g64_f16_t16_n4099_k4100_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8asym_gch_bf16_t16_n4098_k4100_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8asym_gch_f16_t16_n4097_k4100_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8sym_g128_bf16_t1_n4096_k4096_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8sym_g128_f16_t1_n4096_k4096_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8sym_g32_bf16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8sym_g32_f16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8sym_g64_bf16_t16_n4098_k4100_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8sym_g64_f16_t16_n4097_k4100_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8sym_gch_bf16_t16_n4099_k4100_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w8sym_gch_f16_t16_n4098_k4100_s4 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}

module {
}
