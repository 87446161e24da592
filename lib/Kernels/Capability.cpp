//===- Capability.cpp - Capability structs and their spellings ------------===//

#include "qtensor/Kernels/Capability.h"

#include "qtensor/Support/EnumSpelling.h"

#include <algorithm>
#include <tuple>

using namespace qtensor;
using namespace qtensor::kernels;

bool TokenRange::contains(const TokenRange &inner) const {
  if (inner.min < min)
    return false;
  if (!max)
    return true;
  return inner.max && *inner.max <= *max;
}

CodeContract CodeContract::of(const AffineDescriptor &d) {
  CodeContract c;
  c.bits = d.code.bits;
  c.isSigned = d.code.isSigned;
  c.encoding = d.code.isSigned ? d.encoding : SignedEncoding::TwosComplement;
  return c;
}

std::vector<int64_t> KernelLayout::tileFor(unsigned codeBits) const {
  if (std::find(bits.begin(), bits.end(), codeBits) == bits.end())
    return {};
  if (codeBits == 4)
    return tileW4;
  // 2-, 3-, 5- and 6-bit codes sit one per byte, as 8-bit ones do.
  if (codeBits == 2 || codeBits == 3 || codeBits == 5 || codeBits == 6 ||
      codeBits == 8)
    return tileW8;
  return {};
}

bool KernelLayout::operator==(const KernelLayout &o) const {
  return id == o.id && summary == o.summary && bits == o.bits &&
         tileW4 == o.tileW4 && tileW8 == o.tileW8;
}

bool KernelCapability::operator==(const KernelCapability &o) const {
  auto fields = [](const KernelCapability &k) {
    return std::tie(k.id, k.summary, k.phases, k.backends, k.minCapability,
                    k.representations, k.layout, k.codes, k.signedZeroPoints,
                    k.unsignedZeroPoints, k.codebooks, k.scaleTypes,
                    k.groupSizes, k.anyGroupSize, k.perChannel, k.perTensor,
                    k.actOrder, k.decoderVersion, k.groupAxis, k.channelAxis,
                    k.activations, k.accumulators, k.outputs, k.topologies,
                    k.tileN, k.tileK, k.tokens, k.epilogues, k.priority,
                    k.fullDequant, k.rowSplit, k.activationBlock, k.maxK,
                    k.activationQuants, k.chunkRows);
  };
  return fields(*this) == fields(o);
}

const KernelCapability *
KernelRegistry::findKernel(const std::string &id) const {
  for (const KernelCapability &k : kernels)
    if (k.id == id)
      return &k;
  return nullptr;
}

const KernelCapability *
KernelRegistry::hostTwin(const KernelCapability &kernel) const {
  auto onHost = [](const KernelCapability &k) {
    return std::find(k.backends.begin(), k.backends.end(), Backend::Host) !=
           k.backends.end();
  };
  if (kernel.fullDequant)
    return nullptr;
  if (onHost(kernel))
    return &kernel;
  // The same layout, phases and numeric contract: what it admits, it
  // computes the same way (the same emitter builds both).
  auto contract = [](const KernelCapability &k) {
    return std::tie(
        k.layout, k.phases, k.representations, k.codes, k.signedZeroPoints,
        k.unsignedZeroPoints, k.codebooks, k.scaleTypes, k.groupSizes,
        k.perChannel, k.perTensor, k.actOrder, k.decoderVersion, k.groupAxis,
        k.channelAxis, k.activations, k.accumulators, k.outputs, k.epilogues,
        k.tokens, k.activationBlock, k.maxK, k.activationQuants, k.chunkRows);
  };
  for (const KernelCapability &k : kernels)
    if (!k.fullDequant && onHost(k) && contract(k) == contract(kernel))
      return &k;
  return nullptr;
}

const KernelLayout *KernelRegistry::findLayout(const LayoutId &id) const {
  for (const KernelLayout &l : layouts)
    if (l.id == id)
      return &l;
  return nullptr;
}

const RepackPath *KernelRegistry::findRepack(const LayoutId &from,
                                             const LayoutId &to) const {
  for (const RepackPath &p : repackPaths)
    if (p.from == from && p.to == to)
      return &p;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Spellings
//===----------------------------------------------------------------------===//

namespace {

const std::pair<const char *, Phase> kPhases[] = {{"decode", Phase::Decode},
                                                  {"prefill", Phase::Prefill}};
const std::pair<const char *, PhaseChoice> kPhaseChoices[] = {
    {"decode", PhaseChoice::Decode},
    {"prefill", PhaseChoice::Prefill},
    {"both", PhaseChoice::Both}};
const std::pair<const char *, Backend> kBackends[] = {{"cuda", Backend::Cuda},
                                                      {"host", Backend::Host}};
const std::pair<const char *, Epilogue> kEpilogues[] = {
    {"none", Epilogue::None}, {"bias", Epilogue::Bias}};
const std::pair<const char *, Topology> kTopologies[] = {
    {"single", Topology::Single},
    {"replicated", Topology::Replicated},
    {"column", Topology::Column},
    {"row", Topology::Row}};
const std::pair<const char *, FallbackPolicy> kPolicies[] = {
    {"forbid", FallbackPolicy::Forbid},
    {"warn", FallbackPolicy::Warn},
    {"allow", FallbackPolicy::Allow}};
const std::pair<const char *, LayoutMode> kLayoutModes[] = {
    {"shared", LayoutMode::Shared}, {"per-phase", LayoutMode::PerPhase}};
const std::pair<const char *, RepackKind> kRepackKinds[] = {
    {"none", RepackKind::None},
    {"prepacked", RepackKind::Prepacked},
    {"load_time", RepackKind::LoadTime}};
const std::pair<const char *, ActivationQuant> kActivationQuants[] = {
    {"none", ActivationQuant::None},
    {"per_token_sym", ActivationQuant::PerTokenSym},
    {"per_token_asym", ActivationQuant::PerTokenAsym}};
} // namespace

const char *kernels::toString(ActivationQuant a) {
  return spellEnum(a, kActivationQuants);
}
std::optional<ActivationQuant>
kernels::parseActivationQuant(const std::string &s) {
  return lookupEnum(s, kActivationQuants);
}
const char *kernels::toString(Phase p) { return spellEnum(p, kPhases); }
const char *kernels::toString(PhaseChoice s) {
  return spellEnum(s, kPhaseChoices);
}
const char *kernels::toString(Backend b) { return spellEnum(b, kBackends); }
const char *kernels::toString(Epilogue e) { return spellEnum(e, kEpilogues); }
const char *kernels::toString(Topology t) { return spellEnum(t, kTopologies); }
const char *kernels::toString(FallbackPolicy p) {
  return spellEnum(p, kPolicies);
}
const char *kernels::toString(LayoutMode m) {
  return spellEnum(m, kLayoutModes);
}
const char *kernels::toString(RepackKind k) {
  return spellEnum(k, kRepackKinds);
}
std::optional<Phase> kernels::parsePhase(const std::string &s) {
  return lookupEnum(s, kPhases);
}
std::optional<PhaseChoice> kernels::parsePhaseChoice(const std::string &s) {
  return lookupEnum(s, kPhaseChoices);
}
std::vector<Phase> kernels::phasesOf(PhaseChoice s) {
  switch (s) {
  case PhaseChoice::Decode:
    return {Phase::Decode};
  case PhaseChoice::Prefill:
    return {Phase::Prefill};
  case PhaseChoice::Both:
    break;
  }
  return {Phase::Decode, Phase::Prefill};
}
std::optional<Backend> kernels::parseBackend(const std::string &s) {
  return lookupEnum(s, kBackends);
}
std::optional<Epilogue> kernels::parseEpilogue(const std::string &s) {
  return lookupEnum(s, kEpilogues);
}
std::optional<Topology> kernels::parseTopology(const std::string &s) {
  return lookupEnum(s, kTopologies);
}
std::optional<FallbackPolicy>
kernels::parseFallbackPolicy(const std::string &s) {
  return lookupEnum(s, kPolicies);
}
std::optional<LayoutMode> kernels::parseLayoutMode(const std::string &s) {
  return lookupEnum(s, kLayoutModes);
}
std::optional<RepackKind> kernels::parseRepackKind(const std::string &s) {
  return lookupEnum(s, kRepackKinds);
}

const std::vector<std::string> &kernels::knownTargets() {
  static const std::vector<std::string> targets = {"sm_80", "sm_86", "sm_89",
                                                   "sm_90", "host"};
  return targets;
}

std::optional<Target> kernels::parseTarget(const std::string &s) {
  if (s == "host")
    return Target{s, Backend::Host, 0};
  for (const std::string &known : knownTargets())
    if (s == known)
      return Target{s, Backend::Cuda,
                    static_cast<uint32_t>(std::stoul(s.substr(3)))};
  return std::nullopt;
}

std::string kernels::capabilityName(uint32_t capability) {
  return "sm_" + std::to_string(capability);
}

std::string kernels::toString(const LayoutId &id) {
  return "(" + id.family + ", " + std::to_string(id.version) + ", " +
         id.encoding + ")";
}

std::string kernels::toString(const CodeContract &c) {
  std::string s = (c.isSigned ? "si" : "ui") + std::to_string(c.bits);
  if (c.isSigned)
    s += std::string(" ") + qtensor::toString(c.encoding);
  return s;
}

std::optional<CodeContract> kernels::parseCodeContract(const std::string &s) {
  CodeContract c;
  std::string type = s, encoding;
  if (size_t space = s.find(' '); space != std::string::npos) {
    type = s.substr(0, space);
    encoding = s.substr(space + 1);
  }
  if (type.size() != 3 || (type[0] != 's' && type[0] != 'u') ||
      type[1] != 'i' || type[2] < '2' || type[2] > '8')
    return std::nullopt;
  c.isSigned = type[0] == 's';
  c.bits = static_cast<unsigned>(type[2] - '0');
  if (c.isSigned) {
    std::optional<SignedEncoding> e = parseSignedEncoding(encoding);
    if (!e)
      return std::nullopt;
    c.encoding = *e;
  } else if (!encoding.empty()) {
    return std::nullopt;
  }
  return c;
}

std::string kernels::toString(const TokenRange &r) {
  if (r.max && *r.max == r.min)
    return "T = " + std::to_string(r.min);
  return "T in [" + std::to_string(r.min) + ", " +
         (r.max ? std::to_string(*r.max) + "]" : std::string("inf)"));
}

TokenRange kernels::phaseTokens(Phase p) {
  if (p == Phase::Decode)
    return {1, kMaxDecodeTokens};
  return {kMaxDecodeTokens + 1, std::nullopt};
}

Phase kernels::phaseOfTokens(int64_t t) {
  return t <= kMaxDecodeTokens ? Phase::Decode : Phase::Prefill;
}
