//===- EmbeddingTable.cpp - An untied embedding kept as its codes ---------===//

#include "EmbeddingTable.h"

#include "DecoderGraph.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Kernels/Admission.h"
#include "qtensor/Kernels/Registry.h"
#include "qtensor/Numerics/KernelLayout.h"

#include <algorithm>

namespace qtensor::compiler {

Expected<std::optional<ExportLinear>>
keepEmbeddingCodes(mlir::ModuleOp module, const Checkpoint &checkpoint,
                   DecoderPlan &plan, const QuantSpec &spec, FloatType element,
                   int64_t tp, std::string &why) {
  const std::string &name = plan.program.embed;
  const std::vector<SourceTensor> &others = checkpoint.others();
  auto table =
      std::find_if(others.begin(), others.end(),
                   [&](const SourceTensor &t) { return t.name == name; });
  if (table == others.end()) {
    why = "the embedding is not a tensor of its own";
    return std::optional<ExportLinear>();
  }
  auto source = std::make_shared<SourceLinear>();
  source->layer = -1;
  source->role = "embedding";
  source->name = name;
  source->weight = *table;
  if (!keepsStoredCodes(*source)) {
    why = "the checkpoint stores it as " + table->dtype + ", without codes";
    return std::optional<ExportLinear>();
  }
  const artifact::DecoderProgram &p = plan.program;
  const std::vector<const artifact::ProgramLinear *> linears = p.linears();
  if (std::any_of(linears.begin(), linears.end(),
                  [&](const artifact::ProgramLinear *l) {
                    return l->tensor == name;
                  })) {
    why = "a linear of the program reads the same table as its weight";
    return std::optional<ExportLinear>();
  }
  if (tp != 1) {
    // Today a tensor-parallel compile writes no program; when one does,
    // which ranks map the table's shard is its question.
    why = "a tensor-parallel embedding stays plain";
    return std::optional<ExportLinear>();
  }
  Expected<QuantizedTensorDescriptor> logical =
      describeLinear(*source, spec, element);
  if (!logical) {
    why = logical.message();
    return std::optional<ExportLinear>();
  }
  // Stored as a GEMV weight is: rows of 16-byte chunks, a row per token id.
  const KernelLayoutId id = kernelLayoutId(KernelLayoutKind::DecodeGemv);
  Expected<LayoutDescriptor> layout = kernels::kernelLayoutDescriptor(
      kernels::builtinRegistry(),
      {std::string(id.family), id.version, std::string(id.encoding)},
      logical->descriptor.code.bits, logical->shape);
  if (!layout) {
    why = layout.message();
    return std::optional<ExportLinear>();
  }
  QuantizedTensorDescriptor stored = *logical;
  stored.layout = *layout;
  DecoderPlan planned = plan;
  if (!embedFromTableCodes(planned, stored, why))
    return std::optional<ExportLinear>();
  auto gather =
      std::find_if(planned.kernels.begin(), planned.kernels.end(),
                   [&](const ModelKernelSpec &k) {
                     return k.symbol() == planned.program.kernels.embed;
                   });
  if (gather == planned.kernels.end())
    return makeError("the planned embedding kernel ",
                     planned.program.kernels.embed, " has no spec (a qtc bug)");
  auto type = mlir::qt::toType(module.getContext(), stored);
  if (!type)
    return makeError("the embedding ", name, ": ", type.message());
  QTENSOR_TRY(gatherEmbeddingFrom(module, name, *gather, *type));
  plan = std::move(planned);
  ExportLinear e;
  e.source = source.get();
  e.ownedSource = std::move(source);
  e.use = artifact::TensorUse::Embedding;
  e.logical = *logical;
  e.layout = stored.layout;
  return std::optional<ExportLinear>(std::move(e));
}

} // namespace qtensor::compiler
