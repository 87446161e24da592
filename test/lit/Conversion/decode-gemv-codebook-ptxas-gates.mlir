// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=decode_gemv:w4:g32:iq4_nl:f16:t1:n4096:k4096:s1,decode_gemv:w4:g32:iq4_nl:f16:t16:n4096:k4096:s1 \
// RUN:   kernels=decode_gemv:w4:g32:iq4_nl:bf16:t1:n4099:k4100:s4,decode_gemv:w4:g32:iq4_nl:bf16:t16:n4097:k4100:s1 \
// RUN:   kernels=decode_gemv:w4:g64:nf4:f16:t1:n4096:k4096:s1,decode_gemv:w4:g64:nf4:bf16:t16:n4098:k4100:s4 \
// RUN:   kernels=decode_gemv:w4:g32:iq4_nl:f16:t1:n4096:k4096:s1:scf32,decode_gemv:w4:g32:iq4_nl:bf16:t16:n4097:k4100:s1:scf32 \
// RUN:   kernels=decode_gemv:w4:g32:sym:f16:t1:n4096:k4096:s1:scf32" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=decode_gemv:w4:g32:iq4_nl:f16:t1:n4096:k4096:s1,decode_gemv:w4:g32:iq4_nl:f16:t16:n4096:k4096:s1" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of decode-gemv-ptxas-gates.mlir for the decode GEMV of
// codes that index a codebook (IQ4_NL, NF4: compare-and-selects in
// registers in place of the magic-number conversion) and of f32 scales (a
// nested first level decoded at load, IQ4_XS's): ptxas accepts the PTX,
// `ptxas -v` reports no spills at T = 1 and 16, with tails in N and K and
// split-K, and codes are still read with ld.global.v4.

// GATE90: GATE qt_decode_gemv_w4iq4_nl_g32_bf16_t16_n4097_k4100_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4iq4_nl_g32_bf16_t16_n4097_k4100_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4iq4_nl_g32_bf16_t1_n4099_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4iq4_nl_g32_f16_t16_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4iq4_nl_g32_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4iq4_nl_g32_f16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4nf4_g64_bf16_t16_n4098_k4100_s4 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4nf4_g64_f16_t1_n4096_k4096_s1 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90: GATE qt_decode_gemv_w4sym_g32_f16_t1_n4096_k4096_s1_scf32 arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4iq4_nl_g32_f16_t16_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80: GATE qt_decode_gemv_w4iq4_nl_g32_f16_t1_n4096_k4096_s1 arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}

module {
}
