// Each part below runs under its own options (tp, group-policy, strategy);
// split-file keeps the line numbers, so diagnostics point into this file.
//
// RUN: rm -rf %t && split-file %s %t --leading-lines
// RUN: qopt %t/tp2.mlir --qtensor-place-shards=tp=2 -split-input-file | FileCheck %t/tp2.mlir
// RUN: qopt %t/tp1.mlir --qtensor-place-shards=tp=1 | FileCheck %t/tp1.mlir --implicit-check-not=qtensor.placement --implicit-check-not=shard.
// RUN: qopt %t/tp1.mlir --qtensor-place-shards | FileCheck %t/tp1.mlir --implicit-check-not=qtensor.placement --implicit-check-not=shard.
// RUN: qopt %t/down-proj.mlir --qtensor-place-shards="tp=4 group-policy=align" | FileCheck %t/down-proj.mlir --check-prefixes=CHECK,ALIGN
// RUN: qopt %t/down-proj.mlir --qtensor-place-shards="tp=4 group-policy=replicate-boundary" | FileCheck %t/down-proj.mlir --check-prefixes=CHECK,REPLICATE
// RUN: qopt %t/down-proj-repack.mlir --qtensor-place-shards="tp=4 group-policy=repack" -verify-diagnostics | FileCheck %t/down-proj-repack.mlir
// RUN: qopt %t/down-proj-error.mlir --qtensor-place-shards=tp=4 -verify-diagnostics
// RUN: qopt %t/tp3-error.mlir --qtensor-place-shards=tp=3 -split-input-file -verify-diagnostics
// RUN: qopt %t/tp3-uneven.mlir --qtensor-place-shards="tp=3 group-policy=align" | FileCheck %t/tp3-uneven.mlir --check-prefixes=CHECK,ALIGN
// RUN: qopt %t/tp3-uneven.mlir --qtensor-place-shards="tp=3 group-policy=replicate-boundary" | FileCheck %t/tp3-uneven.mlir --check-prefixes=CHECK,REPLICATE
// RUN: qopt %t/nested.mlir --qtensor-place-shards="tp=2 group-policy=align" | FileCheck %t/nested.mlir
// RUN: qopt %t/nested-error.mlir --qtensor-place-shards=tp=4 -verify-diagnostics
// RUN: qopt %t/strategies.mlir --qtensor-place-shards="tp=2 strategy=*.layers.1.*:replicate,*.o_proj:column,q_proj:row,lm_head:row" | FileCheck %t/strategies.mlir
// RUN: qopt %t/errors.mlir --qtensor-place-shards=tp=2 -split-input-file -verify-diagnostics
// RUN: qopt %t/errors-align.mlir --qtensor-place-shards="tp=4 group-policy=align" -split-input-file -verify-diagnostics
// RUN: qopt %t/errors-repack.mlir --qtensor-place-shards="tp=2 group-policy=repack" -verify-diagnostics
// RUN: qopt %t/option-tp0.mlir --qtensor-place-shards=tp=0 -verify-diagnostics
// RUN: qopt %t/option-tp-large.mlir --qtensor-place-shards=tp=2048 -verify-diagnostics
// RUN: not qopt %t/option-policy.mlir --qtensor-place-shards="tp=2 group-policy=round" 2>&1 | FileCheck %t/option-policy.mlir
// RUN: qopt %t/option-strategy.mlir --qtensor-place-shards="tp=2 strategy=down_proj,x:diagonal,:row,a[b:row" -verify-diagnostics

//--- tp2.mlir

!G4_16x8 = !qtensor.tensor<16x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// Column-parallel gate/up slice N and hold every K group of their rows;
// row-parallel down slices K = 4 groups of 4 into 2 + 2 and is followed by
// the all-reduce, which replaces its result everywhere.
// CHECK: shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @mlp
// CHECK: %[[G:.*]] = qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = column, ranks = 2, dim = 0, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 0, 2]>}
// CHECK: %[[U:.*]] = qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = column, ranks = 2, dim = 0, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 0, 2]>}
// CHECK: %[[GU:.*]] = arith.mulf %[[G]], %[[U]]
// CHECK: %[[D:.*]] = qtensor.linear %[[GU]], %{{.*}} accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 2, 4]>}
// CHECK-NEXT: %[[SUM:.*]] = shard.all_reduce %[[D]] on @tp grid_axes = [0] : tensor<?x8xf16> -> tensor<?x8xf16>
// CHECK-NEXT: %[[R:.*]] = arith.addf %{{.*}}, %[[SUM]]
// CHECK-NEXT: return %[[R]]
func.func @mlp(%x: tensor<?x8xf16>) -> tensor<?x8xf16> {
  %wg = qtensor.weight "model.layers.0.mlp.gate_proj" : !G4_16x8
  %g = qtensor.linear %x, %wg accumulate(f32) : tensor<?x8xf16>, !G4_16x8 -> tensor<?x16xf16>
  %wu = qtensor.weight "model.layers.0.mlp.up_proj" : !G4_16x8
  %u = qtensor.linear %x, %wu accumulate(f32) : tensor<?x8xf16>, !G4_16x8 -> tensor<?x16xf16>
  %gu = arith.mulf %g, %u : tensor<?x16xf16>
  %wd = qtensor.weight "model.layers.0.mlp.down_proj" : !G4_8x16
  %d = qtensor.linear %gu, %wd accumulate(f32) : tensor<?x16xf16>, !G4_8x16 -> tensor<?x8xf16>
  %r = arith.addf %x, %d : tensor<?x8xf16>
  return %r : tensor<?x8xf16>
}

// -----

!A_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer, granularity = per_axis, axis = 0, scale = f32>>
!T_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si8, scheme = symmetric, granularity = per_tensor, scale = f32>>

// Per-channel scales follow an N slice and are all held under a K slice;
// a per-tensor scale is one qparam every rank holds.
// CHECK-LABEL: func.func @per_axis_and_per_tensor
// CHECK: qtensor.weight "attn.q_proj"
// CHECK-NEXT: qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = column, ranks = 2, dim = 0, bounds = [0, 4, 8], group_policy = error, qparams = [0, 4, 4, 8]>}
// CHECK: qtensor.weight "attn.o_proj"
// CHECK-NEXT: qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 8, 0, 8]>}
// CHECK-NEXT: shard.all_reduce
// CHECK: qtensor.weight "mlp.down_proj"
// CHECK-NEXT: qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 1, 0, 1]>}
// CHECK-NEXT: shard.all_reduce
func.func @per_axis_and_per_tensor(%x: tensor<4x16xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) {
  %wq = qtensor.weight "attn.q_proj" : !A_8x16
  %q = qtensor.linear %x, %wq accumulate(f32) : tensor<4x16xf16>, !A_8x16 -> tensor<4x8xf16>
  %wo = qtensor.weight "attn.o_proj" : !A_8x16
  %o = qtensor.linear %x, %wo accumulate(f32) : tensor<4x16xf16>, !A_8x16 -> tensor<4x8xf16>
  %wd = qtensor.weight "mlp.down_proj" : !T_8x16
  %d = qtensor.linear %x, %wd accumulate(f32) : tensor<4x16xf16>, !T_8x16 -> tensor<4x8xf16>
  return %q, %o, %d : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}

// -----

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// A row-parallel bias leaves the linear (marked qtensor.bias_after_reduce,
// which the dispatch trace records) and is added once, after the
// reduction; a column-parallel bias stays (each rank adds its own slice).
// CHECK-LABEL: func.func @row_bias
// CHECK-SAME: (%[[X:.*]]: tensor<?x16xf16>, %[[BIAS:.*]]: tensor<8xf16>)
// CHECK: %[[Y:.*]] = qtensor.linear %[[X]], %{{.*}} accumulate(f32) {qtensor.bias_after_reduce, qtensor.placement = {{.*}}strategy = row{{.*}}} : tensor<?x16xf16>, !qtensor.tensor<8x16xf16, #si4_group4> -> tensor<?x8xf16>
// CHECK-NEXT: %[[SUM:.*]] = shard.all_reduce %[[Y]] on @tp grid_axes = [0] : tensor<?x8xf16> -> tensor<?x8xf16>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[T:.*]] = tensor.dim %[[SUM]], %[[C0]] : tensor<?x8xf16>
// CHECK-NEXT: %[[E:.*]] = tensor.empty(%[[T]]) : tensor<?x8xf16>
// CHECK-NEXT: %[[B:.*]] = linalg.broadcast ins(%[[BIAS]] : tensor<8xf16>) outs(%[[E]] : tensor<?x8xf16>) dimensions = [0]
// CHECK-NEXT: %[[OUT:.*]] = arith.addf %[[SUM]], %[[B]] : tensor<?x8xf16>
// CHECK-NEXT: %[[Z:.*]] = arith.addf %[[OUT]], %[[OUT]]
// CHECK-NEXT: return %[[Z]]
func.func @row_bias(%x: tensor<?x16xf16>, %b: tensor<8xf16>) -> tensor<?x8xf16> {
  %w = qtensor.weight "self_attn.o_proj" : !G4_8x16
  %y = qtensor.linear %x, %w, %b accumulate(f32) : tensor<?x16xf16>, !G4_8x16, tensor<8xf16> -> tensor<?x8xf16>
  %z = arith.addf %y, %y : tensor<?x8xf16>
  return %z : tensor<?x8xf16>
}

// CHECK-LABEL: func.func @row_bias_vector
// CHECK-SAME: (%[[X:.*]]: tensor<16xf16>, %[[BIAS:.*]]: tensor<8xf16>)
// CHECK: %[[Y:.*]] = qtensor.linear %[[X]], %{{[^,]*}} accumulate(f32)
// CHECK-NEXT: %[[SUM:.*]] = shard.all_reduce %[[Y]]
// CHECK-NEXT: %[[OUT:.*]] = arith.addf %[[SUM]], %[[BIAS]] : tensor<8xf16>
// CHECK-NEXT: return %[[OUT]]
func.func @row_bias_vector(%x: tensor<16xf16>, %b: tensor<8xf16>) -> tensor<8xf16> {
  %w = qtensor.weight "self_attn.o_proj" : !G4_8x16
  %y = qtensor.linear %x, %w, %b accumulate(f32) : tensor<16xf16>, !G4_8x16, tensor<8xf16> -> tensor<8xf16>
  return %y : tensor<8xf16>
}

// CHECK-LABEL: func.func @column_bias
// CHECK-SAME: (%[[X:.*]]: tensor<?x16xf16>, %[[BIAS:.*]]: tensor<8xf16>)
// CHECK: %[[Y:.*]] = qtensor.linear %[[X]], %{{.*}}, %[[BIAS]] accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = column, ranks = 2, dim = 0, bounds = [0, 4, 8], group_policy = error, qparams = [0, 4, 0, 4]>}
// CHECK-NEXT: return %[[Y]]
func.func @column_bias(%x: tensor<?x16xf16>, %b: tensor<8xf16>) -> tensor<?x8xf16> {
  %w = qtensor.weight "self_attn.q_proj" : !G4_8x16
  %y = qtensor.linear %x, %w, %b accumulate(f32) : tensor<?x16xf16>, !G4_8x16, tensor<8xf16> -> tensor<?x8xf16>
  return %y : tensor<?x8xf16>
}

// -----

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// Tied weights (one value read twice, and the same name read again) share
// one placement; each row-parallel reader gets its own all-reduce.
// CHECK-LABEL: func.func @tied
// CHECK: %[[A:.*]] = qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 2, 4]>} : tensor<2x16xf16>
// CHECK-NEXT: %[[RA:.*]] = shard.all_reduce %[[A]]
// CHECK-NEXT: %[[B:.*]] = qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 2, 4]>} : tensor<3x16xf16>
// CHECK-NEXT: %[[RB:.*]] = shard.all_reduce %[[B]]
// CHECK: %[[C:.*]] = qtensor.linear {{.*}} accumulate(f16) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 2, 4]>}
// CHECK-NEXT: %[[RC:.*]] = shard.all_reduce %[[C]]
// CHECK-NEXT: return %[[RA]], %[[RB]], %[[RC]]
func.func @tied(%x: tensor<2x16xf16>, %x2: tensor<3x16xf16>) -> (tensor<2x8xf16>, tensor<3x8xf16>, tensor<2x8xf16>) {
  %w = qtensor.weight "shared.dense" : !G4_8x16
  %a = qtensor.linear %x, %w accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %b = qtensor.linear %x2, %w accumulate(f32) : tensor<3x16xf16>, !G4_8x16 -> tensor<3x8xf16>
  %w2 = qtensor.weight "shared.dense" : !G4_8x16
  %c = qtensor.linear %x, %w2 accumulate(f16) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  return %a, %b, %c : tensor<2x8xf16>, tensor<3x8xf16>, tensor<2x8xf16>
}

// -----

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
!G4_8x16_tiled = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>, #qtensor.layout<family = "tiled_k_major", version = 1, encoding = "lsb_first", tile = [8, 16]>>

// Names without a transformer default, and unnamed weights, are replicated
// (bounds cover all N = 8 rows, all K groups held); a trailing ".weight" and
// a repack in between don't hide the layer name.
// CHECK-LABEL: func.func @names
// CHECK: qtensor.weight "classifier"
// CHECK-NEXT: qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = replicated, ranks = 2, dim = -1, bounds = [0, 8, 8], group_policy = error, qparams = [0, 4, 0, 4]>}
// CHECK-NEXT: qtensor.linear %{{.*}}, %arg1 {{.*}} {qtensor.placement = #qtensor.placement<strategy = replicated, ranks = 2, dim = -1, bounds = [0, 8, 8], group_policy = error, qparams = [0, 4, 0, 4]>}
// CHECK: qtensor.weight "model.layers.3.mlp.down_proj.weight"
// CHECK-NEXT: qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = row,
// CHECK-NEXT: shard.all_reduce
// CHECK: qtensor.repack
// CHECK-NEXT: qtensor.linear {{.*}} {qtensor.placement = #qtensor.placement<strategy = column,
func.func @names(%x: tensor<2x16xf16>, %unnamed: !G4_8x16) -> (tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>) {
  %wh = qtensor.weight "classifier" : !G4_8x16
  %h = qtensor.linear %x, %wh accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %u = qtensor.linear %x, %unnamed accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %ws = qtensor.weight "model.layers.3.mlp.down_proj.weight" : !G4_8x16
  %s = qtensor.linear %x, %ws accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %wr = qtensor.weight "model.layers.3.self_attn.v_proj" : !G4_8x16
  %p = qtensor.repack %wr : !G4_8x16 -> !G4_8x16_tiled
  %r = qtensor.linear %x, %p accumulate(f32) : tensor<2x16xf16>, !G4_8x16_tiled -> tensor<2x8xf16>
  return %h, %u, %s, %r : tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>
}

// -----

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// GGUF (llama.cpp) names get the same defaults as Hugging Face names, and the
// output head is vocabulary-parallel under both namings; an "output" inside a
// name (BERT's attention.output) is not the head.
// CHECK-LABEL: func.func @gguf_names_and_heads
// CHECK: qtensor.weight "blk.0.attn_q.weight"
// CHECK-NEXT: qtensor.linear {{.*}}strategy = column,
// CHECK: qtensor.weight "blk.0.ffn_up.weight"
// CHECK-NEXT: qtensor.linear {{.*}}strategy = column,
// CHECK: qtensor.weight "blk.0.ffn_down.weight"
// CHECK-NEXT: qtensor.linear {{.*}}strategy = row,
// CHECK: qtensor.weight "blk.0.attn_output.weight"
// CHECK-NEXT: qtensor.linear {{.*}}strategy = row,
// CHECK: qtensor.weight "output.weight"
// CHECK-NEXT: qtensor.linear {{.*}}strategy = column,
// CHECK: qtensor.weight "lm_head.weight"
// CHECK-NEXT: qtensor.linear {{.*}}strategy = column,
// CHECK: qtensor.weight "encoder.layer.0.attention.output.weight"
// CHECK-NEXT: qtensor.linear {{.*}}strategy = replicated,
func.func @gguf_names_and_heads(%x: tensor<2x16xf16>) -> (tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>) {
  %w0 = qtensor.weight "blk.0.attn_q.weight" : !G4_8x16
  %y0 = qtensor.linear %x, %w0 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w1 = qtensor.weight "blk.0.ffn_up.weight" : !G4_8x16
  %y1 = qtensor.linear %x, %w1 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w2 = qtensor.weight "blk.0.ffn_down.weight" : !G4_8x16
  %y2 = qtensor.linear %x, %w2 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w3 = qtensor.weight "blk.0.attn_output.weight" : !G4_8x16
  %y3 = qtensor.linear %x, %w3 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w4 = qtensor.weight "output.weight" : !G4_8x16
  %y4 = qtensor.linear %x, %w4 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w5 = qtensor.weight "lm_head.weight" : !G4_8x16
  %y5 = qtensor.linear %x, %w5 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w6 = qtensor.weight "encoder.layer.0.attention.output.weight" : !G4_8x16
  %y6 = qtensor.linear %x, %w6 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  return %y0, %y1, %y2, %y3, %y4, %y5, %y6 : tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>
}

// -----

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// The grid takes a fresh name where `tp` is already a symbol.
// CHECK: shard.grid @[[GRID:tp_[0-9]+]](shape = 2)
// CHECK-LABEL: func.func @grid_name_taken
// CHECK: %[[Y:.*]] = qtensor.linear
// CHECK-NEXT: shard.all_reduce %[[Y]] on @[[GRID]] grid_axes = [0]
func.func private @tp()

func.func @grid_name_taken(%x: tensor<2x16xf16>) -> tensor<2x8xf16> {
  %w = qtensor.weight "o_proj" : !G4_8x16
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

//--- tp1.mlir

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// One rank holds every weight whole: no placement, no grid, no collective.
// CHECK-LABEL: func.func @tp1
// CHECK: %[[Y:.*]] = qtensor.linear %{{.*}}, %{{.*}}, %{{.*}} accumulate(f32) : tensor<2x16xf16>
// CHECK-NEXT: return %[[Y]]
func.func @tp1(%x: tensor<2x16xf16>, %b: tensor<8xf16>) -> tensor<2x8xf16> {
  %w = qtensor.weight "model.layers.0.mlp.down_proj" : !G4_8x16
  %y = qtensor.linear %x, %w, %b accumulate(f32) : tensor<2x16xf16>, !G4_8x16, tensor<8xf16> -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

//--- down-proj.mlir

!W_up = !qtensor.tensor<11008x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>
!W_down = !qtensor.tensor<4096x11008xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>

// Llama-2-7B's MLP at tp = 4: down_proj's K = 11008 is 86 groups of 128, so
// an even split (2752 = 21.5 groups per rank) cuts groups 21 and 64.
// align: 22, 22, 21, 21 groups per rank. replicate-boundary: even slices;
// the cut groups' qparams are held by both neighbours. gate/up take down's
// K bounds as their N bounds; layer 1's up_proj feeds no row-parallel
// linear and splits N evenly.
// CHECK-LABEL: func.func @mlp
// ALIGN: qtensor.weight "model.layers.0.mlp.gate_proj"
// ALIGN-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 4, dim = 0, bounds = [0, 2816, 5632, 8320, 11008], group_policy = align, qparams = [0, 32, 0, 32, 0, 32, 0, 32]>}
// ALIGN: qtensor.weight "model.layers.0.mlp.up_proj"
// ALIGN-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 4, dim = 0, bounds = [0, 2816, 5632, 8320, 11008], group_policy = align, qparams = [0, 32, 0, 32, 0, 32, 0, 32]>}
// ALIGN: qtensor.weight "model.layers.0.mlp.down_proj"
// ALIGN-NEXT: {qtensor.placement = #qtensor.placement<strategy = row, ranks = 4, dim = 1, bounds = [0, 2816, 5632, 8320, 11008], group_policy = align, qparams = [0, 22, 22, 44, 44, 65, 65, 86]>}
// ALIGN: qtensor.weight "model.layers.1.mlp.up_proj"
// ALIGN-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 4, dim = 0, bounds = [0, 2752, 5504, 8256, 11008], group_policy = align, qparams = [0, 32, 0, 32, 0, 32, 0, 32]>}
// REPLICATE: qtensor.weight "model.layers.0.mlp.gate_proj"
// REPLICATE-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 4, dim = 0, bounds = [0, 2752, 5504, 8256, 11008], group_policy = replicate_boundary, qparams = [0, 32, 0, 32, 0, 32, 0, 32]>}
// REPLICATE: qtensor.weight "model.layers.0.mlp.up_proj"
// REPLICATE-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 4, dim = 0, bounds = [0, 2752, 5504, 8256, 11008], group_policy = replicate_boundary, qparams = [0, 32, 0, 32, 0, 32, 0, 32]>}
// REPLICATE: qtensor.weight "model.layers.0.mlp.down_proj"
// REPLICATE-NEXT: {qtensor.placement = #qtensor.placement<strategy = row, ranks = 4, dim = 1, bounds = [0, 2752, 5504, 8256, 11008], group_policy = replicate_boundary, qparams = [0, 22, 21, 43, 43, 65, 64, 86]>}
// REPLICATE: qtensor.weight "model.layers.1.mlp.up_proj"
// REPLICATE-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 4, dim = 0, bounds = [0, 2752, 5504, 8256, 11008], group_policy = replicate_boundary, qparams = [0, 32, 0, 32, 0, 32, 0, 32]>}
// CHECK-NOT: qtensor.reverify
// CHECK: return
func.func @mlp(%x: tensor<?x4096xf16>) -> (tensor<?x4096xf16>, tensor<?x11008xf16>) {
  %wg = qtensor.weight "model.layers.0.mlp.gate_proj" : !W_up
  %g = qtensor.linear %x, %wg accumulate(f32) : tensor<?x4096xf16>, !W_up -> tensor<?x11008xf16>
  %wu = qtensor.weight "model.layers.0.mlp.up_proj" : !W_up
  %u = qtensor.linear %x, %wu accumulate(f32) : tensor<?x4096xf16>, !W_up -> tensor<?x11008xf16>
  %gu = arith.mulf %g, %u : tensor<?x11008xf16>
  %wd = qtensor.weight "model.layers.0.mlp.down_proj" : !W_down
  %d = qtensor.linear %gu, %wd accumulate(f32) : tensor<?x11008xf16>, !W_down -> tensor<?x4096xf16>
  %wl = qtensor.weight "model.layers.1.mlp.up_proj" : !W_up
  %l = qtensor.linear %x, %wl accumulate(f32) : tensor<?x4096xf16>, !W_up -> tensor<?x11008xf16>
  return %d, %l : tensor<?x4096xf16>, tensor<?x11008xf16>
}

//--- down-proj-repack.mlir

!W_down = !qtensor.tensor<4096x11008xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>
!W_o = !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>

// repack: each rank re-groups its 2752 elements from its own first one into
// 22 groups (the last of 64), numbered rank after rank: 88 groups where the
// weight had 86. That is a numerical conversion, so the op is marked for
// re-verification. o_proj's K = 4096 splits on group boundaries: unmarked.
// CHECK-LABEL: func.func @repack
// CHECK: qtensor.weight "model.layers.0.mlp.down_proj"
// CHECK-NEXT: {qtensor.placement = #qtensor.placement<strategy = row, ranks = 4, dim = 1, bounds = [0, 2752, 5504, 8256, 11008], group_policy = repack, qparams = [0, 22, 22, 44, 44, 66, 66, 88]>, qtensor.reverify}
// CHECK-NEXT: shard.all_reduce
// CHECK: qtensor.weight "model.layers.0.self_attn.o_proj"
// CHECK-NEXT: {qtensor.placement = #qtensor.placement<strategy = row, ranks = 4, dim = 1, bounds = [0, 1024, 2048, 3072, 4096], group_policy = repack, qparams = [0, 8, 8, 16, 16, 24, 24, 32]>}
// CHECK-NEXT: shard.all_reduce
func.func @repack(%x: tensor<1x11008xf16>, %h: tensor<1x4096xf16>) -> (tensor<1x4096xf16>, tensor<1x4096xf16>) {
  %wd = qtensor.weight "model.layers.0.mlp.down_proj" : !W_down
  // expected-warning @+1 {{weight "model.layers.0.mlp.down_proj" is re-grouped per rank (group-policy=repack): rank 1 starts at K = 2752, inside group 21 of G = 128, so each rank's groups and qparams are rebuilt from its own offset; reconstruction changes and the op is marked 'qtensor.reverify' for parity re-validation}}
  %d = qtensor.linear %x, %wd accumulate(f32) : tensor<1x11008xf16>, !W_down -> tensor<1x4096xf16>
  %wo = qtensor.weight "model.layers.0.self_attn.o_proj" : !W_o
  %o = qtensor.linear %h, %wo accumulate(f32) : tensor<1x4096xf16>, !W_o -> tensor<1x4096xf16>
  return %d, %o : tensor<1x4096xf16>, tensor<1x4096xf16>
}

//--- down-proj-error.mlir

!W_down = !qtensor.tensor<4096x11008xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>

func.func @down_proj_cuts_group(%x: tensor<?x11008xf16>) -> tensor<?x4096xf16> {
  %w = qtensor.weight "model.layers.0.mlp.down_proj" : !W_down
  // expected-error @+1 {{'qtensor.linear' op cannot place weight "model.layers.0.mlp.down_proj" row-parallel over tp = 4 with group-policy=error: the even slices of K = 11008 (2752 per rank) cut groups of G = 128: rank 1 would start at K = 2752, inside group 21; use group-policy=align, replicate-boundary or repack}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x11008xf16>, !W_down -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

//--- tp3-error.mlir

!W = !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>

func.func @k_not_divisible_by_tp(%x: tensor<2x4096xf16>) -> tensor<2x4096xf16> {
  %w = qtensor.weight "model.layers.0.self_attn.o_proj" : !W
  // expected-error @+1 {{cannot place weight "model.layers.0.self_attn.o_proj" row-parallel over tp = 3 with group-policy=error: K = 4096 is not divisible by tp = 3 (groups of G = 128 along K)}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x4096xf16>, !W -> tensor<2x4096xf16>
  return %y : tensor<2x4096xf16>
}

// -----

!W = !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>

func.func @n_not_divisible_by_tp(%x: tensor<2x4096xf16>) -> tensor<2x4096xf16> {
  %w = qtensor.weight "model.layers.0.self_attn.q_proj" : !W
  // expected-error @+1 {{cannot place weight "model.layers.0.self_attn.q_proj" column-parallel over tp = 3 with group-policy=error: N = 4096 is not divisible by tp = 3}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x4096xf16>, !W -> tensor<2x4096xf16>
  return %y : tensor<2x4096xf16>
}

//--- tp3-uneven.mlir

!W = !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>

// tp = 3 does not divide 4096. align: 32 groups as 11, 11, 10; q_proj
// follows o_proj's bounds, k_proj (feeding no row linear) splits elements
// as evenly as possible. replicate-boundary: 1366, 1365, 1365 elements;
// groups 10 and 21 are cut and held twice.
// CHECK-LABEL: func.func @uneven
// CHECK: qtensor.weight "model.layers.0.self_attn.q_proj"
// ALIGN-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 3, dim = 0, bounds = [0, 1408, 2816, 4096], group_policy = align, qparams = [0, 32, 0, 32, 0, 32]>}
// REPLICATE-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 3, dim = 0, bounds = [0, 1366, 2731, 4096], group_policy = replicate_boundary, qparams = [0, 32, 0, 32, 0, 32]>}
// CHECK: qtensor.weight "model.layers.0.self_attn.o_proj"
// ALIGN-NEXT: {qtensor.placement = #qtensor.placement<strategy = row, ranks = 3, dim = 1, bounds = [0, 1408, 2816, 4096], group_policy = align, qparams = [0, 11, 11, 22, 22, 32]>}
// REPLICATE-NEXT: {qtensor.placement = #qtensor.placement<strategy = row, ranks = 3, dim = 1, bounds = [0, 1366, 2731, 4096], group_policy = replicate_boundary, qparams = [0, 11, 10, 22, 21, 32]>}
// CHECK: qtensor.weight "model.layers.0.self_attn.k_proj"
// ALIGN-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 3, dim = 0, bounds = [0, 1366, 2731, 4096], group_policy = align, qparams = [0, 32, 0, 32, 0, 32]>}
// REPLICATE-NEXT: {qtensor.placement = #qtensor.placement<strategy = column, ranks = 3, dim = 0, bounds = [0, 1366, 2731, 4096], group_policy = replicate_boundary, qparams = [0, 32, 0, 32, 0, 32]>}
func.func @uneven(%x: tensor<2x4096xf16>) -> (tensor<2x4096xf16>, tensor<2x4096xf16>) {
  %wq = qtensor.weight "model.layers.0.self_attn.q_proj" : !W
  %q = qtensor.linear %x, %wq accumulate(f32) : tensor<2x4096xf16>, !W -> tensor<2x4096xf16>
  %wo = qtensor.weight "model.layers.0.self_attn.o_proj" : !W
  %o = qtensor.linear %q, %wo accumulate(f32) : tensor<2x4096xf16>, !W -> tensor<2x4096xf16>
  %wk = qtensor.weight "model.layers.0.self_attn.k_proj" : !W
  %k = qtensor.linear %x, %wk accumulate(f32) : tensor<2x4096xf16>, !W -> tensor<2x4096xf16>
  return %o, %k : tensor<2x4096xf16>, tensor<2x4096xf16>
}

//--- nested.mlir

!K4 = !qtensor.tensor<64x768xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, min_code = ui6, super_group_size = 256, super_scale = f16>>>

// A Q4_K down projection, K = 768: three super-blocks of 256 own their d
// and dmin, so align splits K in whole super-blocks (512 + 256), not in
// groups of 32 (384 + 384 would cut super-block 1).
// CHECK-LABEL: func.func @k_quant_down
// CHECK: qtensor.weight "model.layers.0.mlp.down_proj"
// CHECK-NEXT: {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 512, 768], group_policy = align, qparams = [0, 16, 16, 24]>}
func.func @k_quant_down(%x: tensor<2x768xf16>) -> tensor<2x64xf16> {
  %w = qtensor.weight "model.layers.0.mlp.down_proj" : !K4
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x768xf16>, !K4 -> tensor<2x64xf16>
  return %y : tensor<2x64xf16>
}

//--- nested-error.mlir

!K4 = !qtensor.tensor<64x1024xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, min_code = ui6, super_group_size = 256, super_scale = f16>>>

// tp = 4 over K = 1024 splits 256 per rank: whole super-blocks, accepted;
// tp = 4 over 768 (below) would not be, and says so in super-groups.
func.func @k_quant_down(%x: tensor<2x1024xf16>) -> tensor<2x64xf16> {
  %w = qtensor.weight "model.layers.0.mlp.down_proj" : !K4
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x1024xf16>, !K4 -> tensor<2x64xf16>
  return %y : tensor<2x64xf16>
}

!K4b = !qtensor.tensor<64x768xf16, #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min, granularity = group, axis = 1, group_size = 32, tail = exact, scale = f32, nested = <scale_code = ui6, min_code = ui6, super_group_size = 256, super_scale = f16>>>

func.func @k_quant_cut(%x: tensor<2x768xf16>) -> tensor<2x64xf16> {
  %w = qtensor.weight "model.layers.1.mlp.down_proj" : !K4b
  // expected-error @+1 {{'qtensor.linear' op cannot place weight "model.layers.1.mlp.down_proj" row-parallel over tp = 4 with group-policy=error: the even slices of K = 768 (192 per rank) cut groups of G = 256}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x768xf16>, !K4b -> tensor<2x64xf16>
  return %y : tensor<2x64xf16>
}

//--- strategies.mlir

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

// strategy=*.layers.1.*:replicate,*.o_proj:column,q_proj:row,lm_head:row.
// The first matching entry wins (layer 1's q_proj is replicated, not row);
// a glob must match the whole name, a plain pattern anywhere in it; names
// no entry matches keep their transformer default.
// CHECK-LABEL: func.func @overrides
// CHECK: qtensor.weight "model.layers.0.self_attn.q_proj"
// CHECK-NEXT: {qtensor.placement = #qtensor.placement<strategy = row,
// CHECK-NEXT: shard.all_reduce
// CHECK: qtensor.weight "model.layers.1.self_attn.q_proj"
// CHECK-NEXT: {qtensor.placement = #qtensor.placement<strategy = replicated,
// CHECK: qtensor.weight "model.layers.0.self_attn.o_proj"
// CHECK-NEXT: {qtensor.placement = #qtensor.placement<strategy = column,
// CHECK: qtensor.weight "lm_head"
// CHECK-NEXT: {qtensor.placement = #qtensor.placement<strategy = row,
// CHECK-NEXT: shard.all_reduce
// CHECK: qtensor.weight "model.layers.0.mlp.down_proj"
// CHECK-NEXT: {qtensor.placement = #qtensor.placement<strategy = row,
// CHECK-NEXT: shard.all_reduce
func.func @overrides(%x: tensor<2x16xf16>) -> (tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>) {
  %w0 = qtensor.weight "model.layers.0.self_attn.q_proj" : !G4_8x16
  %y0 = qtensor.linear %x, %w0 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w1 = qtensor.weight "model.layers.1.self_attn.q_proj" : !G4_8x16
  %y1 = qtensor.linear %x, %w1 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w2 = qtensor.weight "model.layers.0.self_attn.o_proj" : !G4_8x16
  %y2 = qtensor.linear %x, %w2 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w3 = qtensor.weight "lm_head" : !G4_8x16
  %y3 = qtensor.linear %x, %w3 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %w4 = qtensor.weight "model.layers.0.mlp.down_proj" : !G4_8x16
  %y4 = qtensor.linear %x, %w4 accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  return %y0, %y1, %y2, %y3, %y4 : tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>, tensor<2x8xf16>
}

//--- errors.mlir

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

func.func @already_placed(%x: tensor<2x16xf16>) -> tensor<2x8xf16> {
  %w = qtensor.weight "o_proj" : !G4_8x16
  // expected-error @+1 {{'qtensor.linear' op is already placed (it carries 'qtensor.placement'); qtensor-place-shards runs once per module}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement = #qtensor.placement<strategy = row, ranks = 2, dim = 1, bounds = [0, 8, 16], group_policy = error, qparams = [0, 2, 2, 4]>} : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

!G4_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
!G8_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 8, scale = f16>>

func.func @tied_weight_two_types(%x: tensor<2x16xf16>) -> (tensor<2x8xf16>, tensor<2x8xf16>) {
  %a = qtensor.weight "model.mlp.up_proj" : !G4_8x16
  // expected-note @+1 {{the other reader}}
  %ya = qtensor.linear %x, %a accumulate(f32) : tensor<2x16xf16>, !G4_8x16 -> tensor<2x8xf16>
  %b = qtensor.weight "model.mlp.up_proj" : !G8_8x16
  // expected-error @+1 {{reads weight "model.mlp.up_proj" as '!qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 8, scale = f16>>', but another linear reads it as '!qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>'; tied users of a weight need one type to share one placement}}
  %yb = qtensor.linear %x, %b accumulate(f32) : tensor<2x16xf16>, !G8_8x16 -> tensor<2x8xf16>
  return %ya, %yb : tensor<2x8xf16>, tensor<2x8xf16>
}

// -----

!P_8x16 = !qtensor.tensor<8x16xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16, permutation = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]>>

// An act-order permutation along K is no obstacle to an N slice, but its
// groups are no contiguous K range for a K slice to own.
func.func @row_slice_of_permuted_k(%x: tensor<2x16xf16>) -> (tensor<2x8xf16>, tensor<2x8xf16>) {
  %q = qtensor.weight "self_attn.q_proj" : !P_8x16
  %yq = qtensor.linear %x, %q accumulate(f32) : tensor<2x16xf16>, !P_8x16 -> tensor<2x8xf16>
  %o = qtensor.weight "self_attn.o_proj" : !P_8x16
  // expected-error @+1 {{cannot place weight "self_attn.o_proj": the weight permutes axis 1 (act-order), so its groups are not contiguous ranges and a slice along it owns no qparam range}}
  %yo = qtensor.linear %x, %o accumulate(f32) : tensor<2x16xf16>, !P_8x16 -> tensor<2x8xf16>
  return %yq, %yo : tensor<2x8xf16>, tensor<2x8xf16>
}

//--- errors-align.mlir

!G4_8x8 = !qtensor.tensor<8x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

func.func @align_fewer_groups_than_ranks(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %w = qtensor.weight "mlp.down_proj" : !G4_8x8
  // expected-error @+1 {{cannot place weight "mlp.down_proj" row-parallel over tp = 4 with group-policy=align: K = 8 holds only 2 groups of G = 4, fewer than the 4 ranks that each need a whole group}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x8xf16>, !G4_8x8 -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

!G4_2x8 = !qtensor.tensor<2x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>

func.func @fewer_rows_than_ranks(%x: tensor<2x8xf16>) -> tensor<2x2xf16> {
  %w = qtensor.weight "attn.q_proj" : !G4_2x8
  // expected-error @+1 {{cannot place weight "attn.q_proj" column-parallel over tp = 4 with group-policy=align: N = 2 has fewer elements than the 4 ranks}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x8xf16>, !G4_2x8 -> tensor<2x2xf16>
  return %y : tensor<2x2xf16>
}

// -----

!G4_24x8 = !qtensor.tensor<24x8xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
!G4_8x24 = !qtensor.tensor<8x24xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, scale = f16>>
!C_8x24 = !qtensor.tensor<8x24xf16, #qtensor.affine<code = si8, scheme = symmetric, granularity = per_axis, axis = 0, scale = f16>>

// One column output feeds two row linears whose K slices differ (aligned to
// 6 groups of 4 as 2, 2, 1, 1 groups; per-channel weights split evenly).
func.func @column_feeds_rows_with_other_bounds(%x: tensor<2x8xf16>) -> (tensor<2x8xf16>, tensor<2x8xf16>) {
  %wu = qtensor.weight "a.up_proj" : !G4_24x8
  // expected-error @+1 {{'qtensor.linear' op column-parallel weight "a.up_proj" feeds row-parallel linears that slice K differently: [0, 8, 16, 20, 24] and [0, 6, 12, 18, 24]; its output slices cannot match both}}
  %u = qtensor.linear %x, %wu accumulate(f32) : tensor<2x8xf16>, !G4_24x8 -> tensor<2x24xf16>
  %wa = qtensor.weight "a.down_proj" : !G4_8x24
  // expected-note @+1 {{slices K as [0, 8, 16, 20, 24]}}
  %a = qtensor.linear %u, %wa accumulate(f32) : tensor<2x24xf16>, !G4_8x24 -> tensor<2x8xf16>
  %wb = qtensor.weight "b.down_proj" : !C_8x24
  // expected-note @+1 {{slices K as [0, 6, 12, 18, 24]}}
  %b = qtensor.linear %u, %wb accumulate(f32) : tensor<2x24xf16>, !C_8x24 -> tensor<2x8xf16>
  return %a, %b : tensor<2x8xf16>, tensor<2x8xf16>
}

//--- errors-repack.mlir

!X_8x12 = !qtensor.tensor<8x12xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 4, tail = exact, scale = f16>>

// Re-grouping 6 elements per rank leaves groups of 4 + 2, which tail = exact
// forbids.
func.func @repack_exact_tail(%x: tensor<2x12xf16>) -> tensor<2x8xf16> {
  %w = qtensor.weight "mlp.down_proj" : !X_8x12
  // expected-error @+1 {{cannot place weight "mlp.down_proj": re-grouping rank 0's slice of 6 elements leaves a final group of 2, but the weight's tail = exact forbids short groups}}
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<2x12xf16>, !X_8x12 -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

//--- option-tp0.mlir

// expected-error @+1 {{qtensor-place-shards: tp must be between 1 and 1024, got 0}}
module {
}

//--- option-tp-large.mlir

// expected-error @+1 {{qtensor-place-shards: tp must be between 1 and 1024, got 2048}}
module {
}

//--- option-policy.mlir

// An enum option: the option parser refuses the value before any IR is read.
// CHECK: for the --group-policy option: Cannot find option named 'round'!
module {
}

//--- option-strategy.mlir

// Every malformed entry is reported, not just the first.
// expected-error @+4 {{qtensor-place-shards: strategy entry 'down_proj' must be PATTERN:column|row|replicate}}
// expected-error @+3 {{qtensor-place-shards: strategy entry 'x:diagonal' has the unknown strategy 'diagonal'; expected column, row or replicate}}
// expected-error @+2 {{qtensor-place-shards: strategy entry ':row' has an empty weight-name pattern}}
// expected-error @+1 {{qtensor-place-shards: strategy entry 'a[b:row' has a bad glob 'a[b': invalid glob pattern, unmatched '['}}
module {
}
