// Kernel admission, layout selection and the dispatch trace (seed M8.9 0x07).
// Pass options differ between scenarios, so this file is split into one
// input per option set (split-file); each input still holds several cases
// separated by `// -----` and runs with -verify-diagnostics, so positive
// cases (FileCheck) and diagnostics sit side by side. The second RUN of an
// input re-parses what the pass printed: every attribute it writes verifies.

// RUN: rm -rf %t && split-file %s %t

// RUN: qopt %t/default.mlir -qtensor-select-layouts -split-input-file -verify-diagnostics | FileCheck %t/default.mlir
// RUN: qopt %t/default.mlir -qtensor-select-layouts -split-input-file -verify-diagnostics | qopt -split-input-file -verify-diagnostics | FileCheck %t/default.mlir

// RUN: qopt %t/phases.mlir -qtensor-select-layouts=layouts=per-phase | FileCheck %t/phases.mlir --check-prefix=BOTH
// RUN: qopt %t/phases.mlir -qtensor-select-layouts=phase=decode | FileCheck %t/phases.mlir --check-prefix=DECODE
// RUN: qopt %t/phases.mlir "-qtensor-select-layouts=phase=prefill trace-file=%t/prefill.json" | FileCheck %t/phases.mlir --check-prefix=PREFILL
// RUN: FileCheck %t/phases.mlir --check-prefix=PREFILL-JSON --input-file=%t/prefill.json
// RUN: qopt %t/phases.mlir -qtensor-select-layouts=layouts=per-phase | qopt | FileCheck %t/phases.mlir --check-prefix=BOTH

// RUN: qopt %t/targets.mlir "-qtensor-select-layouts=target=host layouts=per-phase" | FileCheck %t/targets.mlir --check-prefix=HOST
// RUN: qopt %t/targets.mlir "-qtensor-select-layouts=target=sm_80 layouts=per-phase" | FileCheck %t/targets.mlir --check-prefix=SM80
// RUN: qopt %t/targets.mlir "-qtensor-select-layouts=target=host int8-activations=false" | FileCheck %t/targets.mlir --check-prefix=HOST-FLOAT

// RUN: qopt %t/allow.mlir "-qtensor-select-layouts=fallback=allow remarks=true trace-file=%t/allow.json" -verify-diagnostics | FileCheck %t/allow.mlir
// RUN: FileCheck %t/allow.mlir --check-prefix=JSON --input-file=%t/allow.json

// RUN: qopt %t/warn.mlir -qtensor-select-layouts=fallback=warn -verify-diagnostics | FileCheck %t/warn.mlir

// RUN: qopt %t/bad-target.mlir -qtensor-select-layouts=target=tpu -verify-diagnostics
// The enum options are checked by the option parser, before any IR is read:
// RUN: not qopt %t/bad-fallback.mlir -qtensor-select-layouts=fallback=sometimes 2>&1 | FileCheck %t/bad-fallback.mlir
// RUN: not qopt %t/bad-fallback.mlir -qtensor-select-layouts=phase=sideways 2>&1 | FileCheck %t/bad-fallback.mlir --check-prefix=PHASE
// RUN: qopt %t/unwritable.mlir -qtensor-select-layouts=trace-file=%t/missing/trace.json -verify-diagnostics

//--- default.mlir
// target=sm_90 phase=both fallback=forbid layouts=shared.

// A logical weight of our own is retyped to the kernel layout and marked
// prepacked (the exporter packs it). With a dynamic T both phases are
// selected; one packed copy (prefill_mma) serves both, because the decode
// GEMV's layout has no prefill kernel.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-DAG: #[[$MMA:.+]] = #qtensor.layout<family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [64, 16]>
// CHECK-LABEL: func.func @logical_weight_is_prepacked
// CHECK: %[[W:.+]] = qtensor.weight "model.layers.0.self_attn.q_proj" {qtensor.prepacked} : !qtensor.tensor<256x512xf16, #{{.+}}, #[[$MMA]]>
// CHECK: qtensor.linear %{{.+}}, %[[W]] accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_mma_prefill_sm80", prefill = "affine_mma_prefill_sm80", layout = #[[$MMA]], repack = prepacked>}
// CHECK-NOT: qtensor.repack
func.func @logical_weight_is_prepacked(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qtensor.weight "model.layers.0.self_attn.q_proj" : !qtensor.tensor<256x512xf16, #W4>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// -----

// W8 asymmetric per output channel with bf16 scales and a bias epilogue;
// 8-bit codes make the mma panel 32 rows tall.
#W8 = #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = bf16>
// CHECK-DAG: #[[$MMA8:.+]] = #qtensor.layout<family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [32, 16]>
// CHECK-LABEL: func.func @w8_per_channel_with_bias
// CHECK: %[[W:.+]] = qtensor.weight "model.layers.0.mlp.up_proj" {qtensor.prepacked} : !qtensor.tensor<256x512xbf16, #{{.+}}, #[[$MMA8]]>
// CHECK: qtensor.linear %{{.+}}, %[[W]], %{{.+}} accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_mma_prefill_sm80", prefill = "affine_mma_prefill_sm80", layout = #[[$MMA8]], repack = prepacked>}
func.func @w8_per_channel_with_bias(%x: tensor<?x512xbf16>, %b: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %w = qtensor.weight "model.layers.0.mlp.up_proj" : !qtensor.tensor<256x512xbf16, #W8>
  %y = qtensor.linear %x, %w, %b accumulate(f32) : tensor<?x512xbf16>, !qtensor.tensor<256x512xbf16, #W8>, tensor<256xbf16> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

// -----

// A GGUF Q4_0 weight keeps its ggml_block bytes in the artifact; the loader
// repacks it (codes unchanged) into the kernel layout.
#Q4_0 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f16, encoding = offset_binary>
#GGML = #qtensor.layout<family = "ggml_block", version = 1, encoding = "q4_0", tile = [1, 32], padding = [0, 0]>
// CHECK-DAG: #[[$GGML:.+]] = #qtensor.layout<family = "ggml_block", version = 1, encoding = "q4_0", tile = [1, 32], padding = [0, 0]>
// CHECK-DAG: #[[$MMA:.+]] = #qtensor.layout<family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [64, 16]>
// CHECK-LABEL: func.func @ggml_block_is_repacked_at_load
// CHECK: %[[W:.+]] = qtensor.weight "blk.0.attn_q.weight" : !qtensor.tensor<256x512xf16, #[[Q:.+]], #[[$GGML]]>
// CHECK: %[[P:.+]] = qtensor.repack %[[W]] : !qtensor.tensor<256x512xf16, #[[Q]], #[[$GGML]]> -> !qtensor.tensor<256x512xf16, #[[Q]], #[[$MMA]]>
// CHECK: qtensor.linear %{{.+}}, %[[P]] accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_mma_prefill_sm80", prefill = "affine_mma_prefill_sm80", layout = #[[$MMA]], repack = load_time>}
func.func @ggml_block_is_repacked_at_load(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qtensor.weight "blk.0.attn_q.weight" : !qtensor.tensor<256x512xf16, #Q4_0, #GGML>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #Q4_0, #GGML> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// -----

// A weight that is not an artifact tensor (here a block argument) cannot be
// packed by the exporter: a load-time repack serves both of its linears.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 64, scale = f16>
// CHECK-LABEL: func.func @argument_weight_is_repacked_once
// CHECK-SAME: (%[[X:.+]]: tensor<?x512xf16>, %[[W:.+]]: !qtensor.tensor
// CHECK: %[[P:.+]] = qtensor.repack %[[W]]
// CHECK-NOT: qtensor.repack
// CHECK: qtensor.linear %[[X]], %[[P]] accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<{{.+}}repack = load_time>}
// CHECK: qtensor.linear %[[X]], %[[P]] accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<{{.+}}repack = load_time>}
func.func @argument_weight_is_repacked_once(%x: tensor<?x512xf16>, %w: !qtensor.tensor<256x512xf16, #W4>) -> (tensor<?x256xf16>, tensor<?x256xf16>) {
  %a = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
  %b = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
  return %a, %b : tensor<?x256xf16>, tensor<?x256xf16>
}

// -----

// Two linears of one artifact weight that want the same layout: the weight
// is retyped once.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, scale = f16>
// CHECK-LABEL: func.func @tied_weight_prepacked_once
// CHECK: %[[W:.+]] = qtensor.weight "model.embed_tokens" {qtensor.prepacked}
// CHECK-NOT: qtensor.repack
// CHECK: qtensor.linear %{{.+}}, %[[W]] {{.+}}repack = prepacked>}
// CHECK: qtensor.linear %{{.+}}, %[[W]] {{.+}}repack = prepacked>}
func.func @tied_weight_prepacked_once(%x: tensor<?x512xf16>, %x2: tensor<?x512xf16>) -> (tensor<?x256xf16>, tensor<?x256xf16>) {
  %w = qtensor.weight "model.embed_tokens" : !qtensor.tensor<256x512xf16, #W4>
  %a = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
  %b = qtensor.linear %x2, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
  return %a, %b : tensor<?x256xf16>, tensor<?x256xf16>
}

// -----

// A weight that another op also reads in its logical layout keeps that
// type; the linear reads a load-time repack.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-LABEL: func.func @weight_with_other_users_is_repacked
// CHECK: %[[W:.+]] = qtensor.weight "model.layers.0.self_attn.o_proj" : !qtensor.tensor<256x512xf16, #{{[^,]+}}>
// CHECK-NEXT: %[[P:.+]] = qtensor.repack %[[W]]
// CHECK: qtensor.linear %{{.+}}, %[[P]] {{.+}}repack = load_time>}
// CHECK: qtensor.dequantize %[[W]]
func.func @weight_with_other_users_is_repacked(%x: tensor<?x512xf16>) -> (tensor<?x256xf16>, tensor<256x512xf16>) {
  %w = qtensor.weight "model.layers.0.self_attn.o_proj" : !qtensor.tensor<256x512xf16, #W4>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
  %d = qtensor.dequantize %w : !qtensor.tensor<256x512xf16, #W4> -> tensor<256x512xf16>
  return %y, %d : tensor<?x256xf16>, tensor<256x512xf16>
}

// -----

// A static T selects only the phase it belongs to: T = 1 is decode, whose
// best kernel is the GEMV on its own layout.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-DAG: #[[$GEMV:.+]] = #qtensor.layout<family = "decode_gemv", version = 1, encoding = "offset_binary", tile = [1, 32]>
// CHECK-LABEL: func.func @static_decode_shape
// CHECK: qtensor.weight "lm.t1" {qtensor.prepacked} : !qtensor.tensor<256x512xf16, #{{.+}}, #[[$GEMV]]>
// CHECK: qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_gemv_decode_sm80", layout = #[[$GEMV]], repack = prepacked>
func.func @static_decode_shape(%x: tensor<1x512xf16>) -> tensor<1x256xf16> {
  %w = qtensor.weight "lm.t1" : !qtensor.tensor<256x512xf16, #W4>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<1x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// T = 4 x 32 = 128 tokens is prefill.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-LABEL: func.func @static_prefill_shape
// CHECK: qtensor.dispatch = #qtensor.dispatch<target = "sm_90", prefill = "affine_mma_prefill_sm80", layout = #{{.+}}, repack = prepacked>
func.func @static_prefill_shape(%x: tensor<4x32x512xf16>) -> tensor<4x32x256xf16> {
  %w = qtensor.weight "lm.t128" : !qtensor.tensor<256x512xf16, #W4>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<4x32x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<4x32x256xf16>
  return %y : tensor<4x32x256xf16>
}

// -----

// Row-parallel over 2 ranks with group-aligned bounds: admitted on every
// rank, the placement is kept.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-LABEL: func.func @row_parallel_admitted_on_every_rank
// CHECK: qtensor.linear {{.+}} {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_mma_prefill_sm80", prefill = "affine_mma_prefill_sm80", layout = #{{.+}}, repack = prepacked>, qtensor.placement = #qtensor.placement<strategy = row
func.func @row_parallel_admitted_on_every_rank(%x: tensor<?x1024xf16>) -> tensor<?x256xf16> {
  %w = qtensor.weight "model.layers.0.mlp.down_proj" : !qtensor.tensor<256x1024xf16, #W4>
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 512, 1024], group_policy = align, qparams = [0, 4, 4, 8]>} : tensor<?x1024xf16>, !qtensor.tensor<256x1024xf16, #W4> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// -----

// Only rank 3 of a row-parallel placement misses the tensor-core GEMM's K
// tile (K % 8: X is staged in 16-byte copies): the rejection names the
// rank. The GEMV takes any K but not T = 32, and the fallback is forbidden.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 64, scale = f16>
func.func @local_k_misses_the_tile_on_one_rank(%x: tensor<32x4100xf16>) -> tensor<32x256xf16> {
  %w = qtensor.weight "model.layers.3.mlp.down_proj" : !qtensor.tensor<256x4100xf16, #W4>
  // expected-error @+10 {{no kernel admits 'model.layers.3.mlp.down_proj' for prefill (T = 32) on sm_90 with fallback=forbid}}
  // expected-note @+9 {{affine_gemv_decode_sm80: T = 32 (prefill) above the kernel's maximum T = 16}}
  // expected-note @+8 {{affine_mma_prefill_sm80: local K 1028 not a multiple of tile 8 on rank 3}}
  // expected-note @+7 {{affine_gemv_decode_host: runs on the host, target is sm_90; T = 32 (prefill) above the kernel's maximum T = 16}}
  // expected-note @+6 {{affine_gemm_prefill_host: runs on the host, target is sm_90; local K 1028 not a multiple of tile 8 on rank 3}}
  // expected-note @+5 {{affine_gemm_host_xq8: runs on the host, target is sm_90; topology row not in {single, replicated, column}}}
  // expected-note @+4 {{affine_gemm_host: runs on the host, target is sm_90}}
  // expected-note @+3 {{full_dequant_linear: full-dequant fallback forbidden by fallback=forbid}}
  // expected-note @+2 {{w8a8_gemv_decode_sm80: code si4 twos_complement not in {si8 twos_complement, ui8}; activations none not in {per_token_sym, per_token_asym}; topology row not in {single}; local K 1028 not a multiple of tile 16 on rank 3}}
  // expected-note @+1 {{w8a8_gemv_decode_host: runs on the host, target is sm_90; code si4 twos_complement not in {si8 twos_complement, ui8}; activations none not in {per_token_sym, per_token_asym}; topology row not in {single}; local K 1028 not a multiple of tile 16 on rank 3}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 4, dim = 1, bounds = [0, 1024, 2048, 3072, 4100], group_policy = align, qparams = [0, 16, 16, 32, 32, 48, 48, 65]>} : tensor<32x4100xf16>, !qtensor.tensor<256x4100xf16, #W4> -> tensor<32x256xf16>
  return %y : tensor<32x256xf16>
}

// -----

// Groups of 96: no kernel admits them and fallback=forbid; the error lists
// every candidate's reason, and the pass leaves the IR alone.
#G96 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 96, scale = f16>
func.func @group_size_no_kernel_admits(%x: tensor<1x768xf16>) -> tensor<1x256xf16> {
  %w = qtensor.weight "model.layers.0.mlp.gate_proj" : !qtensor.tensor<256x768xf16, #G96>
  // expected-error @+10 {{no kernel admits 'model.layers.0.mlp.gate_proj' for decode (T = 1) on sm_90 with fallback=forbid}}
  // expected-note @+9 {{affine_gemv_decode_sm80: group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+8 {{affine_mma_prefill_sm80: group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+7 {{affine_gemv_decode_host: runs on the host, target is sm_90; group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+6 {{affine_gemm_prefill_host: runs on the host, target is sm_90; group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+5 {{affine_gemm_host_xq8: runs on the host, target is sm_90; group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+4 {{affine_gemm_host: runs on the host, target is sm_90; group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+3 {{full_dequant_linear: full-dequant fallback forbidden by fallback=forbid}}
  // expected-note @+2 {{w8a8_gemv_decode_sm80: code si4 twos_complement not in {si8 twos_complement, ui8}; group size 96 not in {16, 32, 64, 128, 256}; activations none not in {per_token_sym, per_token_asym}}}
  // expected-note @+1 {{w8a8_gemv_decode_host: runs on the host, target is sm_90; code si4 twos_complement not in {si8 twos_complement, ui8}; group size 96 not in {16, 32, 64, 128, 256}; activations none not in {per_token_sym, per_token_asym}}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<1x768xf16>, !qtensor.tensor<256x768xf16, #G96> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// Bad IR: a ggml_block q4_0 layout holds offset-binary si4 codes; a weight
// that claims si8 codes in it contradicts itself.
#SI8 = #qtensor.affine<code = si8, scheme = symmetric, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f16>
#GGML = #qtensor.layout<family = "ggml_block", version = 1, encoding = "q4_0", tile = [1, 32], padding = [0, 0]>
func.func @ggml_layout_contradicts_descriptor(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qtensor.weight "blk.0.ffn_up.weight" : !qtensor.tensor<256x512xf16, #SI8, #GGML>
  // expected-error @+1 {{weight 'blk.0.ffn_up.weight': layout (ggml_block, 1, q4_0) holds si4 offset_binary codes, the descriptor says si8 twos_complement}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #SI8, #GGML> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// -----

// Bad IR: a weight already in a kernel layout must use that layout's tile
// for its code width (4-bit prefill_mma panels are 64 rows tall).
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
#BADMMA = #qtensor.layout<family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [32, 16]>
func.func @kernel_layout_tile_contradicts_code_width(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qtensor.weight "model.layers.0.self_attn.k_proj" : !qtensor.tensor<256x512xf16, #W4, #BADMMA>
  // expected-error @+1 {{weight 'model.layers.0.self_attn.k_proj': layout (prefill_mma, 1, offset_binary) has tile [64, 16] for 4-bit codes, got [32, 16]}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4, #BADMMA> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

//--- phases.mlir
// The same weight: decode and prefill take different kernels when each
// phase may have its own layout, or when only one phase is selected.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// BOTH-DAG: #[[GEMV:.+]] = #qtensor.layout<family = "decode_gemv", version = 1, encoding = "offset_binary", tile = [1, 32]>
// BOTH-DAG: #[[MMA:.+]] = #qtensor.layout<family = "prefill_mma", version = 1, encoding = "offset_binary", tile = [64, 16]>
// BOTH: qtensor.weight "model.layers.0.mlp.gate_proj" {qtensor.prepacked} : !qtensor.tensor<256x512xf16, #{{.+}}, #[[GEMV]]>
// BOTH: qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_gemv_decode_sm80", prefill = "affine_mma_prefill_sm80", layout = #[[GEMV]], repack = prepacked, secondary_layout = #[[MMA]]>
// DECODE: qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_gemv_decode_sm80", layout = #{{.+}}, repack = prepacked>
// PREFILL: qtensor.dispatch = #qtensor.dispatch<target = "sm_90", prefill = "affine_mma_prefill_sm80", layout = #{{.+}}, repack = prepacked>
func.func @same_weight_two_phases(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qtensor.weight "model.layers.0.mlp.gate_proj" : !qtensor.tensor<256x512xf16, #W4>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// A static T = 1 runs in decode only: phase=prefill leaves it alone and the
// trace says why.
// PREFILL-LABEL: func.func @static_decode_shape
// PREFILL-NOT: qtensor.dispatch
// PREFILL: return
// PREFILL-JSON:      "op": "model.layers.0.mlp.gate_proj",
// PREFILL-JSON:      "phase": "prefill",
// PREFILL-JSON-NEXT: "selected": "affine_mma_prefill_sm80",
// PREFILL-JSON:      "op": "lm.t1",
// PREFILL-JSON-NEXT: "index": 1,
// PREFILL-JSON-NEXT: "phase": "prefill",
// PREFILL-JSON-NEXT: "device": "sm_90",
// PREFILL-JSON-NEXT: "candidates": [],
// PREFILL-JSON-NEXT: "selected": null,
// PREFILL-JSON-NEXT: "fallback": false,
// PREFILL-JSON-NEXT: "skipped": "static T = 1 runs only in decode, which phase=prefill leaves out"
func.func @static_decode_shape(%x: tensor<1x512xf16>) -> tensor<1x256xf16> {
  %w = qtensor.weight "lm.t1" : !qtensor.tensor<256x512xf16, #W4>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<1x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

//--- targets.mlir
// target=host selects the CPU's own GEMM for both phases (one layout), here
// with int8 activations at T = 1 (integer zero-points); sm_80 the GPU
// kernels.
#W4 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 32, scale = f16>
// HOST: #[[GEMV:.+]] = #qtensor.layout<family = "decode_gemv"
// HOST: qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "affine_gemm_host_xq8", prefill = "affine_gemm_host_xq8", layout = #[[GEMV]], repack = prepacked>}
// SM80: qtensor.dispatch = #qtensor.dispatch<target = "sm_80", decode = "affine_gemv_decode_sm80", prefill = "affine_mma_prefill_sm80", layout = #{{.+}}, repack = prepacked, secondary_layout = #{{.+}}>
func.func @host_or_gpu(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qtensor.weight "model.layers.0.self_attn.v_proj" : !qtensor.tensor<256x512xf16, #W4>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// Signed codes on the host: the GEMM with int8 activations at T = 1,
// unless the activations are kept float.
#S4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 32, scale = f16>
// HOST: qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "affine_gemm_host_xq8", prefill = "affine_gemm_host_xq8", layout = #[[GEMV]], repack = prepacked>}
// HOST-FLOAT: qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "affine_gemm_host", prefill = "affine_gemm_host", layout = #{{.+}}, repack = prepacked>}
// HOST-FLOAT: qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "affine_gemm_host", prefill = "affine_gemm_host", layout = #{{.+}}, repack = prepacked>}
func.func @signed_on_host(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qtensor.weight "model.layers.0.self_attn.q_proj" : !qtensor.tensor<256x512xf16, #S4>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #S4> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

//--- allow.mlir
// fallback=allow: the group size no kernel admits takes the full-dequant
// fallback, counted in the summary remark and marked in the trace; the
// stored layout stays. remarks=true emits the trace per op.
#G96 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 96, scale = f16>
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-LABEL: func.func @fallback_allowed
// CHECK: %[[W:.+]] = qtensor.weight "model.layers.0.mlp.gate_proj" : !qtensor.tensor<256x768xf16, #{{[^,]+}}>
// CHECK: qtensor.linear %{{.+}}, %[[W]] accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "full_dequant_linear", prefill = "full_dequant_linear", decode_fallback = true, prefill_fallback = true, layout = #{{.+}}>}
// CHECK: qtensor.weight "model.layers.0.mlp.up_proj" {qtensor.prepacked}
// expected-remark @+1 {{qtensor-select-layouts on sm_90: 2 linears, 2 fallbacks, 1 prepacked, 0 load-time repacks, 0 secondary layouts}}
module {
  func.func @fallback_allowed(%x: tensor<?x768xf16>, %x2: tensor<?x512xf16>) -> (tensor<?x256xf16>, tensor<?x256xf16>) {
    %w = qtensor.weight "model.layers.0.mlp.gate_proj" : !qtensor.tensor<256x768xf16, #G96>
    // expected-remark-re @+1 {{dispatch 'model.layers.0.mlp.gate_proj': requested affine si4 twos_complement zp=none g96 scale=f16 {{.*}} | decode (T in [1, 16]): [affine_gemv_decode_sm80 -> rejected: group size 96 not in {16, 32, 64, 128}] {{.*}} [full_dequant_linear -> accepted: selected: full-dequant fallback (fallback=allow)] {{.*}} selected=full_dequant_linear (fallback) | prefill {{.*}} | layout (logical, 1, lsb_first) (no kernel-native layout admitted; the stored layout stays), repack none}}
    %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x768xf16>, !qtensor.tensor<256x768xf16, #G96> -> tensor<?x256xf16>
    %w2 = qtensor.weight "model.layers.0.mlp.up_proj" : !qtensor.tensor<256x512xf16, #W4>
    // expected-remark @+1 {{[full_dequant_linear -> accepted: admitted; lower priority than affine_mma_prefill_sm80 (0 < 90)] [w8a8_gemv_decode_sm80 -> rejected: code si4 twos_complement not in {si8 twos_complement, ui8}; activations none not in {per_token_sym, per_token_asym}] [w8a8_gemv_decode_host -> rejected: runs on the host, target is sm_90; code si4 twos_complement not in {si8 twos_complement, ui8}; activations none not in {per_token_sym, per_token_asym}] selected=affine_mma_prefill_sm80}}
    %y2 = qtensor.linear %x2, %w2 accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
    return %y, %y2 : tensor<?x256xf16>, tensor<?x256xf16>
  }
}
// The trace file: one object per op and phase, in op order.
// JSON:      "op": "model.layers.0.mlp.gate_proj",
// JSON-NEXT: "index": 0,
// JSON-NEXT: "phase": "decode",
// JSON-NEXT: "selected": "full_dequant_linear",
// JSON-NEXT: "fallback": true,
// JSON:      "repack": "none",
// JSON:      "device": "sm_90",
// JSON:      "shape": {
// JSON-NEXT:   "N": 256,
// JSON-NEXT:   "K": 768,
// JSON-NEXT:   "T": null
// JSON:      "candidates": [
// JSON-NEXT:   {
// JSON-NEXT:     "kernel": "affine_gemv_decode_sm80",
// JSON-NEXT:     "accepted": false,
// JSON-NEXT:     "reason": "group size 96 not in {16, 32, 64, 128}"
// JSON:          "kernel": "full_dequant_linear",
// JSON-NEXT:     "accepted": true,
// JSON-NEXT:     "reason": "selected: full-dequant fallback (fallback=allow)"
// JSON:      "op": "model.layers.0.mlp.gate_proj",
// JSON-NEXT: "index": 0,
// JSON-NEXT: "phase": "prefill",
// JSON-NEXT: "selected": "full_dequant_linear",
// JSON-NEXT: "fallback": true,
// JSON:      "op": "model.layers.0.mlp.up_proj",
// JSON-NEXT: "index": 1,
// JSON-NEXT: "phase": "decode",
// JSON-NEXT: "selected": "affine_mma_prefill_sm80",
// JSON-NEXT: "fallback": false,
// JSON-NEXT: "layout": {
// JSON-NEXT:   "family": "prefill_mma",
// JSON-NEXT:   "version": 1,
// JSON-NEXT:   "encoding": "offset_binary"
// JSON-NEXT: },
// JSON-NEXT: "secondary_layout": false,
// JSON-NEXT: "repack": "prepacked",
// JSON:      "phase": "prefill",
// JSON-NOT:  "op":

//--- warn.mlir
// fallback=warn: the fallback is taken, with a warning that lists why every
// other candidate was not selected.
#G96 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 96, scale = f16>
// CHECK: qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "full_dequant_linear", decode_fallback = true, layout = #{{.+}}>
func.func @fallback_warned(%x: tensor<1x768xf16>) -> tensor<1x256xf16> {
  %w = qtensor.weight "model.layers.0.mlp.gate_proj" : !qtensor.tensor<256x768xf16, #G96>
  // expected-warning @+9 {{'model.layers.0.mlp.gate_proj' runs the full-dequant fallback for decode (T = 1) on sm_90 (fallback=warn)}}
  // expected-note @+8 {{affine_gemv_decode_sm80: group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+7 {{affine_mma_prefill_sm80: group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+6 {{affine_gemv_decode_host: runs on the host, target is sm_90; group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+5 {{affine_gemm_prefill_host: runs on the host, target is sm_90; group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+4 {{affine_gemm_host_xq8: runs on the host, target is sm_90; group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+3 {{affine_gemm_host: runs on the host, target is sm_90; group size 96 not in {16, 32, 64, 128}}}
  // expected-note @+2 {{w8a8_gemv_decode_sm80: code si4 twos_complement not in {si8 twos_complement, ui8}; group size 96 not in {16, 32, 64, 128, 256}; activations none not in {per_token_sym, per_token_asym}}}
  // expected-note @+1 {{w8a8_gemv_decode_host: runs on the host, target is sm_90; code si4 twos_complement not in {si8 twos_complement, ui8}; group size 96 not in {16, 32, 64, 128, 256}; activations none not in {per_token_sym, per_token_asym}}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<1x768xf16>, !qtensor.tensor<256x768xf16, #G96> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

//--- bad-target.mlir
// expected-error @+1 {{qtensor-select-layouts: unknown target 'tpu'; expected sm_80, sm_86, sm_89, sm_90 or host}}
module {
}

//--- bad-fallback.mlir
// CHECK: for the --fallback option: Cannot find option named 'sometimes'!
// PHASE: for the --phase option: Cannot find option named 'sideways'!
module {
}

//--- unwritable.mlir
// A trace file that cannot be written is an error naming the path and the
// system's reason; the pass fails.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// expected-error-re @+1 {{qtensor-select-layouts: cannot write the dispatch trace: {{.*}}/missing/trace.json: cannot create a temporary file next to it: No such file or directory}}
module {
  func.func @f(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
    %w = qtensor.weight "w" : !qtensor.tensor<256x512xf16, #W4>
    %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x512xf16>, !qtensor.tensor<256x512xf16, #W4> -> tensor<?x256xf16>
    return %y : tensor<?x256xf16>
  }
}
