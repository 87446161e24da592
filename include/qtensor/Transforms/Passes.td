//===- Passes.td - qtensor transformation passes -----------*- tablegen -*-===//
//
// One def per pass; each pass lives in passes/Transforms/<Name>.cpp and has
// one lit file under test/lit/Transforms named after its flag.
//
//===----------------------------------------------------------------------===//

#ifndef QTENSOR_TRANSFORMS_PASSES_TD
#define QTENSOR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def QTensorFuseLinearPass : Pass<"qtensor-fuse-linear"> {
  let summary = "Fuse a dequantize feeding a matmul's weight into qtensor.linear";
  let description = [{
    Rewrites a contraction `C = init + A * B` whose `B` is
    `qtensor.dequantize %w`, seen through `linalg.transpose`,
    `linalg.broadcast`, `linalg.copy` or a `linalg.generic` that only moves
    data, into `qtensor.linear(A, W)`, so the quantized weight reaches a
    kernel without a full-precision copy. The contraction may be
    `linalg.matmul` (plain, or with indexing maps that transpose B),
    `linalg.batch_matmul` whose B broadcasts a 2-D weight over the batch
    (the linear takes the batch as a leading input dimension; a weight that
    differs per batch stays unfused), or a `linalg.generic` with the same
    maps, one reduction loop and a multiply-add body; linalg's contraction
    matcher recognises them, then the body is checked op by op.

    Exactness: `qtensor.linear` accumulates in the init's element type, as
    the matmul does; the activation element type must equal the weight's
    reconstructed type (no conversion is inserted) and the body may only
    widen its inputs with `arith.extf`. A weight indexed `[K, N]` goes
    through `qtensor.transpose`, which keeps every code and moves the
    descriptor's axis (groups along K stay along K). A zero-filled init adds
    nothing; an init that broadcasts a 1-D `[N]` tensor becomes the linear's
    bias; any other init is added after the linear with `arith.addf` (a
    reassociation of the sum that every tiled matmul kernel makes too).
    Ops left dead by a fusion are erased; anything not fused is untouched,
    and `remarks=true` says why for each contraction fed by a dequantize.

    ```mlir
    %b = qtensor.dequantize %w : !qtensor.tensor<11008x4096xf16, #W> -> tensor<11008x4096xf16>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x11008xf32>) -> tensor<?x11008xf32>
    %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %b : tensor<?x4096xf16>, tensor<11008x4096xf16>)
        outs(%z : tensor<?x11008xf32>) -> tensor<?x11008xf32>
    // becomes
    %y = qtensor.linear %x, %w accumulate(f32)
        : tensor<?x4096xf16>, !qtensor.tensor<11008x4096xf16, #W> -> tensor<?x11008xf32>
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark for each contraction fed by a dequantize that is "
           "left unfused, with the reason">,
  ];
  let dependentDialects = ["::mlir::qt::QTensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def QTensorImportPass : Pass<"qtensor-import"> {
  let summary = "Import upstream quant ops and raw arith dequantization";
  let description = [{
    Upstream quant: a `!quant.uniform` tensor (per-tensor, per-axis, or
    sub-channel with blocks along one axis) made by `quant.scast` from
    integer codes becomes `qtensor.assemble` (codes, constant qparams), one
    made by `quant.qcast` becomes `qtensor.quantize`; their `quant.dcast`
    uses become `qtensor.dequantize` and `quant.scast` uses back to integers
    get the codes. A quantized tensor of any other origin that a
    `quant.dcast` reads (a block argument, an `ml_program.global_load_const`
    of a quantized global, another dialect's constant) is read as its codes
    through a `quant.scast` to its storage type (the same bits) and
    assembled the same way; the value itself is left for its other uses. The storage range picks the code type (`i8<-8:7>` is si4,
    `i8<-127:127>` si8 with `narrow_range`); the expressed type is both the
    reconstructed and the scale type; all-zero zero-points are symmetric.

    Raw arith, anchored at a contraction operand (`linalg.matmul` with any
    maps, `linalg.batch_matmul`, a contraction `linalg.generic`), reached
    through at most one `linalg.transpose` and one `tensor.collapse_shape`:

    ```
    D = mulf(shifted, scale)                      (either operand order)
    shifted = conv(codes)                         symmetric
            | subf(conv(codes), z)                float or integer z
            | sitofp(subi(ext(codes), ext(z)|c))  integer z
    conv = uitofp | sitofp, after optional extui / extsi
    ```

    on tensors, or as the body of an elementwise `linalg.generic`. Scales and
    zero-points are followed through splat constants, `linalg.broadcast`,
    broadcasting `linalg.generic` copies, `tensor.collapse_shape` /
    `tensor.expand_shape` (e.g. [N, K/G] broadcast to [N, K/G, G] and
    collapsed to [N, K]), or the generic's indexing maps including
    `(n, k floordiv G)`. The granularity follows from how each qparam
    dimension indexes the codes and is verified: sizes against
    `ceil(dim / G)`, zero-points in the scales' qparam shape, per-axis
    scales along an output dimension of the contraction, groups along its
    reduction. D becomes `qtensor.dequantize(qtensor.assemble(...))`.

    Anything not recognised stays untouched; `remarks=true` says why.
    `strict=true` makes each such reason an error and fails the pass (for
    a pipeline that must not go on with weights left in float or in
    `quant` types).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark for each candidate left untouched, with the reason">,
    Option<"strict", "strict", "bool", "false",
           "Fail on each candidate left untouched (the reason as an error)">,
  ];
  let dependentDialects = ["::mlir::qt::QTensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def QTensorPlaceShardsPass : Pass<"qtensor-place-shards", "::mlir::ModuleOp"> {
  let summary = "Tensor-parallel placement of quantized linears";
  let description = [{
    Slices each quantized linear's codes and qparams over `tp` ranks along
    the declared dimension (column-parallel: N; row-parallel: K) and records
    it, with the qparams each rank holds, as the discardable attribute
    `qtensor.placement = #qtensor.placement<...>`; shapes stay global. The
    strategy comes from the first `strategy=PATTERN:column|row|replicate`
    matching the `qtensor.weight` name, else from the transformer defaults
    (`q_proj`, `gate_proj`, ... column; `o_proj`, `down_proj`, ... row), else
    the weight is replicated. A K-slice that cuts a quantization group
    follows `group-policy` (seed M8.9 0x06B): `error` reports it, `align`
    moves bounds to group boundaries, `replicate-boundary` gives the cut
    group's qparams to both ranks, `repack` re-groups each rank's slice and
    marks the op `qtensor.reverify`. A row-parallel linear's result is each
    rank's partial sum: a `shard.all_reduce` on the module's `shard.grid`
    follows it, and its bias is added after the reduction. Linears reading
    one weight share its placement. `tp=1` leaves the module unchanged (no
    attribute means one rank holds the weight). Runs before layout
    selection, which reads the placement.

    ```mlir
    // --qtensor-place-shards="tp=4 group-policy=align"
    %y = qtensor.linear %x, %w accumulate(f32) {qtensor.placement =
        #qtensor.placement<strategy = row, ranks = 4, dim = 1,
          bounds = [0, 2816, 5632, 8320, 11008], group_policy = align,
          qparams = [0, 22, 22, 44, 44, 65, 65, 86]>} : ...
    %all_reduce = shard.all_reduce %y on @tp grid_axes = [0] : ...
    ```
  }];
  let options = [
    Option<"tp", "tp", "int64_t", "1", "Number of tensor-parallel ranks">,
    ListOption<"strategies", "strategy", "std::string",
               "Per-op strategy PATTERN:column|row|replicate, matched "
               "against the weight name (a glob if it has *, ? or [, else "
               "a substring; the first match wins); the transformer "
               "defaults apply where none matches">,
    Option<"groupPolicy", "group-policy", "::mlir::qt::GroupPolicy",
           "::mlir::qt::GroupPolicy::Error",
           "A K-slice cutting a group: error|align|replicate-boundary|repack",
           [{::mlir::qt::groupPolicyValues()}]>,
  ];
  let dependentDialects = ["::mlir::qt::QTensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect"];
}

def QTensorSelectLayoutsPass : Pass<"qtensor-select-layouts", "::mlir::ModuleOp"> {
  let summary = "Kernel admission per op and phase, repack plan, dispatch trace";
  let description = [{
    Evaluates the admission predicate (seed M8.9 0x07A) of every kernel in
    the capability registry (`qtc kernels`, docs/kernels.md) against each
    quantized `qtensor.linear`, per phase and for every rank of its
    `qtensor.placement`, and records the result as `qtensor.dispatch`:

    ```mlir
    %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch =
        #qtensor.dispatch<target = "sm_90", decode = "affine_mma_prefill_sm80",
                          prefill = "affine_mma_prefill_sm80",
                          layout = <family = "prefill_mma", ...>,
                          repack = prepacked>} : ...
    ```

    A weight in our own `logical` layout is retyped to the kernel layout and
    marked `qtensor.prepacked` (the exporter packs it); any other stored
    layout (e.g. GGUF's `ggml_block`) gets a load-time `qtensor.repack`.
    With a dynamic T the phase decides the T range (decode: 1..16, prefill:
    17 and up); a static T selects only the phase it belongs to.

    Where no kernel admits an op, `fallback` decides: `forbid` is an error
    that lists every candidate's reason; `warn` and `allow` select the
    full-dequant kernel, counted (statistic `fallbacks`) and marked in the
    trace. `layouts=shared` keeps one packed copy per weight for both
    phases; `per-phase` lets each phase take its best kernel and stores a
    secondary layout where they differ. The dispatch trace (seed 0x07B) is
    written to `trace-file` as a JSON list (one object per op and phase)
    and, with `remarks=true`, emitted as one remark per op.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"sm_90\"",
           "Target: sm_80, sm_86, sm_89, sm_90 or host">,
    Option<"phase", "phase", "::qtensor::kernels::PhaseChoice",
           "::qtensor::kernels::PhaseChoice::Both",
           "Phase to select for: decode, prefill or both",
           [{::mlir::qt::phaseChoiceValues()}]>,
    Option<"fallback", "fallback", "::qtensor::kernels::FallbackPolicy",
           "::qtensor::kernels::FallbackPolicy::Forbid",
           "Full-dequant fallback policy: forbid, warn or allow",
           [{::mlir::qt::fallbackPolicyValues()}]>,
    Option<"layouts", "layouts", "::qtensor::kernels::LayoutMode",
           "::qtensor::kernels::LayoutMode::Shared",
           "One packed layout per weight for both phases (shared) or one "
           "per phase where their kernels differ (per-phase)",
           [{::mlir::qt::layoutModeValues()}]>,
    Option<"traceFile", "trace-file", "std::string", "\"\"",
           "Write the dispatch trace as JSON to this file">,
    Option<"int8Activations", "int8-activations", "bool", "true",
           "Admit kernels that quantize their activations to int8 per 32 "
           "at T = 1 (the host GEMM's ggml-style path); false keeps them "
           "float">,
    Option<"activationQuant", "activation-quant",
           "::qtensor::kernels::ActivationQuant",
           "::qtensor::kernels::ActivationQuant::None",
           "How every affine linear's activations enter its matmul: none, "
           "or per token at run time (per_token_sym, per_token_asym: "
           "--quant w8a8), which only the W8A8 kernels admit",
           [{::mlir::qt::activationQuantValues()}]>,
    Option<"remarks", "remarks", "bool", "false",
           "Emit the dispatch trace of each op as a remark, and a summary">,
  ];
  let statistics = [
    Statistic<"numLinears", "linears", "Quantized linears given a dispatch">,
    Statistic<"numFallbacks", "fallbacks",
              "Phases that run the full-dequant fallback">,
    Statistic<"numPrepacked", "prepacked",
              "Weights retyped to a kernel layout for the exporter">,
    Statistic<"numLoadTimeRepacks", "load-time-repacks",
              "qtensor.repack ops inserted for the loader">,
    Statistic<"numSecondaryLayouts", "secondary-layouts",
              "Weights given a second packed layout for one phase">,
  ];
  let dependentDialects = ["::mlir::qt::QTensorDialect"];
}

#endif // QTENSOR_TRANSFORMS_PASSES_TD
