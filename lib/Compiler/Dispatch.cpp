//===- Dispatch.cpp - What the pipeline decided, per linear ---------------===//

#include "Dispatch.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"
#include "qtensor/Kernels/Registry.h"
#include "qtensor/Transforms/LinearSignature.h"

#include <map>

namespace qtensor::compiler {

Expected<DispatchResult>
readDispatch(mlir::ModuleOp module, const std::vector<SourceLinear> &linears,
             kernels::ActivationQuant activationQuant) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < linears.size(); ++i)
    index[linears[i].name] = i;

  DispatchResult result;
  result.linears.resize(linears.size());
  std::vector<bool> seen(linears.size(), false);
  std::string error;
  module.walk([&](mlir::qt::LinearOp op) {
    if (!error.empty())
      return;
    // The weight, through a load-time repack if one was inserted.
    mlir::Value w = op.getWeight();
    bool repacked = false;
    if (auto repack = w.getDefiningOp<mlir::qt::RepackOp>()) {
      w = repack.getInput();
      repacked = true;
    }
    auto weightOp = w.getDefiningOp<mlir::qt::WeightOp>();
    if (!weightOp) {
      error = "a qtensor.linear's weight is not a qtensor.weight";
      return;
    }
    auto it = index.find(weightOp.getName().str());
    if (it == index.end()) {
      error = "qtensor.weight \"" + weightOp.getName().str() +
              "\" is not a linear of the checkpoint";
      return;
    }
    // A weight read by several linears (a module may share one) is stored
    // once: their decisions must agree.
    LinearDispatch fresh;
    LinearDispatch &d = seen[it->second] ? fresh : result.linears[it->second];
    d.loadTimeRepack = repacked;

    auto *dialect =
        op->getContext()->getLoadedDialect<mlir::qt::QTensorDialect>();
    auto dispatch = dialect->getDispatchAttrHelper().getAttr(op);
    if (!dispatch) {
      error = it->first + ": qtensor-select-layouts recorded no dispatch";
      return;
    }
    if (dispatch.getSecondaryLayout()) {
      error = it->first + ": a second, per-phase layout is not stored by "
                          "this exporter (run with one shared layout)";
      return;
    }
    d.layout = mlir::qt::toDescriptor(dispatch.getLayout());
    if (auto k = dispatch.getDecode())
      d.decodeKernel = k.str();
    if (auto k = dispatch.getPrefill())
      d.prefillKernel = k.str();
    d.fallback = dispatch.getDecodeFallback() || dispatch.getPrefillFallback();
    result.fallbacks += int64_t(dispatch.getDecodeFallback()) +
                        int64_t(dispatch.getPrefillFallback());
    for (const auto &k : {d.decodeKernel, d.prefillKernel})
      if (k)
        result.kernelIds.insert(*k);

    // The binding: the signature the kernels were admitted for, as the
    // admission predicate read it, and the kernel of each compiled phase.
    mlir::FailureOr<kernels::OpSignature> sig =
        mlir::qt::getLinearSignature(op, it->first, kernels::builtinRegistry());
    if (mlir::failed(sig)) {
      error = it->first + ": its signature cannot be read back";
      return;
    }
    artifact::OpBinding &b = d.binding;
    b.op = it->first;
    b.n = sig->n;
    b.k = sig->k;
    b.topology = sig->topology;
    b.ranks = sig->ranks;
    b.biasAfterReduce = sig->biasAfterReduce;
    b.activation = sig->activation;
    b.accumulator = sig->accumulator;
    b.output = sig->output;
    b.epilogue = sig->epilogue;
    // The compile's activation form is every affine linear's (select-
    // layouts' activation-quant); the signature read back from the IR does
    // not hold it.
    if (!sig->mixed)
      b.activationQuant = activationQuant;
    if (d.decodeKernel)
      b.phases.push_back({kernels::Phase::Decode, *d.decodeKernel,
                          dispatch.getDecodeFallback()});
    if (d.prefillKernel)
      b.phases.push_back({kernels::Phase::Prefill, *d.prefillKernel,
                          dispatch.getPrefillFallback()});

    if (auto placement = dialect->getPlacementAttrHelper().getAttr(op)) {
      using Kind = WeightPlacement::Kind;
      switch (placement.getStrategy()) {
      case mlir::qt::ShardStrategy::Column:
        d.placement.kind = Kind::Column;
        break;
      case mlir::qt::ShardStrategy::Row:
        d.placement.kind = Kind::Row;
        break;
      case mlir::qt::ShardStrategy::Replicated:
        d.placement.kind = Kind::Replicated;
        break;
      }
      if (placement.getGroupPolicy() ==
              mlir::qt::GroupPolicy::ReplicateBoundary ||
          placement.getGroupPolicy() == mlir::qt::GroupPolicy::Repack) {
        error =
            it->first + ": group policy " +
            mlir::qt::stringifyGroupPolicy(placement.getGroupPolicy()).str() +
            " is not stored by this exporter";
        return;
      }
      auto bounds = placement.getBounds().asArrayRef();
      d.placement.bounds.assign(bounds.begin(), bounds.end());
    }
    if (seen[it->second]) {
      const LinearDispatch &first = result.linears[it->second];
      if (!(d.layout == first.layout) ||
          d.placement.kind != first.placement.kind ||
          d.placement.bounds != first.placement.bounds ||
          d.decodeKernel != first.decodeKernel ||
          d.prefillKernel != first.prefillKernel || d.binding != first.binding)
        error = it->first + ": the linears that read this weight got "
                            "different placements or kernels; it is stored "
                            "once";
      return;
    }
    seen[it->second] = true;
  });
  if (!error.empty())
    return makeError(error);
  for (size_t i = 0; i < linears.size(); ++i)
    if (!seen[i])
      return makeError(linears[i].name, ": no qtensor.linear uses it after "
                                        "the pipeline");
  return result;
}

} // namespace qtensor::compiler
