//===- Admission.h - Admission predicate and kernel selection ---*- C++ -*-===//
//
// admit() is the predicate of seed M8.9 0x07A: a kernel is admissible for an
// op in a phase on a target only if every clause holds, and each clause that
// fails says why ("group size 96 not in {32, 64, 128}", "local K 2752 not a
// multiple of tile 128 on rank 3", "needs sm_80, target is host").
// planDispatch() runs it for every kernel and phase, picks one kernel per
// phase and the layout the weight is stored in, and keeps every candidate
// with its reason: the dispatch trace of 0x07B. The compiler evaluates it at
// compile time and the runtime again at load time, on the same structs.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_KERNELS_ADMISSION_H
#define QTENSOR_KERNELS_ADMISSION_H

#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Kernels/Capability.h"

#include <optional>
#include <string>
#include <vector>

namespace qtensor::kernels {

/// What one rank holds of an [N, K] weight.
struct RankSlice {
  int64_t nOffset = 0, n = 0;
  int64_t kOffset = 0, k = 0;
  bool operator==(const RankSlice &o) const {
    return nOffset == o.nOffset && n == o.n && kOffset == o.kOffset && k == o.k;
  }
};

/// The requested operator signature of one quantized linear.
struct OpSignature {
  std::string representation = "affine"; ///< the descriptor family
  AffineDescriptor descriptor;           ///< when representation = affine
  /// When representation = mixed_2416: the tensor's whole contract. Such
  /// an op is planned by planMixed2416Dispatch (Mixed2416Admission.h).
  std::optional<Mixed2416Descriptor> mixed;
  LayoutDescriptor layout; ///< as stored
  FloatType activation = FloatType::F16;
  /// How the op's activations enter the matmul (`--quant w8a8`: per token,
  /// by the kernel's own quantizer); a kernel admits only the ones in its
  /// KernelCapability::activationQuants.
  ActivationQuant activationQuant = ActivationQuant::None;
  FloatType accumulator = FloatType::F32;
  FloatType output = FloatType::F16;
  Epilogue epilogue = Epilogue::None;
  int64_t n = 0, k = 0;
  /// T when every leading dimension of the input is static.
  std::optional<int64_t> tokens;
  Topology topology = Topology::Single;
  /// Ranks re-group from their own K offset (group_policy = repack).
  bool regrouped = false;
  /// Row-parallel with a bias: the bias is added once, after the
  /// all-reduce (qtensor-place-shards moved it off the linear), by no
  /// kernel. Recorded so the runtime needs no other evidence of it.
  bool biasAfterReduce = false;
  std::vector<RankSlice> ranks; ///< one entry per rank; at least one
};

/// "affine si4 twos_complement zp=none g128 scale=f16 act=f16 acc=f32
/// out=f16 epilogue=none layout=(logical, 1, lsb_first)".
std::string describeRequest(const OpSignature &sig);

/// The outcome of the predicate for one kernel: every failed clause.
struct Verdict {
  std::vector<std::string> reasons;
  bool accepted() const { return reasons.empty(); }
  /// The reasons joined with "; ".
  std::string reason() const;
};

/// One phase's query: which T the op sees.
struct PhaseQuery {
  Phase phase = Phase::Decode;
  TokenRange tokens;
};

/// Evaluates every clause of `kernel` against `sig` for `phase` on `target`.
/// `registry` supplies the repack paths the layout clause may use.
Verdict admit(const KernelRegistry &registry, const KernelCapability &kernel,
              const OpSignature &sig, const PhaseQuery &phase,
              const Target &target, FallbackPolicy policy);

/// One candidate as the trace shows it.
struct Candidate {
  std::string kernel;
  bool accepted = false; ///< the admission predicate held
  std::string reason;    ///< why rejected, or why (not) selected
};

struct PhaseSelection {
  PhaseQuery query;
  std::vector<Candidate> candidates; ///< registry order, every kernel
  const KernelCapability *selected = nullptr;
  bool fallback = false; ///< the selection is a full-dequant kernel
};

struct DispatchQuery {
  Target target;
  FallbackPolicy policy = FallbackPolicy::Forbid;
  LayoutMode layouts = LayoutMode::Shared;
  std::vector<PhaseQuery> phases; ///< one or two (decode, prefill)
  /// Kernels that quantize their activations (activationBlock) may be
  /// selected; false keeps every kernel's activations as given.
  bool int8Activations = true;
};

struct DispatchPlan {
  std::vector<PhaseSelection> phases;
  /// The layout the weight is stored in for its kernels; absent when only
  /// full-dequant kernels (or none) were selected: the stored layout stays.
  std::optional<LayoutId> layout;
  /// A second packed copy for the other phase (LayoutMode::PerPhase only).
  std::optional<LayoutId> secondaryLayout;
  std::optional<Phase> secondaryPhase;
  /// How the layout was chosen, for the trace.
  std::string resolution;
};

/// Admits every kernel for every phase of `query` and selects per phase:
/// the highest priority admitted kernel whose layout the weight will have.
/// Under LayoutMode::Shared one layout serves both phases: the one that
/// lets the most phases run a native kernel, then the best decode kernel,
/// then the best prefill kernel. A phase without a native kernel takes an
/// admitted full-dequant kernel (fallback) or stays unselected.
DispatchPlan planDispatch(const KernelRegistry &registry,
                          const OpSignature &sig, const DispatchQuery &query);

/// How a weight stored as `stored` reaches `target`: None when equal,
/// Prepacked when the exporter can write it and `exportable` (the weight is
/// an artifact tensor this compiler writes), LoadTime otherwise. Absent
/// when no repack path exists.
std::optional<RepackKind> repackKind(const KernelRegistry &registry,
                                     const LayoutId &stored,
                                     const LayoutId &target, bool exportable);

/// Checks that a stored layout the registry knows agrees with the
/// descriptor and shape: ggml_block q4_0 holds si4 offset_binary codes in
/// groups of 32 along K, a kernel layout holds 4- or 8-bit codes with its
/// tile, and so on. An unknown layout passes (admission rejects it).
Status verifyStoredLayout(const KernelRegistry &registry,
                          const AffineDescriptor &d,
                          const LayoutDescriptor &layout,
                          const std::vector<int64_t> &shape);

/// The layout descriptor (with tile and padding for `shape`) of a kernel
/// layout for codes of `codeBits`. Fails when the layout cannot hold them.
Expected<LayoutDescriptor>
kernelLayoutDescriptor(const KernelRegistry &registry, const LayoutId &id,
                       unsigned codeBits, const std::vector<int64_t> &shape);

} // namespace qtensor::kernels

#endif // QTENSOR_KERNELS_ADMISSION_H
