//===- DecoderGraph.h - The whole decoder as the graph ----------*- C++ -*-===//
//
// The graph contract of a checkpoint with a decoder program: one
// `func.func @forward(%ids, %pos, %k_cache_0, %v_cache_0, ...)` that
// computes the schedule of docs/model.md on tensors. The quantized linears
// are `qtensor.linear` ops; every other op (embedding, norms, RoPE, the KV
// cache stores, attention, the gate, residual adds, float linears, argmax)
// is a `func.call` to a private declaration named after the model kernel
// that runs it (ModelKernelSpec::name) and carrying its spec, its weights
// `qtensor.weight` ops.
// The KV cache is threaded through as values: RoPE for k and the V store
// take a layer's cache and return it with the new rows.
//
// Each op carries its part of the program (`qtensor.part`, and
// `qtensor.layer` inside a layer) and @forward the decoder's config
// (`qtensor.decoder`), so exportDecoderProgram reads the program the
// artifact records (program.json) back out of the final module: what the
// passes did to the graph is what the runtime runs.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_DECODERGRAPH_H
#define QTENSOR_LIB_COMPILER_DECODERGRAPH_H

#include "DecoderPlan.h"
#include "GraphBuilder.h"

#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Support/Expected.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace qtensor::compiler {

/// The attributes the decoder graph carries.
inline constexpr const char *kDecoderAttr = "qtensor.decoder";
inline constexpr const char *kPartAttr = "qtensor.part";
inline constexpr const char *kLayerAttr = "qtensor.layer";
/// On each model kernel's declaration: its ModelKernelSpec (JSON spelling).
inline constexpr const char *kModelKernelAttr = "qtensor.model_kernel";

/// The decoder of `program` (as planned) as the graph, each model kernel
/// declared with its spec from `kernels`. The quantized linears are those of
/// `linears` with GraphLinear::logical set; every other weight is looked up
/// among the checkpoint's plain tensors. Errors name the tensor or kernel
/// that does not fit.
Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildDecoderGraph(mlir::MLIRContext &context, const Checkpoint &checkpoint,
                  const artifact::DecoderProgram &program,
                  const std::vector<ModelKernelSpec> &kernels,
                  const std::vector<GraphLinear> &linears);

/// Points the embedding at `tensor` gathered by the model kernel `kernel`:
/// what embedFromHeadCodes or embedFromTableCodes decided, done to the
/// graph. Without `quantizedTable`, `tensor` is a quantized weight of the
/// graph (the tied head); with it, the embedding's own table, whose weight
/// op is retyped to the quantized tensor type it is stored as.
Status gatherEmbeddingFrom(mlir::ModuleOp module, const std::string &tensor,
                           const ModelKernelSpec &kernel,
                           mlir::Type quantizedTable = {});

/// The model kernels the graph calls, from their declarations' specs (each
/// spec's name must be the one it is declared under): what the kernel stage
/// builds. Errors name the declaration.
Expected<std::vector<ModelKernelSpec>> graphModelKernels(mlir::ModuleOp module);

/// The decoder program the graph computes: the config from @forward, each
/// part's tensors and kernel symbols from its op. The artifact's files
/// (kernel library, CPU level, tokenizer) are the caller's to set. Errors
/// name the part or layer that is missing or given twice.
Expected<artifact::DecoderProgram> exportDecoderProgram(mlir::ModuleOp module);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_DECODERGRAPH_H
