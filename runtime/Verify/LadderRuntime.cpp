//===- LadderRuntime.cpp - L5: what the runtime actually launches ---------===//
//
// The rest of L5 checks the compiler's decisions on paper; this part
// watches the runtime carry them out. Every rank is loaded as a user would
// load it, each op is called once per planned phase (at that phase's
// smallest T), and the execution trace must show, for every (op, phase),
// the kernel the compiler selected (by registry id) and a full-dequant
// fallback exactly where one was selected; the fallback ledger must hold
// no full-weight buffer when none was.
//
//===----------------------------------------------------------------------===//

#include "LadderLevels.h"

#include "qtensor/Kernels/Registry.h"
#include "qtensor/Runtime/Activations.h"
#include "qtensor/Runtime/Loader.h"

namespace qtensor::verify::detail {

using namespace qtensor::runtime;

Expected<std::string> observeRuntime(
    const artifact::Artifact &a, const LadderOptions &options,
    const std::map<std::pair<std::string, std::string>, SelectedKernel>
        &selected) {
  size_t launches = 0, skipped = 0;
  std::string backend;
  for (int64_t rank = 0; rank < a.manifest().topology.tp; ++rank) {
    LoadOptions o;
    o.code = options.code;
    o.rank = rank;
    o.warmup = false;
    // The GPU where there is one; its host twins, said so, where not.
    o.backend = BackendChoice::Auto;
    o.backendFallback = kernels::FallbackPolicy::Allow;
    QTENSOR_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> model,
                             loadModel(a.directory(), o));
    backend = model->backend();
    bool plannedFallback = false;
    // A GPU artifact's host twins emulate the GPU per lane: seconds per
    // call at 7B layer sizes, which L3 already spent. Large ops are then
    // observed only with --exhaustive.
    const bool twins = model->backendFallback().has_value();
    for (const OpPlan &op : model->plan().ops)
      for (const PhasePlan &p : op.phases) {
        plannedFallback |= p.fallback;
        if (twins && !options.exhaustive &&
            op.n() * op.k() >= options.sampleAboveWeights) {
          ++skipped;
          continue;
        }
        int64_t t = 1;
        if (p.chunkRows) {
          // A chunked prefill (mixed_2416): two chunks, the second short.
          t = p.chunkRows + 1;
        } else if (!p.instances.empty()) {
          t = p.instances.front()->tokens.min;
          for (const KernelInstance *k : p.instances)
            t = std::min(t, k->tokens.min);
        } else if (p.phase == kernels::Phase::Prefill) {
          t = kernels::kMaxDecodeTokens + 1;
        }
        const std::string where =
            "rank " + std::to_string(rank) + ", " + op.tensor + ", " +
            kernels::toString(p.phase) + " (T=" + std::to_string(t) + ")";
        QTENSOR_ASSIGN_OR_RETURN(
            HostTensor x,
            deterministicActivations(op.activation, t, op.k(),
                                     kDefaultActivationSeed, op.tensor));
        auto y = model->run(op.tensor, x);
        if (!y)
          return makeError(where, ": ", y.message());
        const DispatchRecord &call = model->trace().all().back();
        if (call.op != op.tensor || call.phase != p.phase)
          return makeError(where, ": the runtime recorded ", call.op, " ",
                           kernels::toString(call.phase), " instead");
        auto it = selected.find({op.op, kernels::toString(p.phase)});
        if (it == selected.end())
          return makeError(where, ": ran, but the dispatch trace selected "
                                  "nothing for it");
        if (call.fallback != it->second.fallback)
          return makeError(
              where, ": the runtime ran ",
              call.fallback ? "the full-dequant fallback" : "a native kernel",
              ", the compiler selected ",
              it->second.fallback ? "the fallback" : it->second.kernel);
        if (!call.fallback) {
          const KernelInstance *ran = nullptr;
          for (const KernelInstance *k : p.instances)
            if (k->id == call.kernel)
              ran = k;
          // Without a GPU, a GPU kernel's host twin stands in for it.
          const kernels::KernelRegistry &registry = kernels::builtinRegistry();
          const kernels::KernelCapability *chosen =
              registry.findKernel(it->second.kernel);
          const kernels::KernelCapability *twin =
              chosen ? registry.hostTwin(*chosen) : nullptr;
          if (!ran || (ran->registryId != it->second.kernel &&
                       !(twin && ran->registryId == twin->id)))
            return makeError(where, ": the runtime launched ", call.kernel,
                             ran ? " (" + ran->registryId + ")" : "",
                             ", the compiler selected ", it->second.kernel);
        }
        ++launches;
      }
    if (!plannedFallback && model->ledger().peak(MemoryCategory::Fallback) != 0)
      return makeError("rank ", rank, ": a full-dequant buffer of ",
                       model->ledger().peak(MemoryCategory::Fallback),
                       " bytes was held with no fallback planned");
  }
  return std::to_string(launches) + " (op, phase) launches observed on " +
         backend +
         (skipped ? " (" + std::to_string(skipped) +
                        " of large ops' host twins not rerun: L3 ran them; "
                        "--exhaustive reruns them)"
                  : std::string()) +
         ", each the selected kernel (or its host twin), no full-weight "
         "dequant buffer unless a fallback was selected";
}

} // namespace qtensor::verify::detail
