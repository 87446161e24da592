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

} // namespace qtensor::kernels
