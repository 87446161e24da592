//===- Mixed2416Admission.cpp - Admission of the mixed 2/4/16 GEMV --------===//

#include "qtensor/Kernels/Mixed2416Admission.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

namespace qtensor::kernels {

namespace {

template <typename T, typename Spell>
std::string listOf(const std::vector<T> &values, Spell spell) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << spell(values[i]);
  os << "}";
  return os.str();
}

template <typename T> bool contains(const std::vector<T> &values, const T &v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

std::string spellCode(const CodeType &c) {
  return std::string(c.isSigned ? "si" : "ui") + std::to_string(c.bits);
}

std::string spellLayout(const LayoutId &l) {
  return "(" + l.family + ", " + std::to_string(l.version) + ", " + l.encoding +
         ")";
}

} // namespace

const Mixed2416Capability &mixed2416DecodeGemvCapability() {
  static const Mixed2416Capability capability = [] {
    Mixed2416Capability c;
    c.name = "mixed2416_decode_gemv";
    c.layout = {"mixed_2416", 1, "group_major_lsb_first"};
    c.mapGranularities = {PrecisionMapGranularity::Group};
    c.firstGroupSizes = {64, 128, 192, 256};
    c.firstScaleCodes = {CodeType{8, false}};
    c.qparamPackings = {QParamPacking::Bytes};
    c.secondTypes = {FloatType::F16, FloatType::BF16};
    c.sparseSemantics = {SparseSemantics::Replacement,
                         SparseSemantics::Correction};
    c.sparseTypes = {FloatType::F16, FloatType::BF16};
    c.activations = {FloatType::F16, FloatType::BF16};
    c.decoderVersions = {1};
    c.vectorK = 32;
    c.tokens = {1, 16};
    c.targets = {"sm_80", "sm_90", "host"};
    c.threadsPerBlock = 128;
    // The gates' worst entry is 130 (sm_80, T = 16); the declaration
    // keeps room for the shapes the gates do not build.
    c.registersPerThread = 168;
    c.sharedBytesPerBlock = 0;
    return c;
  }();
  return capability;
}

const KernelCapability &mixed2416KernelCapability() {
  static const KernelCapability capability = [] {
    const Mixed2416Capability &m = mixed2416DecodeGemvCapability();
    KernelCapability c;
    c.id = m.name;
    c.summary = "mixed 2/4/16 decode GEMV (T = 1..16 each its own entry; a "
                "larger T in chunks of 16)";
    c.phases = {Phase::Decode};
    c.backends = {Backend::Cuda, Backend::Host};
    c.minCapability = 80;
    c.representations = {"mixed_2416"};
    c.layout = m.layout;
    c.activations = m.activations;
    c.accumulators = {FloatType::F32};
    c.outputs = {FloatType::F16, FloatType::BF16, FloatType::F32};
    c.topologies = {Topology::Single};
    c.tokens = m.tokens;
    c.epilogues = {Epilogue::None, Epilogue::Bias};
    return c;
  }();
  return capability;
}

BlockLimits blockLimitsOf(const Target &target) {
  // The host twin's "block" is a loop nest: nothing to fit.
  if (target.capability == 0)
    return {INT64_MAX, INT64_MAX, INT64_MAX};
  return {}; // sm_80 and sm_90: 1024 threads, 64 K registers, 48 KiB static
}

Verdict admitMixed2416(const Mixed2416Capability &kernel,
                       const Mixed2416Descriptor &d, FloatType activation,
                       int64_t tokens, const std::vector<RankSlice> &ranks,
                       const Target &target) {
  Verdict v;
  auto fail = [&](std::string reason) { v.reasons.push_back(reason); };
  auto floats = [](FloatType t) { return std::string(toString(t)); };
  if (Status s = verifyMixed2416(d); !s)
    fail("descriptor: " + s.message());
  const LayoutId layout{d.layoutFamily, d.layoutVersion, d.layoutEncoding};
  if (layout != kernel.layout)
    fail("layout " + spellLayout(layout) + " is not the kernel's " +
         spellLayout(kernel.layout));
  if (d.requiredKernel != kernel.name)
    fail("the tensor requires kernel " + d.requiredKernel + ", this is " +
         kernel.name);
  if (!contains(kernel.decoderVersions, d.decoderVersion))
    fail("decoder version " + std::to_string(d.decoderVersion) + " not in " +
         listOf(kernel.decoderVersions,
                [](uint32_t x) { return std::to_string(x); }));
  if (!contains(kernel.mapGranularities, d.mapGranularity))
    fail(std::string("precision map granularity ") +
         toString(d.mapGranularity) + " not in " +
         listOf(kernel.mapGranularities,
                [](PrecisionMapGranularity g) { return toString(g); }));
  if (!contains(kernel.firstGroupSizes, d.firstGroupSize))
    fail("first-level group size " + std::to_string(d.firstGroupSize) +
         " not in " + listOf(kernel.firstGroupSizes, [](int64_t x) {
           return std::to_string(x);
         }));
  // Nested qparams: first level along K (axis 1), second along N (axis 0),
  // decoded second level first, in the packing and dtypes it reads.
  if (d.firstGroupAxis != 1 || d.secondGroupAxis != 0)
    fail("nested qparams along axes (" + std::to_string(d.firstGroupAxis) +
         ", " + std::to_string(d.secondGroupAxis) +
         "); the kernel decodes first level along 1, second along 0");
  if (!contains(kernel.firstScaleCodes, d.firstScaleCode))
    fail("first-level scale codes " + spellCode(d.firstScaleCode) + " not in " +
         listOf(kernel.firstScaleCodes, spellCode));
  if (!contains(kernel.qparamPackings, d.qparamPacking))
    fail(std::string("qparam packing ") + toString(d.qparamPacking) +
         " not in " + listOf(kernel.qparamPackings, [](QParamPacking p) {
           return toString(p);
         }));
  if (!contains(kernel.secondTypes, d.secondType))
    fail("second-level qparams " + floats(d.secondType) + " not in " +
         listOf(kernel.secondTypes, floats));
  if (!contains(kernel.sparseSemantics, d.sparse))
    fail(std::string("sparse semantics ") + toString(d.sparse) + " not in " +
         listOf(kernel.sparseSemantics,
                [](SparseSemantics s) { return toString(s); }));
  if (!contains(kernel.sparseTypes, d.sparseType))
    fail("outlier values " + floats(d.sparseType) + " not in " +
         listOf(kernel.sparseTypes, floats));
  if (!contains(kernel.activations, activation))
    fail("activations " + floats(activation) + " not in " +
         listOf(kernel.activations, floats));
  if (!kernel.tokens.contains(TokenRange::exactly(tokens)))
    fail("T = " + std::to_string(tokens) + " outside [" +
         std::to_string(kernel.tokens.min) + ", " +
         (kernel.tokens.max ? std::to_string(*kernel.tokens.max) : "inf") +
         "]");
  // Each rank reads whole steps and whole first-level groups of its K.
  if (ranks.empty())
    fail("no rank slices");
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankSlice &s = ranks[r];
    const std::string where = " on rank " + std::to_string(r);
    if (s.k % kernel.vectorK != 0)
      fail("local K " + std::to_string(s.k) + " not a multiple of vector K " +
           std::to_string(kernel.vectorK) + where);
    if (d.firstGroupSize > 0 &&
        (s.k % d.firstGroupSize != 0 || s.kOffset % d.firstGroupSize != 0))
      fail("K slice [" + std::to_string(s.kOffset) + ", " +
           std::to_string(s.kOffset + s.k) + ") cuts a first-level group of " +
           std::to_string(d.firstGroupSize) + where);
    if (d.secondGroupSize > 0 &&
        (s.n % d.secondGroupSize != 0 || s.nOffset % d.secondGroupSize != 0))
      fail("N slice [" + std::to_string(s.nOffset) + ", " +
           std::to_string(s.nOffset + s.n) + ") cuts a second-level group of " +
           std::to_string(d.secondGroupSize) + where);
  }
  if (!contains(kernel.targets, target.name)) {
    fail("target " + target.name + " not in " +
         listOf(kernel.targets, [](const std::string &s) { return s; }));
    return v;
  }
  const BlockLimits limits = blockLimitsOf(target);
  if (kernel.threadsPerBlock > limits.threads)
    fail(std::to_string(kernel.threadsPerBlock) + " threads per block, " +
         target.name + " allows " + std::to_string(limits.threads));
  const int64_t registers = kernel.threadsPerBlock * kernel.registersPerThread;
  if (registers > limits.registers)
    fail(std::to_string(registers) + " registers per block (" +
         std::to_string(kernel.registersPerThread) + " x " +
         std::to_string(kernel.threadsPerBlock) + "), " + target.name +
         " has " + std::to_string(limits.registers));
  if (kernel.sharedBytesPerBlock > limits.sharedBytes)
    fail(std::to_string(kernel.sharedBytesPerBlock) +
         " bytes of shared memory per block, " + target.name + " allows " +
         std::to_string(limits.sharedBytes));
  return v;
}

DispatchPlan planMixed2416Dispatch(const KernelRegistry &registry,
                                   const OpSignature &sig,
                                   const DispatchQuery &query) {
  const Mixed2416Capability &kernel = mixed2416DecodeGemvCapability();
  DispatchPlan plan;
  for (const PhaseQuery &q : query.phases) {
    PhaseSelection sel;
    sel.query = q;
    // The kernel's T is static, 1..16: a phase beyond 16 rows runs it in
    // chunks of 16 and one remainder chunk, so every T of [1, 16].
    const bool chunked = !q.tokens.max || *q.tokens.max > kMaxDecodeTokens;
    std::vector<int64_t> rows = {q.tokens.min};
    if (chunked)
      rows = {1, kMaxDecodeTokens};
    else if (*q.tokens.max != q.tokens.min)
      rows.push_back(*q.tokens.max);
    Verdict v;
    auto add = [&](const std::string &reason) {
      if (!contains(v.reasons, reason))
        v.reasons.push_back(reason);
    };
    if (!sig.mixed)
      add("no mixed_2416 descriptor");
    else
      for (int64_t t : rows)
        for (const std::string &r :
             admitMixed2416(kernel, *sig.mixed, sig.activation, t, sig.ranks,
                            query.target)
                 .reasons)
          add(r);
    if (sig.accumulator != FloatType::F32)
      add(std::string("accumulator ") + toString(sig.accumulator) +
          "; the kernel accumulates in f32");
    if (sig.topology != Topology::Single)
      add(std::string("topology ") + toString(sig.topology) +
          ": a mixed_2416 tensor is placed whole (tp = 1)");
    Candidate c{kernel.name, v.accepted(), v.reason()};
    if (v.accepted()) {
      c.reason = chunked ? "selected: runs T > 16 in chunks of at most 16 "
                           "rows through its decode entries (T = 1..16)"
                         : "selected";
      sel.selected = &mixed2416KernelCapability();
      plan.layout = kernel.layout;
    }
    sel.candidates.push_back(std::move(c));
    // The registry's kernels read affine codes: listed with their reasons.
    for (const KernelCapability &k : registry.kernels) {
      Verdict rv = admit(registry, k, sig, q, query.target, query.policy);
      sel.candidates.push_back(
          {k.id, rv.accepted(),
           rv.accepted() ? "admitted; not selected" : rv.reason()});
    }
    plan.phases.push_back(std::move(sel));
  }
  plan.resolution = plan.layout
                        ? "the mixed_2416 streams as stored (the kernel "
                          "reads the tensor's layout; no repack)"
                        : "no kernel-native layout admitted; the stored "
                          "layout stays";
  return plan;
}

} // namespace qtensor::kernels
