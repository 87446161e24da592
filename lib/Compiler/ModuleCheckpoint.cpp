//===- ModuleCheckpoint.cpp - The weights of an MLIR module ---------------===//
//
// `qtc compile MODULE.mlir --weights FILE`: the module names its weights
// (ModuleInput.cpp finds them); this matches each name against the weights
// file, checks the shape and dtype the module declares, and decides which
// are quantized. Nothing here knows MLIR.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "CheckpointDetail.h"

#include "qtensor/Support/MappedFile.h"

#include <algorithm>
#include <map>
#include <set>

namespace qtensor::compiler {
namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string storedDType(const SourceTensor &t) {
  return std::string(safetensors::dtypeName(Checkpoint::storedPlainDType(t)));
}

std::optional<FloatType> activationType(const std::string &dtype) {
  if (dtype == "F16")
    return FloatType::F16;
  if (dtype == "BF16")
    return FloatType::BF16;
  return std::nullopt;
}

} // namespace

Expected<Checkpoint>
Checkpoint::openForModule(const std::string &modulePath,
                          const std::string &weights,
                          const std::vector<ModuleReference> &references,
                          WeightSelection &selection) {
  Checkpoint cp;
  cp.kind = "mlir";
  cp.cfg.architecture = "mlir";
  std::string base = modulePath.substr(modulePath.find_last_of('/') + 1);
  cp.cfg.name = base.substr(0, base.find('.'));
  cp.inputs.push_back(modulePath);

  std::vector<SourceTensor> all;
  if (endsWith(weights, ".gguf"))
    QTENSOR_TRY(cp.listGGUF(weights, all));
  else
    QTENSOR_TRY(cp.listSafetensors(weights, endsWith(weights, ".json"), all));
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < all.size(); ++i)
    byName[all[i].name] = i;

  std::set<std::string> referenced;
  for (const ModuleReference &ref : references) {
    auto it = byName.find(ref.name);
    if (it == byName.end())
      return makeError(modulePath, ": qtensor.weight \"", ref.name,
                       "\" is not a tensor of ", weights);
    const SourceTensor &t = all[it->second];
    if (t.shape != ref.shape)
      return makeError(modulePath, ": qtensor.weight \"", ref.name, "\" is ",
                       detail::shapeText(ref.shape), " ", ref.dtype,
                       " in the module, but ", weights, " stores ",
                       detail::shapeText(t.shape), " ", t.dtype);
    if (!referenced.insert(ref.name).second)
      continue; // one decision per tensor, however often it is referenced
    if (ref.codes) {
      QTENSOR_TRY(
          cp.addModuleQuantized(modulePath, weights, ref, t, selection));
      continue;
    }

    // What the graph shows decides: a 2-D weight a contraction reads is a
    // linear, unless it is one of the well-known heads or embedding tables
    // (kept by default, like a checkpoint's); anything else is named by
    // the name rules, and can never be a head.
    bool linear = ref.contraction && ref.shape.size() == 2;
    TensorKind kind = kindFromName(ref.name);
    if (linear)
      kind = kind == TensorKind::Head    ? TensorKind::Head
             : isEmbeddingName(ref.name) ? TensorKind::Embedding
                                         : TensorKind::Linear;
    else if (kind == TensorKind::Head)
      kind = TensorKind::Other;
    QTENSOR_ASSIGN_OR_RETURN(SelectionDecision d,
                             selection.decide(ref.name, kind));
    if (d.quantize) {
      if (!linear)
        return makeError(modulePath, ": ", ref.name, " ",
                         detail::shapeText(ref.shape), " is selected (",
                         d.reason,
                         ") but is not a 2-D weight a contraction "
                         "reads: only linear weights are quantized");
      std::optional<FloatType> activation = activationType(ref.dtype);
      if (!activation)
        return makeError(modulePath, ": ", ref.name, " is ", ref.dtype,
                         " in the module; the quantized linears take f16 or "
                         "bf16 activations (w4a16, w8a16): declare the "
                         "weight f16 or bf16, or keep it with --exclude");
      SourceLinear linear;
      linear.layer = -1;
      linear.role = kind == TensorKind::Head ? "lm_head" : "linear";
      linear.name = ref.name;
      linear.weight = t;
      linear.elementType = *activation;
      cp.lin.push_back(std::move(linear));
      continue;
    }
    // Kept: the graph reads it with the module's type, so it must be
    // stored that way.
    if (storedDType(t) != ref.dtype)
      return makeError(modulePath, ": qtensor.weight \"", ref.name, "\" is ",
                       ref.dtype, " in the module, but ", weights,
                       " would store it as ", storedDType(t), " (", d.reason,
                       ": kept as stored)");
    cp.rest.push_back(t);
    cp.keptList.push_back({t.name, kind, d.reason});
  }
  for (const SourceTensor &t : all)
    if (!referenced.count(t.name))
      cp.unused.push_back(t.name);
  QTENSOR_TRY(selection.checkAllPatternsUsed(modulePath));
  cp.digest = SourceDigest::start(cp.inputs);
  return cp;
}

Status Checkpoint::addModuleQuantized(const std::string &modulePath,
                                      const std::string &weights,
                                      const ModuleReference &ref,
                                      const SourceTensor &stored,
                                      WeightSelection &selection) {
  const std::string where = modulePath + ": " + ref.name;
  if (!ref.contraction)
    return makeError(where, " is quantized in the module but no contraction "
                            "reads it: only linear weights are compiled");
  if (stored.dtype != ref.dtype || !stored.view)
    return makeError(where, " holds ",
                     ref.dtype == "I8" ? "signed" : "unsigned",
                     " codes (the module's quantized type), so ", weights,
                     " must store it as ", ref.dtype, ", not ", stored.dtype);
  const ModuleReference::Codes &c = *ref.codes;
  auto source = std::make_shared<PackedSource>();
  source->module = ref.name;
  source->descriptor = c.descriptor;
  const safetensors::TensorView *view = stored.view;
  source->unpack = [view, c,
                    name = ref.name]() -> Expected<hfquant::LogicalParts> {
    const bool isSigned = c.descriptor.descriptor.code.isSigned;
    const CodeBounds bounds = codeBounds(c.descriptor.descriptor);
    const int64_t lo = bounds.min, hi = bounds.max;
    hfquant::LogicalParts parts;
    parts.codes.resize(size_t(view->byteSize()));
    for (size_t i = 0; i < parts.codes.size(); ++i) {
      int32_t q =
          isSigned ? int32_t(int8_t(view->data[i])) : int32_t(view->data[i]);
      if (q < lo || q > hi)
        return makeError(name, ": code ", q, " at flat index ", uint64_t(i),
                         " is outside the range [", lo, ", ", hi,
                         "] its quantized type declares");
      parts.codes[i] = q;
    }
    parts.scales = c.scales;
    parts.zeros = c.zeros;
    return parts;
  };
  source->release = [view] {
    releaseMappedPages(view->data, size_t(view->byteSize()));
  };
  SourceLinear linear;
  linear.layer = -1;
  linear.role = "linear";
  linear.name = ref.name;
  linear.weight = stored;
  linear.weight.view = nullptr; // read through the packed source
  linear.weight.packed = source.get();
  linear.weight.dtype = ref.dtype + " codes";
  linear.elementType = c.descriptor.elementType;
  packedSources.push_back(std::move(source));
  QTENSOR_ASSIGN_OR_RETURN(
      SelectionDecision d,
      selection.decideStored(linear.name, TensorKind::Linear,
                             linear.weight.dtype,
                             &linear.weight.packed->descriptor.descriptor));
  if (!d.quantize)
    return makeError(where,
                     " is quantized in the module, so it is compiled "
                     "with its codes; it cannot be kept in float (",
                     d.reason, ")");
  lin.push_back(std::move(linear));
  return Status::ok();
}

Status Checkpoint::attachBias(const std::string &linear,
                              const std::string &bias,
                              const std::string &storedName) {
  auto l = std::find_if(lin.begin(), lin.end(), [&](const SourceLinear &s) {
    return s.name == linear;
  });
  if (l == lin.end())
    return makeError(linear, ": not a quantized linear");
  for (const SourceLinear &other : lin)
    if (other.bias && other.bias->name == bias)
      return makeError(bias, " is the bias of both ", other.name, " and ",
                       linear, "; a bias is stored with one linear");
  auto t = std::find_if(rest.begin(), rest.end(),
                        [&](const SourceTensor &s) { return s.name == bias; });
  if (t == rest.end())
    return makeError(bias, ", the bias of ", linear,
                     ", is not a kept tensor of the weights file");
  if (t->shape != std::vector<int64_t>{l->n()})
    return makeError(bias, ", the bias of ", linear, ", is ",
                     detail::shapeText(t->shape), ", expected [", l->n(), "]");
  l->bias = *t;
  l->bias->name = storedName; // the data is read through the view
  rest.erase(t);
  keptList.erase(
      std::remove_if(keptList.begin(), keptList.end(),
                     [&](const KeptTensor &k) { return k.name == bias; }),
      keptList.end());
  return Status::ok();
}

} // namespace qtensor::compiler
