//===- Plan.h - Which kernel runs which op, decided up front ----*- C++ -*-===//
//
// Seed M8.9 0x05D: only after structural and semantic validation does the
// loader select placement and kernels, and it does so before it
// materializes anything, so HBM is never filled with an object that is
// later rejected or silently dequantized. planRun works on the manifest's
// records alone (tensors, kernel entries, op bindings) and decides:
//
//  - which rank this process is (`rank`), hence which manifest tensors are
//    local: `<name>@rank<r>` for sharded weights, unsuffixed ones for all;
//  - which ops run (all, or the ones named);
//  - per op and phase, which kernel instance, re-admitted with THIS build's
//    registry (lib/Kernels) on THIS backend's target: the artifact says what
//    was admitted at compile time; the runtime proves it still is;
//  - where admission fails, or the artifact itself chose the full-dequant
//    fallback, what the fallback policy says: forbid (an error naming the
//    op, phase, kernel and every reason), warn (run the fallback, warn) or
//    allow (run it); a fallback is counted either way, never silent. The
//    policy is the op binding's (the one it was compiled with) unless the
//    caller overrides it.
//
// What a kernel entry claims about the op is checked against the manifest
// tensor it binds (N, K, activation and output dtypes, bias, code width and
// sign, group size, scale dtype, the packed word count of its layout, scale
// and zero-point shapes) and against the op's binding (the registry kernel
// it implements). A mismatch is a corrupt artifact and always an error; only an
// admission rejection is subject to the fallback policy. On a GPU, a cubin
// entry is used when built for exactly this device, its PTX twin otherwise.
// A row-parallel slice adds no bias: its kernels write partial sums and the
// bias follows the all-reduce (docs/kernel-abi.md). A mixed_2416 weight
// (Descriptor/Mixed2416.h) is planned the same way against its own record
// (KernelEntry::mixed) and its own admission predicate
// (Kernels/Mixed2416Admission.h), on one rank; its prefill runs through
// the decode GEMV in chunks of at most 16 rows.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_PLAN_H
#define QTENSOR_RUNTIME_PLAN_H

#include "qtensor/Formats/Manifest.h"
#include "qtensor/Kernels/Admission.h"
#include "qtensor/Runtime/KernelInstance.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace qtensor::runtime {

/// One phase of one op: a native kernel instance, or the fallback.
struct PhasePlan {
  kernels::Phase phase = kernels::Phase::Decode;
  /// Instances that may serve this phase (T ranges), admitted; empty for
  /// the fallback.
  std::vector<const KernelInstance *> instances;
  bool fallback = false;
  /// "admitted" details, or why the fallback runs.
  std::string reason;
  /// The stored layout differs from the kernel's: repacked at load.
  bool loadTimeRepack = false;
  /// Non-zero: T beyond the instances' range runs as calls of at most this
  /// many rows (a mixed_2416 op's prefill, through its decode GEMV, whose
  /// T is static up to 16).
  int64_t chunkRows = 0;
};

struct OpPlan {
  std::string tensor; ///< manifest tensor (with @rank<r> when sharded)
  std::string op;     ///< the binding's op name (the weight)
  const artifact::TensorEntry *entry = nullptr;
  /// A mixed_2416 weight's descriptor (in the manifest); null for affine.
  const Mixed2416Descriptor *mixed = nullptr;
  kernels::RankSlice slice; ///< what this rank holds
  kernels::OpSignature signature;
  FloatType activation = FloatType::F16;
  FloatType output = FloatType::F16;
  /// The manifest tensor added after the matmul, if this rank adds one.
  std::optional<std::string> bias;
  std::vector<PhasePlan> phases;

  int64_t n() const { return slice.n; }
  int64_t k() const { return slice.k; }
  /// The phase plan for T rows, or nullptr when none serves it.
  const PhasePlan *phaseFor(int64_t tokens) const;
  /// The native kernel that runs T rows, or nullptr (none, or the
  /// fallback), as LoadedModel::callInto picks it.
  const KernelInstance *instanceFor(int64_t tokens) const;
  /// Whether that kernel quantizes its activations (to int8 per block).
  bool quantizesActivations(int64_t tokens) const;
  /// The X [T, K] the kernel that runs T rows multiplies, for a float64
  /// reference: `x` itself, or x quantized per block where that kernel
  /// quantizes its activations (KernelCapability::activationBlock).
  std::vector<double> kernelActivations(std::vector<double> x,
                                        int64_t tokens) const;
};

/// The same for a given kernel.
std::vector<double> kernelActivations(std::vector<double> x, int64_t tokens,
                                      const KernelInstance &kernel);

struct PlanOptions {
  int64_t rank = 0;
  /// The device the kernels must run on: host, or the GPU's sm_XY.
  kernels::Target target{"host", kernels::Backend::Host, 0};
  /// Overrides the policy recorded in each op's binding.
  std::optional<kernels::FallbackPolicy> fallback;
  /// Ops to run (bound op or manifest tensor names); empty: every op.
  std::vector<std::string> ops;
  /// Cubin entries may be chosen (a trusted artifact's machine code);
  /// otherwise GPU kernels run from PTX (ArtifactCode.h).
  bool cubins = false;
};

struct RunPlan {
  int64_t rank = 0, tp = 1;
  kernels::Target target;
  kernels::FallbackPolicy policy = kernels::FallbackPolicy::Forbid;
  /// "override", "artifact" (every binding's), "artifact, per op" (the
  /// bindings differ: `policy` is the most permissive) or "default" (no
  /// quantized op).
  std::string policySource;
  std::vector<OpPlan> ops;
  std::vector<std::string> warnings;
  /// Files the plan reads: the shards of its tensors, its kernels' files.
  std::set<std::string> files;

  /// (op, phase) pairs that run the full-dequant fallback.
  size_t fallbacks() const;
  const OpPlan *find(const std::string &name) const;
};

/// Decides the plan from metadata alone (see above).
Expected<RunPlan> planRun(const artifact::Manifest &manifest,
                          const std::vector<KernelInstance> &instances,
                          const PlanOptions &options);

/// "name@rank3" -> ("name", 3); any other name -> (name, none).
std::pair<std::string, std::optional<int64_t>>
splitRankName(const std::string &tensor);

/// The bias tensor a sharded or whole weight adds, by the exporter's
/// naming: "<p>.weight" -> "<p>.bias" ("<name>.bias" otherwise), with the
/// weight's "@rank<r>" suffix for column slices.
std::string biasTensorName(const std::string &op, int64_t rank,
                           bool rankSuffix);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_PLAN_H
