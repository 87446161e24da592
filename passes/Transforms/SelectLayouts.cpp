//===- SelectLayouts.cpp - Kernel admission, layouts, dispatch trace ------===//
//
// qtensor-select-layouts (seed M8.9 0x07): for every quantized linear, run
// the admission predicate of every registered kernel per phase and rank
// (lib/Kernels), pick a kernel per phase and the layout its weight is
// stored in, then
//   - record the decision as `qtensor.dispatch` on the linear,
//   - retype a logical weight to that layout and mark it
//     `qtensor.prepacked` (the exporter packs it), or insert a load-time
//     `qtensor.repack` for any other stored layout,
//   - report: an error listing every candidate's reason where nothing is
//     admitted and the policy forbids the fallback, a warning under
//     fallback=warn, the trace as remarks and as a JSON file.
// Analysis runs over the whole module before any IR changes, so ops that
// share a weight see the same stored layout.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Transforms/LinearSignature.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Kernels/DispatchTrace.h"
#include "qtensor/Kernels/Registry.h"
#include "qtensor/Support/FileIO.h"
#include "qtensor/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::qt {
#define GEN_PASS_DEF_QTENSORSELECTLAYOUTSPASS
#include "qtensor/Transforms/Passes.h.inc"
} // namespace mlir::qt

using namespace mlir;
using namespace mlir::qt;
namespace kernels = ::qtensor::kernels;
using json = nlohmann::ordered_json;

namespace {

/// The pass options, parsed.
struct Policy {
  kernels::Target target;
  std::vector<kernels::Phase> phases;
  kernels::FallbackPolicy fallback = kernels::FallbackPolicy::Forbid;
  kernels::LayoutMode layouts = kernels::LayoutMode::Shared;
};

/// Everything decided about one linear.
struct LinearDispatch {
  LinearOp op;
  std::string name;
  int64_t index = 0;
  kernels::OpSignature sig;
  kernels::DispatchPlan plan;
  /// Why no phase was selected (a static T outside the requested phases).
  std::string skipped;
  kernels::RepackKind repack = kernels::RepackKind::None;
  kernels::RepackKind secondaryRepack = kernels::RepackKind::None;
  /// The kernel layouts as attributes; null when the plan keeps the stored
  /// layout (or has no secondary copy).
  LayoutAttr layout, secondaryLayout;
};

/// What the pass did, for the summary remark and the pass statistics (which
/// are no-ops in LLVM builds without statistics).
struct Counts {
  unsigned linears = 0, fallbacks = 0, prepacked = 0, loadTimeRepacks = 0,
           secondaryLayouts = 0;
};

struct SelectLayoutsPass
    : public mlir::qt::impl::QTensorSelectLayoutsPassBase<SelectLayoutsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  FailureOr<Policy> parseOptions();
  LogicalResult analyze(LinearDispatch &d, const Policy &policy);
  LogicalResult report(const LinearDispatch &d, const Policy &policy);
  LogicalResult materialize(MutableArrayRef<LinearDispatch> dispatches);
  void setDispatchAttr(LinearDispatch &d, const Policy &policy);
  LogicalResult writeTrace(ArrayRef<LinearDispatch> dispatches,
                           const Policy &policy);

  const kernels::KernelRegistry &registry = kernels::builtinRegistry();
  Counts counts;
};

/// "a, b or c" for option errors.
std::string choices(ArrayRef<std::string> names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

FailureOr<Policy> SelectLayoutsPass::parseOptions() {
  ModuleOp module = getOperation();
  Policy policy;
  auto bad = [&](StringRef option, StringRef value,
                 ArrayRef<std::string> valid) {
    module.emitError() << "qtensor-select-layouts: unknown " << option << " '"
                       << value << "'; expected " << choices(valid);
    return failure();
  };
  std::optional<kernels::Target> target = kernels::parseTarget(this->target);
  if (!target)
    return bad("target", this->target, kernels::knownTargets());
  policy.target = *target;
  // The enum options were checked by the option parser.
  policy.phases = kernels::phasesOf(phase);
  policy.fallback = fallback;
  policy.layouts = layouts;
  return policy;
}

LogicalResult SelectLayoutsPass::analyze(LinearDispatch &d,
                                         const Policy &policy) {
  FailureOr<kernels::OpSignature> sig =
      getLinearSignature(d.op, d.name, registry);
  if (failed(sig))
    return failure();
  d.sig = std::move(*sig);
  // The compile's activation form is every affine linear's (w8a8).
  if (!d.sig.mixed)
    d.sig.activationQuant = activationQuant;

  kernels::DispatchQuery query{
      policy.target, policy.fallback, policy.layouts, {}, int8Activations};
  if (d.sig.tokens) {
    // A static T runs in one phase only.
    kernels::Phase only = kernels::phaseOfTokens(*d.sig.tokens);
    if (llvm::is_contained(policy.phases, only))
      query.phases.push_back(
          {only, kernels::TokenRange::exactly(*d.sig.tokens)});
    else
      d.skipped = "static T = " + std::to_string(*d.sig.tokens) +
                  " runs only in " + kernels::toString(only) +
                  ", which phase=" + kernels::toString(phase.getValue()) +
                  " leaves out";
  } else {
    for (kernels::Phase p : policy.phases)
      query.phases.push_back({p, kernels::phaseTokens(p)});
  }
  if (query.phases.empty())
    return success();
  d.plan = kernels::planDispatch(registry, d.sig, query);

  // The kernel layouts as attributes, with tile and padding for this shape.
  auto toLayoutAttr = [&](const kernels::LayoutId &id) -> LayoutAttr {
    auto descriptor = kernels::kernelLayoutDescriptor(
        registry, id, d.sig.descriptor.code.bits, {d.sig.n, d.sig.k});
    if (!descriptor) {
      d.op.emitOpError() << "weight '" << d.name
                         << "': " << descriptor.message();
      return {};
    }
    auto attr = toAttr(&getContext(), *descriptor);
    if (!attr) {
      d.op.emitOpError() << "weight '" << d.name << "': " << attr.message();
      return {};
    }
    return *attr;
  };
  // A mixed_2416 kernel reads the tensor's own layout: nothing to pack.
  if (d.sig.mixed && d.plan.layout)
    d.layout = d.op.getWeight().getType().getLayout();
  else if (d.plan.layout && !(d.layout = toLayoutAttr(*d.plan.layout)))
    return failure();
  if (d.plan.secondaryLayout &&
      !(d.secondaryLayout = toLayoutAttr(*d.plan.secondaryLayout)))
    return failure();
  return report(d, policy);
}

/// An error per phase nothing serves, a warning per fallback under
/// fallback=warn; both list every candidate that was not selected.
LogicalResult SelectLayoutsPass::report(const LinearDispatch &d,
                                        const Policy &policy) {
  LinearOp op = d.op;
  bool ok = true;
  for (const kernels::PhaseSelection &sel : d.plan.phases) {
    std::string where = std::string(kernels::toString(sel.query.phase)) + " (" +
                        kernels::toString(sel.query.tokens) + ") on " +
                        policy.target.name;
    std::optional<InFlightDiagnostic> diag;
    if (!sel.selected) {
      diag.emplace(op.emitError());
      *diag << "no kernel admits '" << d.name << "' for " << where
            << " with fallback=" << kernels::toString(policy.fallback);
      ok = false;
    } else if (sel.fallback &&
               policy.fallback == kernels::FallbackPolicy::Warn) {
      diag.emplace(op.emitWarning());
      *diag << "'" << d.name << "' runs the full-dequant fallback for " << where
            << " (fallback=warn)";
    }
    if (!diag)
      continue;
    for (const kernels::Candidate &c : sel.candidates)
      if (!sel.selected || c.kernel != sel.selected->id)
        diag->attachNote(op.getLoc())
            << c.kernel << (c.accepted ? " (admitted): " : ": ") << c.reason;
  }
  return success(ok);
}

/// Brings each weight into the layout of its kernels: prepacked when the
/// weight is an artifact tensor in our logical layout that every user
/// wants in the same layout, a load-time repack otherwise.
LogicalResult
SelectLayoutsPass::materialize(MutableArrayRef<LinearDispatch> all) {
  MLIRContext *context = &getContext();
  auto prepacked =
      context->getLoadedDialect<QTensorDialect>()->getPrepackedAttrHelper();
  llvm::MapVector<Value, SmallVector<LinearDispatch *>> byWeight;
  for (LinearDispatch &d : all)
    if (d.layout)
      byWeight[d.op.getWeight()].push_back(&d);

  for (auto &entry : byWeight) {
    Value weight = entry.first;
    ArrayRef<LinearDispatch *> users = entry.second;
    auto type = cast<QuantizedTensorType>(weight.getType());
    kernels::LayoutId stored =
        kernels::LayoutId::of(toDescriptor(type.getLayout()));
    auto weightOp = weight.getDefiningOp<WeightOp>();
    // Retyping the weight is safe only when every use is one of these
    // linears and they agree on the layout.
    bool agree = llvm::all_of(users, [&](LinearDispatch *d) {
      return d->layout == users.front()->layout;
    });
    bool exportable =
        weightOp && agree && llvm::range_size(weight.getUses()) == users.size();

    for (LinearDispatch *d : users) {
      kernels::LayoutId target = kernels::LayoutId::of(toDescriptor(d->layout));
      std::optional<kernels::RepackKind> kind =
          kernels::repackKind(registry, stored, target, exportable);
      if (!kind)
        return d->op.emitOpError()
               << "weight '" << d->name << "': no repack path from "
               << kernels::toString(stored) << " to "
               << kernels::toString(target);
      d->repack = *kind;
      // Already in place from an earlier run: say how it got there.
      if (*kind == kernels::RepackKind::None) {
        if (weightOp && prepacked.isAttrPresent(weightOp))
          d->repack = kernels::RepackKind::Prepacked;
        else if (weight.getDefiningOp<RepackOp>())
          d->repack = kernels::RepackKind::LoadTime;
      }
      if (d->plan.secondaryLayout)
        d->secondaryRepack =
            kernels::repackKind(registry, stored, *d->plan.secondaryLayout,
                                weightOp != nullptr)
                .value_or(kernels::RepackKind::LoadTime);
    }

    // Every user agrees when one is prepacked: retype the weight once.
    if (*kernels::repackKind(
            registry, stored,
            kernels::LayoutId::of(toDescriptor(users.front()->layout)),
            exportable) == kernels::RepackKind::Prepacked) {
      weight.setType(QuantizedTensorType::get(
          type.getShape(), type.getElementType(), type.getDescriptor(),
          users.front()->layout));
      prepacked.setAttr(weightOp, UnitAttr::get(context));
      ++counts.prepacked;
      continue;
    }
    // Otherwise one load-time repack per wanted layout, beside the weight.
    DenseMap<Attribute, Value> repacked;
    for (LinearDispatch *d : users) {
      if (d->repack != kernels::RepackKind::LoadTime ||
          d->op.getWeight().getType().getLayout() == d->layout)
        continue;
      Value &repack = repacked[d->layout];
      if (!repack) {
        OpBuilder builder(context);
        builder.setInsertionPointAfterValue(weight);
        auto packed =
            QuantizedTensorType::get(type.getShape(), type.getElementType(),
                                     type.getDescriptor(), d->layout);
        repack = RepackOp::create(builder, weight.getLoc(), packed, weight);
        ++counts.loadTimeRepacks;
      }
      d->op.getWeightMutable().assign(repack);
    }
  }
  return success();
}

void SelectLayoutsPass::setDispatchAttr(LinearDispatch &d,
                                        const Policy &policy) {
  MLIRContext *context = &getContext();
  StringAttr decode, prefill;
  bool decodeFallback = false, prefillFallback = false;
  for (const kernels::PhaseSelection &sel : d.plan.phases) {
    StringAttr id = StringAttr::get(context, sel.selected->id);
    if (sel.query.phase == kernels::Phase::Decode) {
      decode = id;
      decodeFallback = sel.fallback;
    } else {
      prefill = id;
      prefillFallback = sel.fallback;
    }
  }
  auto repack = static_cast<RepackKind>(static_cast<uint32_t>(d.repack));
  auto attr = DispatchAttr::get(context, policy.target.name, decode, prefill,
                                decodeFallback, prefillFallback,
                                d.op.getWeight().getType().getLayout(), repack,
                                d.secondaryLayout);
  context->getLoadedDialect<QTensorDialect>()->getDispatchAttrHelper().setAttr(
      d.op, attr);
}

LogicalResult SelectLayoutsPass::writeTrace(ArrayRef<LinearDispatch> dispatches,
                                            const Policy &policy) {
  json trace = json::array();
  for (const LinearDispatch &d : dispatches) {
    if (!d.skipped.empty()) {
      trace.push_back({{"op", d.name},
                       {"index", d.index},
                       {"phase", kernels::toString(phase.getValue())},
                       {"device", policy.target.name},
                       {"candidates", json::array()},
                       {"selected", nullptr},
                       {"fallback", false},
                       {"skipped", d.skipped}});
      continue;
    }
    if (d.plan.phases.empty())
      continue; // its signature was rejected with an error
    kernels::TraceOp op{
        d.name,   d.index,          &d.sig, &d.plan, policy.target.name,
        d.repack, d.secondaryRepack};
    for (json &entry : kernels::traceToJson(op))
      trace.push_back(std::move(entry));
  }
  if (::qtensor::Status s =
          ::qtensor::writeFileAtomically(traceFile, trace.dump(2) + "\n");
      !s)
    return getOperation().emitError()
           << "qtensor-select-layouts: cannot write the dispatch trace: "
           << s.message();
  return success();
}

void SelectLayoutsPass::runOnOperation() {
  ModuleOp module = getOperation();
  counts = Counts();
  FailureOr<Policy> policy = parseOptions();
  if (failed(policy))
    return signalPassFailure();

  std::vector<LinearDispatch> dispatches;
  module.walk([&](LinearOp op) {
    LinearDispatch d;
    d.op = op;
    d.index = static_cast<int64_t>(dispatches.size());
    d.name = getLinearName(op, d.index);
    dispatches.push_back(std::move(d));
  });

  bool ok = true;
  for (LinearDispatch &d : dispatches)
    ok &= succeeded(analyze(d, *policy));
  // A failed module keeps its IR; the trace still says why.
  if (ok)
    ok = succeeded(materialize(dispatches));
  if (ok) {
    for (LinearDispatch &d : dispatches) {
      if (d.plan.phases.empty())
        continue;
      setDispatchAttr(d, *policy);
      ++counts.linears;
      for (const kernels::PhaseSelection &sel : d.plan.phases)
        counts.fallbacks += sel.fallback;
      counts.secondaryLayouts += d.plan.secondaryLayout.has_value();
    }
  }
  numLinears = counts.linears;
  numFallbacks = counts.fallbacks;
  numPrepacked = counts.prepacked;
  numLoadTimeRepacks = counts.loadTimeRepacks;
  numSecondaryLayouts = counts.secondaryLayouts;
  if (!traceFile.empty() && failed(writeTrace(dispatches, *policy)))
    ok = false;

  if (remarks) {
    for (LinearDispatch &d : dispatches) {
      if (!d.skipped.empty()) {
        d.op.emitRemark() << "dispatch '" << d.name
                          << "': skipped: " << d.skipped;
      } else if (!d.plan.phases.empty()) {
        kernels::TraceOp op{
            d.name,   d.index,          &d.sig, &d.plan, policy->target.name,
            d.repack, d.secondaryRepack};
        d.op.emitRemark() << kernels::traceToText(op);
      }
    }
    module.emitRemark() << "qtensor-select-layouts on " << policy->target.name
                        << ": " << counts.linears << " linears, "
                        << counts.fallbacks << " fallbacks, "
                        << counts.prepacked << " prepacked, "
                        << counts.loadTimeRepacks << " load-time repacks, "
                        << counts.secondaryLayouts << " secondary layouts";
  }
  if (!ok)
    signalPassFailure();
}

} // namespace
