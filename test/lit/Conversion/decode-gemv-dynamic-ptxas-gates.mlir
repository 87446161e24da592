// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t/sm90 %t/sm80
// RUN: qopt %s --qtensor-generate-kernels="target=sm_90 \
// RUN:   kernels=decode_gemv:w4:g32:sym:f16:tdyn:n4096:k4096:of16:bias,decode_gemv:w4:g32:sym:bf16:tdyn:n4099:k4100:scf16:obf16 \
// RUN:   kernels=decode_gemv:w4:g64:sym:f16:tdyn:n4097:k4100:of16,decode_gemv:w4:g64:sym:bf16:tdyn:n4098:k4096:scf16:obf16:bias \
// RUN:   kernels=decode_gemv:w4:g128:sym:f16:tdyn:n4096:k4096:of16,decode_gemv:w4:g128:sym:bf16:tdyn:n4099:k4100:scf16:obf16 \
// RUN:   kernels=decode_gemv:w4:gch:sym:f16:tdyn:n4097:k4100:of16:bias,decode_gemv:w4:gch:sym:bf16:tdyn:n4098:k4096:scf16:obf16 \
// RUN:   kernels=decode_gemv:w4:g32:asym:f16:tdyn:n4096:k4096:of16,decode_gemv:w4:g32:asym:bf16:tdyn:n4099:k4100:scf16:obf16:bias \
// RUN:   kernels=decode_gemv:w4:g64:asym:f16:tdyn:n4097:k4100:of16,decode_gemv:w4:g64:asym:bf16:tdyn:n4098:k4096:scf16:obf16 \
// RUN:   kernels=decode_gemv:w4:g128:asym:f16:tdyn:n4096:k4096:of16:bias,decode_gemv:w4:g128:asym:bf16:tdyn:n4099:k4100:scf16:obf16 \
// RUN:   kernels=decode_gemv:w4:gch:asym:f16:tdyn:n4097:k4100:of16,decode_gemv:w4:gch:asym:bf16:tdyn:n4098:k4096:scf16:obf16:bias \
// RUN:   kernels=decode_gemv:w8:g32:sym:f16:tdyn:n4096:k4096:of16,decode_gemv:w8:g32:sym:bf16:tdyn:n4099:k4100:scf16:obf16 \
// RUN:   kernels=decode_gemv:w8:g64:sym:f16:tdyn:n4097:k4100:of16:bias,decode_gemv:w8:g64:sym:bf16:tdyn:n4098:k4096:scf16:obf16 \
// RUN:   kernels=decode_gemv:w8:g128:sym:f16:tdyn:n4096:k4096:of16,decode_gemv:w8:g128:sym:bf16:tdyn:n4099:k4100:scf16:obf16:bias \
// RUN:   kernels=decode_gemv:w8:gch:sym:f16:tdyn:n4097:k4100:of16,decode_gemv:w8:gch:sym:bf16:tdyn:n4098:k4096:scf16:obf16 \
// RUN:   kernels=decode_gemv:w8:g32:asym:f16:tdyn:n4096:k4096:of16:bias,decode_gemv:w8:g32:asym:bf16:tdyn:n4099:k4100:scf16:obf16 \
// RUN:   kernels=decode_gemv:w8:g64:asym:f16:tdyn:n4097:k4100:of16,decode_gemv:w8:g64:asym:bf16:tdyn:n4098:k4096:scf16:obf16:bias \
// RUN:   kernels=decode_gemv:w8:g128:asym:f16:tdyn:n4096:k4096:of16,decode_gemv:w8:g128:asym:bf16:tdyn:n4099:k4100:scf16:obf16 \
// RUN:   kernels=decode_gemv:w8:gch:asym:f16:tdyn:n4097:k4100:of16:bias,decode_gemv:w8:gch:asym:bf16:tdyn:n4098:k4096:scf16:obf16" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_90 ptx-dir=%t/sm90" > /dev/null
// RUN: qopt %s --qtensor-generate-kernels="target=sm_80 \
// RUN:   kernels=decode_gemv:w4:g32:sym:f16:tdyn:n4096:k4096:of16:bias,decode_gemv:w4:g64:sym:bf16:tdyn:n4098:k4096:scf16:obf16:bias \
// RUN:   kernels=decode_gemv:w4:g128:sym:f16:tdyn:n4096:k4096:of16,decode_gemv:w4:gch:sym:bf16:tdyn:n4098:k4096:scf16:obf16 \
// RUN:   kernels=decode_gemv:w4:g32:asym:f16:tdyn:n4096:k4096:of16,decode_gemv:w4:g64:asym:bf16:tdyn:n4098:k4096:scf16:obf16 \
// RUN:   kernels=decode_gemv:w4:g128:asym:f16:tdyn:n4096:k4096:of16:bias,decode_gemv:w4:gch:asym:bf16:tdyn:n4098:k4096:scf16:obf16:bias \
// RUN:   kernels=decode_gemv:w8:g32:sym:f16:tdyn:n4096:k4096:of16,decode_gemv:w8:g64:sym:bf16:tdyn:n4098:k4096:scf16:obf16 \
// RUN:   kernels=decode_gemv:w8:g128:sym:f16:tdyn:n4096:k4096:of16,decode_gemv:w8:gch:sym:bf16:tdyn:n4098:k4096:scf16:obf16 \
// RUN:   kernels=decode_gemv:w8:g32:asym:f16:tdyn:n4096:k4096:of16:bias,decode_gemv:w8:g64:asym:bf16:tdyn:n4098:k4096:scf16:obf16:bias \
// RUN:   kernels=decode_gemv:w8:g128:asym:f16:tdyn:n4096:k4096:of16,decode_gemv:w8:gch:asym:bf16:tdyn:n4098:k4096:scf16:obf16" \
// RUN:   --qtensor-lower-to-ptx="chip=sm_80 ptx-dir=%t/sm80" > /dev/null
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_90 %t/sm90 | FileCheck %s --check-prefix=GATE90
// RUN: %python %S/../Inputs/ptxas_gate.py %ptxas sm_80 %t/sm80 | FileCheck %s --check-prefix=GATE80

// The static gates of issue 5 over the dynamic-T decode GEMV, the form
// qtc compile and qtensor-instantiate-kernels emit: every width, sign,
// group and activation on sm_90 (half of them, f16 and bf16, on sm_80), with tails in
// N and K, outputs in the activation type, scales in the other 16-bit type
// every second kernel and a bias every third. Each instance holds five
// entry points (T buckets 1, 2, 3-4, 5-8, 9-16), each with its own register
// allocation; ptxas must accept every one with 0 bytes of spills, and codes
// must be read with ld.global.v4 (ptxas_gate.py exits non-zero otherwise).
// The counts make a missing entry fail.

// GATE90-COUNT-160: {{^}}GATE qt_decode_gemv_{{[a-z0-9_]+}}_tdyn_{{[a-z0-9_]+}}_t{{1|2|4|8|16}} arch=sm_90 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE90-NOT: GATE

// GATE80-COUNT-80: {{^}}GATE qt_decode_gemv_{{[a-z0-9_]+}}_tdyn_{{[a-z0-9_]+}}_t{{1|2|4|8|16}} arch=sm_80 regs={{[0-9]+}} spill-stores=0 spill-loads=0 v4-loads={{[1-9][0-9]*}}
// GATE80-NOT: GATE

module {
}
