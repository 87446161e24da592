//===- Admission.cpp - The admission predicate (seed M8.9 0x07A) ----------===//
//
// One function per clause; each returns the sentence that says why it
// failed, or nothing. admit() evaluates all of them so a rejected candidate
// carries every reason, not just the first.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Kernels/Admission.h"
#include "qtensor/Kernels/Mixed2416Admission.h"

#include "qtensor/Descriptor/GGMLSpellings.h"

#include <algorithm>
#include <sstream>

using namespace qtensor;
using namespace qtensor::kernels;

namespace {

template <typename T> bool contains(const std::vector<T> &set, const T &v) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

std::string spellOne(int64_t v) { return std::to_string(v); }
std::string spellOne(const std::string &s) { return s; }
std::string spellOne(FloatType t) { return qtensor::toString(t); }
std::string spellOne(ZeroPointKind k) { return qtensor::toString(k); }
std::string spellOne(Codebook c) { return qtensor::toString(c); }
std::string spellOne(Epilogue e) { return toString(e); }
std::string spellOne(Topology t) { return toString(t); }
std::string spellOne(const CodeContract &c) { return toString(c); }
std::string spellOne(ActivationQuant a) { return toString(a); }

/// "{32, 64, 128}".
template <typename T> std::string spellSet(const std::vector<T> &set) {
  std::string s = "{";
  for (size_t i = 0; i < set.size(); ++i)
    s += (i ? ", " : "") + spellOne(set[i]);
  return s + "}";
}

using Reasons = std::vector<std::string>;

void checkPolicy(const KernelCapability &k, FallbackPolicy policy,
                 Reasons &out) {
  if (k.fullDequant && policy == FallbackPolicy::Forbid)
    out.push_back("full-dequant fallback forbidden by fallback=forbid");
}

void checkTarget(const KernelCapability &k, const Target &target,
                 Reasons &out) {
  bool cuda = contains(k.backends, Backend::Cuda);
  if (!contains(k.backends, target.backend)) {
    if (cuda)
      out.push_back("needs " + capabilityName(k.minCapability) +
                    ", target is " + target.name);
    else
      out.push_back("runs on the host, target is " + target.name);
    return;
  }
  if (target.backend == Backend::Cuda && target.capability < k.minCapability)
    out.push_back("needs " + capabilityName(k.minCapability) + ", target is " +
                  target.name);
}

void checkTokens(const KernelCapability &k, const PhaseQuery &q, Reasons &out) {
  if (k.tokens.contains(q.tokens))
    return;
  // Entries for every T up to its chunk run any larger T in chunks.
  if (k.chunkRows > 0 && q.tokens.min >= k.tokens.min)
    return;
  std::string seen = toString(q.tokens) + " (" + toString(q.phase) + ")";
  if (q.tokens.min < k.tokens.min)
    out.push_back(seen + " below the kernel's minimum T = " +
                  std::to_string(k.tokens.min));
  else
    out.push_back(seen + " above the kernel's maximum T = " +
                  std::to_string(*k.tokens.max));
}

void checkCodes(const KernelCapability &k, const AffineDescriptor &d,
                Reasons &out) {
  CodeContract code = CodeContract::of(d);
  if (!contains(k.codes, code))
    out.push_back("code " + toString(code) + " not in " + spellSet(k.codes));
  if (d.decoderVersion != k.decoderVersion)
    out.push_back("decoder version " + std::to_string(d.decoderVersion) +
                  ", kernel decodes version " +
                  std::to_string(k.decoderVersion));
}

void checkQParams(const KernelCapability &k, const AffineDescriptor &d,
                  Topology topology, Reasons &out) {
  const std::vector<ZeroPointKind> &zeroPoints =
      d.code.isSigned ? k.signedZeroPoints : k.unsignedZeroPoints;
  if (!contains(k.codebooks, d.codebook))
    out.push_back(std::string("codebook ") + qtensor::toString(d.codebook) +
                  " not in " + spellSet(k.codebooks));
  else if (d.codebook == Codebook::None && !contains(zeroPoints, d.zeroPoint))
    out.push_back(std::string("zero-point ") + qtensor::toString(d.zeroPoint) +
                  " with " + (d.code.isSigned ? "signed" : "unsigned") +
                  " codes not in " + spellSet(zeroPoints));
  if (!contains(k.scaleTypes, d.scaleType))
    out.push_back(std::string("scale ") + qtensor::toString(d.scaleType) +
                  " not in " + spellSet(k.scaleTypes));
  switch (d.granularity) {
  case Granularity::Group:
    if (!k.anyGroupSize && !contains(k.groupSizes, d.groupSize))
      out.push_back(k.groupSizes.empty()
                        ? std::string("grouped scales not admitted")
                        : "group size " + std::to_string(d.groupSize) +
                              " not in " + spellSet(k.groupSizes));
    if (d.axis != k.groupAxis)
      out.push_back("groups along axis " + std::to_string(d.axis) +
                    ", kernel needs them along K (axis " +
                    std::to_string(k.groupAxis) + ")");
    break;
  case Granularity::PerAxis:
    if (!k.perChannel)
      out.push_back("per-channel scales not admitted");
    else if (d.axis != k.channelAxis)
      out.push_back("per-axis scales along axis " + std::to_string(d.axis) +
                    ", kernel needs them along N (axis " +
                    std::to_string(k.channelAxis) + ")");
    break;
  case Granularity::PerTensor:
    if (!k.perTensor)
      out.push_back("per-tensor scales not admitted");
    break;
  }
  // An act-order permutation is the runtime's to apply: it gathers x into
  // the group order the kernel layout stores K in (QuantizedStorage.h).
  // Split along K, a rank would need the columns of another.
  if (d.permutation && !k.actOrder && topology == Topology::Row)
    out.push_back("act-order permutation of K with a row-parallel split");
  // A kernel that quantizes X per block would see the gathered X: its
  // blocks are not X's blocks, which the parity checks quantize.
  if (d.permutation && k.activationBlock != 0)
    out.push_back("act-order permutation of K: int8 activations would be "
                  "quantized per " +
                  std::to_string(k.activationBlock) +
                  " in the gathered order, not X's");
}

void checkLayout(const KernelRegistry &registry, const KernelCapability &k,
                 const AffineDescriptor &d, const LayoutDescriptor &stored,
                 Reasons &out) {
  if (!k.layout)
    return; // reads any layout through the reference decoder
  // A kernel reads a group's codes in whole K tiles of its layout (16-byte
  // chunks). A group shorter than a tile must divide it, and carry no
  // zero-point: the kernels scale each group's lanes of the tile on their
  // own (NVFP4's 16 under 32 W4 codes), with one offset for the tile. A
  // kernel with int8 activations scales a tile's integer sum once, so it
  // takes no such group at all.
  if (const KernelLayout *kl = registry.findLayout(*k.layout);
      kl && d.granularity == Granularity::Group) {
    std::vector<int64_t> tile = kl->tileFor(d.code.bits);
    const bool splitsTile =
        tile.size() == 2 && d.groupSize < tile[1] && tile[1] % d.groupSize == 0;
    if (tile.size() == 2 && d.groupSize % tile[1] != 0 && !splitsTile)
      out.push_back("group size " + std::to_string(d.groupSize) +
                    " is not a whole number of the " + std::to_string(tile[1]) +
                    "-code K tiles " + k.layout->family + " reads " +
                    std::to_string(d.code.bits) + "-bit codes in");
    else if (splitsTile && d.zeroPoint != ZeroPointKind::None)
      out.push_back("groups of " + std::to_string(d.groupSize) + " within a " +
                    std::to_string(tile[1]) + "-code K tile of " +
                    k.layout->family + " take no zero-point, got " +
                    toString(d.zeroPoint));
    if (splitsTile && k.activationBlock != 0)
      out.push_back("groups of " + std::to_string(d.groupSize) + " within a " +
                    std::to_string(tile[1]) +
                    "-code K tile: int8 activations scale a tile's integer "
                    "sum once");
  }
  LayoutId id = LayoutId::of(stored);
  if (id == *k.layout || registry.findRepack(id, *k.layout))
    return;
  out.push_back("stored layout " + toString(id) + " is not " +
                toString(*k.layout) +
                " and no code-preserving repack converts it");
}

void checkDtypes(const KernelCapability &k, const OpSignature &sig,
                 Reasons &out) {
  if (!contains(k.activations, sig.activation))
    out.push_back(std::string("activation ") +
                  qtensor::toString(sig.activation) + " not in " +
                  spellSet(k.activations));
  if (!contains(k.accumulators, sig.accumulator))
    out.push_back(std::string("accumulator ") +
                  qtensor::toString(sig.accumulator) + " not in " +
                  spellSet(k.accumulators));
  if (!contains(k.outputs, sig.output))
    out.push_back(std::string("output ") + qtensor::toString(sig.output) +
                  " not in " + spellSet(k.outputs));
  if (!contains(k.epilogues, sig.epilogue))
    out.push_back(std::string("epilogue ") + toString(sig.epilogue) +
                  " not in " + spellSet(k.epilogues));
}

/// "on rank 3" (and "(and 2 more ranks)") when the weight is placed over
/// several ranks; nothing for a single rank.
std::string whichRanks(const std::vector<size_t> &failing, size_t numRanks) {
  if (numRanks <= 1)
    return "";
  std::string s = " on rank " + std::to_string(failing.front());
  if (failing.size() > 1)
    s += " (and " + std::to_string(failing.size() - 1) + " more rank" +
         (failing.size() > 2 ? "s" : "") + ")";
  return s;
}

void checkTiles(const KernelCapability &k, const OpSignature &sig,
                Reasons &out) {
  bool local = sig.ranks.size() > 1;
  auto check = [&](const char *dim, int64_t RankSlice::*extent, int64_t tile) {
    std::vector<size_t> failing;
    for (size_t r = 0; r < sig.ranks.size(); ++r)
      if (sig.ranks[r].*extent % tile != 0)
        failing.push_back(r);
    if (failing.empty())
      return;
    out.push_back(std::string(local ? "local " : "") + dim + " " +
                  std::to_string(sig.ranks[failing.front()].*extent) +
                  " not a multiple of tile " + std::to_string(tile) +
                  whichRanks(failing, sig.ranks.size()));
  };
  check("N", &RankSlice::n, k.tileN);
  check("K", &RankSlice::k, k.tileK);
}

/// The longest (local) K the kernel takes, if it has a limit.
void checkMaxK(const KernelCapability &k, const OpSignature &sig,
               Reasons &out) {
  if (!k.maxK)
    return;
  std::vector<size_t> failing;
  for (size_t r = 0; r < sig.ranks.size(); ++r)
    if (sig.ranks[r].k > *k.maxK)
      failing.push_back(r);
  if (!failing.empty())
    out.push_back(std::string(sig.ranks.size() > 1 ? "local " : "") + "K " +
                  std::to_string(sig.ranks[failing.front()].k) +
                  " above the kernel's " + std::to_string(*k.maxK) +
                  whichRanks(failing, sig.ranks.size()));
}

/// A K-sliced rank computes its groups from its own offset; unless the
/// placement re-grouped, a slice starting inside a group would need the
/// kernel to start mid-group, which none of ours does.
void checkGroupAlignment(const OpSignature &sig, Reasons &out) {
  const AffineDescriptor &d = sig.descriptor;
  if (sig.topology != Topology::Row || sig.regrouped ||
      d.granularity != Granularity::Group || d.groupSize <= 0)
    return;
  std::vector<size_t> failing;
  for (size_t r = 0; r < sig.ranks.size(); ++r)
    if (sig.ranks[r].kOffset % d.groupSize != 0)
      failing.push_back(r);
  if (failing.empty())
    return;
  out.push_back("slice starts at K = " +
                std::to_string(sig.ranks[failing.front()].kOffset) +
                ", inside a group of " + std::to_string(d.groupSize) +
                whichRanks(failing, sig.ranks.size()));
}

} // namespace

std::string Verdict::reason() const {
  std::string s;
  for (size_t i = 0; i < reasons.size(); ++i)
    s += (i ? "; " : "") + reasons[i];
  return s;
}

Verdict kernels::admit(const KernelRegistry &registry,
                       const KernelCapability &kernel, const OpSignature &sig,
                       const PhaseQuery &phase, const Target &target,
                       FallbackPolicy policy) {
  Verdict v;
  checkPolicy(kernel, policy, v.reasons);
  checkTarget(kernel, target, v.reasons);
  checkTokens(kernel, phase, v.reasons);
  if (!contains(kernel.representations, sig.representation)) {
    v.reasons.push_back("representation " + sig.representation + " not in " +
                        spellSet(kernel.representations));
  } else {
    checkCodes(kernel, sig.descriptor, v.reasons);
    checkQParams(kernel, sig.descriptor, sig.topology, v.reasons);
  }
  checkLayout(registry, kernel, sig.descriptor, sig.layout, v.reasons);
  checkDtypes(kernel, sig, v.reasons);
  if (!contains(kernel.activationQuants, sig.activationQuant))
    v.reasons.push_back(std::string("activations ") +
                        toString(sig.activationQuant) + " not in " +
                        spellSet(kernel.activationQuants));
  if (!contains(kernel.topologies, sig.topology))
    v.reasons.push_back(std::string("topology ") + toString(sig.topology) +
                        " not in " + spellSet(kernel.topologies));
  checkTiles(kernel, sig, v.reasons);
  checkMaxK(kernel, sig, v.reasons);
  if (!kernel.fullDequant)
    checkGroupAlignment(sig, v.reasons);
  return v;
}

std::string kernels::describeRequest(const OpSignature &sig) {
  std::ostringstream os;
  os << sig.representation;
  if (sig.representation == "affine") {
    const AffineDescriptor &d = sig.descriptor;
    os << ' ' << toString(CodeContract::of(d))
       << " zp=" << qtensor::toString(d.zeroPoint);
    switch (d.granularity) {
    case Granularity::Group:
      os << " g" << d.groupSize;
      break;
    case Granularity::PerAxis:
      os << " per-channel";
      break;
    case Granularity::PerTensor:
      os << " per-tensor";
      break;
    }
    if (d.permutation)
      os << " act-order";
    os << " scale=" << qtensor::toString(d.scaleType);
  } else if (sig.mixed) {
    const Mixed2416Descriptor &m = *sig.mixed;
    os << " g" << m.firstGroupSize << " z" << m.secondGroupSize
       << " s2=" << qtensor::toString(m.secondType)
       << " sparse=" << qtensor::toString(m.sparse) << ":"
       << qtensor::toString(m.sparseType);
  }
  os << " act=" << qtensor::toString(sig.activation)
     << " acc=" << qtensor::toString(sig.accumulator)
     << " out=" << qtensor::toString(sig.output)
     << " epilogue=" << toString(sig.epilogue)
     << " layout=" << toString(LayoutId::of(sig.layout));
  if (sig.activationQuant != ActivationQuant::None)
    os << " activations=" << toString(sig.activationQuant);
  return os.str();
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

namespace {

struct PhaseState {
  std::vector<Verdict> verdicts;
  const KernelCapability *selected = nullptr;
};

bool admittedNative(const KernelRegistry &registry, const PhaseState &state,
                    size_t i) {
  return state.verdicts[i].accepted() && !registry.kernels[i].fullDequant;
}

/// The best admitted kernel of a phase: highest priority, then registry
/// order. `layout` restricts it to kernels reading that layout.
const KernelCapability *best(const KernelRegistry &registry,
                             const PhaseState &state, bool native,
                             const std::optional<LayoutId> &layout) {
  const KernelCapability *result = nullptr;
  for (size_t i = 0; i < registry.kernels.size(); ++i) {
    const KernelCapability &k = registry.kernels[i];
    if (!state.verdicts[i].accepted() || k.fullDequant == native)
      continue;
    if (native && layout && k.layout != layout)
      continue;
    if (!result || k.priority > result->priority)
      result = &k;
  }
  return result;
}

std::string priorityReason(const KernelCapability &k,
                           const KernelCapability &selected) {
  if (k.priority < selected.priority)
    return "admitted; lower priority than " + selected.id + " (" +
           std::to_string(k.priority) + " < " +
           std::to_string(selected.priority) + ")";
  return "admitted; " + selected.id + " comes first at equal priority";
}

} // namespace

DispatchPlan kernels::planDispatch(const KernelRegistry &registry,
                                   const OpSignature &sig,
                                   const DispatchQuery &query) {
  if (sig.mixed)
    return planMixed2416Dispatch(registry, sig, query);
  std::vector<PhaseState> states(query.phases.size());
  for (size_t p = 0; p < query.phases.size(); ++p)
    for (const KernelCapability &k : registry.kernels) {
      states[p].verdicts.push_back(
          admit(registry, k, sig, query.phases[p], query.target, query.policy));
      if (k.activationBlock != 0 && !query.int8Activations)
        states[p].verdicts.back().reasons.push_back(
            "quantizes its activations to int8, and the compile keeps them "
            "float (int8-activations=false)");
    }

  DispatchPlan plan;
  if (query.layouts == LayoutMode::Shared) {
    // One layout for every phase: the one that lets the most phases run a
    // native kernel, then the best decode kernel, then the best prefill one
    // (seed 0x07C: a second packed copy costs HBM).
    std::vector<LayoutId> layouts;
    for (size_t p = 0; p < states.size(); ++p)
      for (size_t i = 0; i < registry.kernels.size(); ++i)
        if (admittedNative(registry, states[p], i) &&
            !contains(layouts, *registry.kernels[i].layout))
          layouts.push_back(*registry.kernels[i].layout);
    std::vector<int> bestScore;
    for (const LayoutId &layout : layouts) {
      std::vector<int> score(1 + states.size(), 0);
      for (size_t p = 0; p < states.size(); ++p) {
        if (const KernelCapability *k =
                best(registry, states[p], /*native=*/true, layout)) {
          ++score[0];
          score[1 + p] = k->priority;
        } else {
          score[1 + p] = -1;
        }
      }
      if (score > bestScore) {
        bestScore = score;
        plan.layout = layout;
      }
    }
    for (PhaseState &state : states)
      if (plan.layout)
        state.selected = best(registry, state, true, plan.layout);
  } else {
    for (PhaseState &state : states) {
      state.selected = best(registry, state, true, std::nullopt);
      if (!state.selected)
        continue;
      if (!plan.layout) {
        plan.layout = state.selected->layout;
      } else if (state.selected->layout != plan.layout) {
        plan.secondaryLayout = state.selected->layout;
        plan.secondaryPhase = query.phases[&state - states.data()].phase;
      }
    }
  }

  // Phases without a native kernel take the full-dequant fallback, if the
  // policy admitted it.
  for (size_t p = 0; p < states.size(); ++p) {
    PhaseSelection sel;
    sel.query = query.phases[p];
    PhaseState &state = states[p];
    if (!state.selected) {
      state.selected = best(registry, state, /*native=*/false, std::nullopt);
      sel.fallback = state.selected != nullptr;
    }
    sel.selected = state.selected;
    for (size_t i = 0; i < registry.kernels.size(); ++i) {
      const KernelCapability &k = registry.kernels[i];
      const Verdict &v = state.verdicts[i];
      Candidate c{k.id, v.accepted(), ""};
      if (!v.accepted()) {
        c.reason = v.reason();
      } else if (&k == sel.selected) {
        c.reason = sel.fallback ? std::string("selected: full-dequant "
                                              "fallback (fallback=") +
                                      toString(query.policy) + ")"
                                : "selected";
        // Say when its entries run the phase's T in chunks.
        if (k.chunkRows > 0 && !k.tokens.contains(sel.query.tokens))
          c.reason += ": T above " + std::to_string(k.chunkRows) +
                      " runs in chunks of " + std::to_string(k.chunkRows) +
                      " rows";
      } else if (sel.selected && k.priority < sel.selected->priority) {
        c.reason = priorityReason(k, *sel.selected);
      } else if (!k.fullDequant && plan.layout && k.layout != plan.layout &&
                 query.layouts == LayoutMode::Shared) {
        // Better than the selection, but the one layout is another's.
        c.reason = "admitted; reads " + toString(*k.layout) +
                   " but the weight's one layout is " + toString(*plan.layout) +
                   " (layouts=shared)";
      } else if (sel.selected) {
        c.reason = priorityReason(k, *sel.selected);
      } else {
        c.reason = "admitted; not selected";
      }
      sel.candidates.push_back(std::move(c));
    }
    plan.phases.push_back(std::move(sel));
  }

  // Say how the layout was chosen.
  size_t native = 0;
  for (const PhaseSelection &sel : plan.phases)
    native += sel.selected && !sel.fallback;
  if (!plan.layout)
    plan.resolution = "no kernel-native layout admitted; the stored layout "
                      "stays";
  else if (plan.secondaryLayout)
    plan.resolution = std::string("secondary layout ") +
                      toString(*plan.secondaryLayout) + " for " +
                      toString(*plan.secondaryPhase) +
                      ": both packings are stored (layouts=per-phase)";
  else if (plan.phases.size() > 1 && native == plan.phases.size())
    plan.resolution = "one layout serves decode and prefill";
  else if (plan.phases.size() > 1)
    plan.resolution = "one layout; the other phase has no kernel reading it";
  else
    plan.resolution = std::string("layout of the ") +
                      toString(plan.phases.front().query.phase) + " kernel";
  return plan;
}

std::optional<RepackKind> kernels::repackKind(const KernelRegistry &registry,
                                              const LayoutId &stored,
                                              const LayoutId &target,
                                              bool exportable) {
  if (stored == target)
    return RepackKind::None;
  const RepackPath *path = registry.findRepack(stored, target);
  if (!path)
    return std::nullopt;
  return path->atExport && exportable ? RepackKind::Prepacked
                                      : RepackKind::LoadTime;
}

//===----------------------------------------------------------------------===//
// Stored layouts against their descriptors
//===----------------------------------------------------------------------===//

namespace {
std::string spellShape(const std::vector<int64_t> &v) {
  return shapeToString(v);
}
} // namespace

Status kernels::verifyStoredLayout(const KernelRegistry &registry,
                                   const AffineDescriptor &d,
                                   const LayoutDescriptor &layout,
                                   const std::vector<int64_t> &shape) {
  LayoutId id = LayoutId::of(layout);
  CodeContract code = CodeContract::of(d);
  if (id.family == "ggml_block" && id.version == 1) {
    if (const GGMLAffineSpelling *g = findGGMLAffineSpelling(id.encoding)) {
      const CodeContract spelled{g->code.bits, g->code.isSigned,
                                 g->signedEncoding};
      std::string what = "layout " + toString(id);
      if (code != spelled)
        return makeError(what, " holds ", toString(spelled),
                         " codes, the descriptor says ", toString(code));
      if (d.zeroPoint != g->zeroPoint)
        return makeError(
            what, " stores zero-point ", qtensor::toString(g->zeroPoint),
            ", the descriptor says ", qtensor::toString(d.zeroPoint));
      int64_t last = static_cast<int64_t>(shape.size()) - 1;
      if (d.granularity != Granularity::Group || d.groupSize != g->group ||
          d.axis != last)
        return makeError(what, " stores one scale per ", g->group,
                         " codes along the last axis (", last,
                         "), the descriptor has other granularity");
      if (d.nested != g->nested)
        return makeError(what, g->nested
                                   ? " stores its scales as codes under a "
                                     "second level, the descriptor does not "
                                     "say so (nested)"
                                   : " stores its scales as values, the "
                                     "descriptor says nested");
      std::vector<int64_t> tile(shape.size(), 1);
      if (!tile.empty())
        tile.back() = g->blockElements;
      if (layout.tile != tile)
        return makeError(what, " has tile ", spellShape(tile), ", got ",
                         spellShape(layout.tile));
      return Status::ok();
    }
    return Status::ok();
  }
  if (const KernelLayout *kl = registry.findLayout(id)) {
    std::vector<int64_t> tile = kl->tileFor(code.bits);
    if (tile.empty() || !contains(kl->bits, code.bits))
      return makeError(
          "layout ", toString(id), " holds ",
          spellSet(std::vector<int64_t>(kl->bits.begin(), kl->bits.end())),
          "-bit codes, the descriptor says ", toString(code));
    if (layout.tile != tile)
      return makeError("layout ", toString(id), " has tile ", spellShape(tile),
                       " for ", code.bits, "-bit codes, got ",
                       spellShape(layout.tile));
  }
  return Status::ok();
}

Expected<LayoutDescriptor>
kernels::kernelLayoutDescriptor(const KernelRegistry &registry,
                                const LayoutId &id, unsigned codeBits,
                                const std::vector<int64_t> &shape) {
  const KernelLayout *kl = registry.findLayout(id);
  if (!kl)
    return makeError("layout ", toString(id), " is not a kernel layout");
  std::vector<int64_t> tile = kl->tileFor(codeBits);
  if (tile.empty() || tile.size() != shape.size())
    return makeError("layout ", toString(id), " cannot hold ", codeBits,
                     "-bit codes of a rank-", shape.size(), " tensor");
  LayoutDescriptor l;
  l.family = id.family;
  l.version = id.version;
  l.encoding = id.encoding;
  l.tile = tile;
  bool padded = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    l.padding.push_back((tile[i] - shape[i] % tile[i]) % tile[i]);
    padded |= l.padding.back() != 0;
  }
  if (!padded)
    l.padding.clear();
  return l;
}
