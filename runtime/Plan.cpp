//===- Plan.cpp - Which kernel runs which op, decided before any byte -----===//

#include "qtensor/Runtime/Plan.h"

#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Kernels/HostInt8Tiles.h"
#include "qtensor/Kernels/Mixed2416Admission.h"
#include "qtensor/Kernels/Registry.h"
#include "qtensor/Numerics/ActivationQuant.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Support/CheckedMath.h"

#include <algorithm>
#include <map>

using namespace qtensor;
using namespace qtensor::runtime;
using kernels::FallbackPolicy;
using kernels::Phase;

const PhasePlan *OpPlan::phaseFor(int64_t tokens) const {
  // The phase T belongs to, as the binding planned it: an instance whose T
  // range holds T, else that phase's fallback.
  Phase want = kernels::phaseOfTokens(tokens);
  for (const PhasePlan &p : phases) {
    if (p.phase != want)
      continue;
    if (p.fallback || p.chunkRows)
      return &p;
    for (const KernelInstance *k : p.instances)
      if (tokens >= k->tokens.min && tokens <= *k->tokens.max)
        return &p;
  }
  return nullptr;
}

const KernelInstance *OpPlan::instanceFor(int64_t tokens) const {
  const PhasePlan *phase = phaseFor(tokens);
  if (!phase || phase->fallback)
    return nullptr;
  // A chunked phase calls its (decode) instances on chunks of T.
  if (phase->chunkRows) {
    for (const KernelInstance *k : phase->instances)
      if (k->entryFor(std::min(tokens, phase->chunkRows)))
        return k;
    return nullptr;
  }
  for (const KernelInstance *k : phase->instances)
    if (k->phase == phase->phase && k->entryFor(tokens))
      return k;
  return nullptr;
}

namespace {
/// Whether `kernel`, called on T rows, quantizes its activations: per
/// token at every T (W8A8), or per block at T = 1 (the host GEMM's int8
/// path), and at every T where that GEMM runs T > 1 on AMX tiles.
bool quantizes(const KernelInstance &kernel, int64_t tokens) {
  if (kernel.activationQuant)
    return true;
  const kernels::KernelCapability *cap =
      kernels::builtinRegistry().findKernel(kernel.registryId);
  if (!cap || cap->activationBlock == 0)
    return false;
  return tokens == 1 ||
         (kernel.isHost() &&
          kernels::hostGemmUsesInt8Tiles(
              kernel.cpu, {kernel.codeSigned, kernel.minZero, kernel.codebook,
                           kernel.groupSize, kernel.k}));
}
} // namespace

bool OpPlan::quantizesActivations(int64_t tokens) const {
  const KernelInstance *k = instanceFor(tokens);
  return k && quantizes(*k, tokens);
}

std::vector<double> OpPlan::kernelActivations(std::vector<double> x,
                                              int64_t tokens) const {
  const KernelInstance *k = instanceFor(tokens);
  return k ? runtime::kernelActivations(std::move(x), tokens, *k) : x;
}

std::vector<double> runtime::kernelActivations(std::vector<double> x,
                                               int64_t tokens,
                                               const KernelInstance &kernel) {
  if (!quantizes(kernel, tokens))
    return x;
  if (kernel.activationQuant)
    return tokenQuantizedActivations(x, tokens, kernel.k,
                                     kernel.activationQuant->symmetric);
  return blockQuantizedActivations(x, tokens, kernel.k);
}

size_t RunPlan::fallbacks() const {
  size_t n = 0;
  for (const OpPlan &op : ops)
    for (const PhasePlan &p : op.phases)
      n += p.fallback;
  return n;
}

const OpPlan *RunPlan::find(const std::string &name) const {
  for (const OpPlan &op : ops)
    if (op.tensor == name || op.op == name)
      return &op;
  return nullptr;
}

std::string qtensor::runtime::biasTensorName(const std::string &op,
                                             int64_t rank, bool rankSuffix) {
  std::string base = artifact::biasTensorOf(op);
  return rankSuffix ? base + "@rank" + std::to_string(rank) : base;
}

std::pair<std::string, std::optional<int64_t>>
qtensor::runtime::splitRankName(const std::string &tensor) {
  size_t at = tensor.rfind("@rank");
  if (at == std::string::npos || at == 0 || at + 5 >= tensor.size() ||
      tensor.size() - at - 5 > 5)
    return {tensor, std::nullopt};
  int64_t r = 0;
  for (size_t i = at + 5; i < tensor.size(); ++i) {
    if (tensor[i] < '0' || tensor[i] > '9')
      return {tensor, std::nullopt};
    r = r * 10 + (tensor[i] - '0');
  }
  return {tensor.substr(0, at), r};
}

namespace {

safetensors::DType dtypeOf(ArgType t) {
  switch (t) {
  case ArgType::F16:
    return safetensors::DType::F16;
  case ArgType::BF16:
    return safetensors::DType::BF16;
  case ArgType::F32:
    return safetensors::DType::F32;
  case ArgType::I32:
    return safetensors::DType::I32;
  case ArgType::I8:
    return safetensors::DType::I8;
  case ArgType::U8:
    return safetensors::DType::U8;
  }
  return safetensors::DType::U8;
}

uint64_t elements(const std::vector<int64_t> &shape) {
  return checkedElementCount(shape).value_or(0);
}

/// A kernel that reads nested qparams as stored against the tensor's
/// levels: the same super-group and second-level dtype, scale codes of the
/// stored signedness, every level's element count. A kernel without them
/// must not meet stored levels it would read as decoded values: the
/// loader gives it the decoded first level (Loader.cpp).
Status checkNestedArgs(const KernelInstance &k,
                       const artifact::QuantizedTensor &q,
                       const std::string &where, const std::string &of) {
  if (!k.nested)
    return Status::ok();
  const std::optional<NestedQParams> &n = q.logical.descriptor.nested;
  if (!n || !q.superScales)
    return makeError(where, ".nested: the kernel reads nested scales, but", of,
                     " has none");
  if (k.nested->superGroupSize != n->superGroupSize ||
      k.nested->superType != n->superType)
    return makeError(
        where, ".nested: super-groups of ", k.nested->superGroupSize, " in ",
        qtensor::toString(k.nested->superType), ", but", of, " has ",
        n->superGroupSize, " in ", qtensor::toString(n->superType));
  const safetensors::DType codes =
      n->scaleCode.isSigned ? safetensors::DType::I8 : safetensors::DType::U8;
  const KernelArg &s = *k.arg(ArgRole::S);
  if (dtypeOf(s.type) != codes || q.scales.dtype != codes)
    return makeError(where, ".args: s reads ", toString(s.type),
                     " scale codes, but", of, " stores them as ",
                     safetensors::dtypeName(q.scales.dtype));
  auto sameCount = [&](ArgRole role, const artifact::StoredTensor *t,
                       const char *what) -> Status {
    const KernelArg *a = k.arg(role);
    if (!a && !t)
      return Status::ok();
    if (!a || !t || elements(a->shape) != elements(t->shape))
      return makeError(where, ".args: ", toString(role),
                       a ? " has shape " + shapeToString(a->shape)
                         : std::string(" is missing"),
                       ", but", of, " stores ", what,
                       t ? " of shape " + shapeToString(t->shape)
                         : std::string(": none"));
    return Status::ok();
  };
  QTENSOR_TRY(sameCount(ArgRole::S2, q.superScales ? &*q.superScales : nullptr,
                        "second-level scales"));
  return sameCount(ArgRole::Z2, q.superZeros ? &*q.superZeros : nullptr,
                   "second-level mins");
}

/// The fields every instance shares with its op: shape, dtypes, bias.
Status checkSignatureAgainstOp(const KernelInstance &k, const OpPlan &op,
                               bool biasApplies) {
  std::string where = k.where();
  std::string of = " (tensor \"" + op.tensor + "\")";
  if (k.n != op.n() || k.k != op.k())
    return makeError(where, ": n = ", k.n, ", k = ", k.k, ", but", of,
                     " holds [", op.n(), ", ", op.k(), "] on this rank");
  if (k.activation != op.activation)
    return makeError(where, ".activation: ", qtensor::toString(k.activation),
                     ", but the op", of, " reads ",
                     qtensor::toString(op.activation));
  if (k.output != op.output)
    return makeError(where, ".output: ", qtensor::toString(k.output),
                     ", but the op", of, " writes ",
                     qtensor::toString(op.output));
  if (k.bias != biasApplies)
    return makeError(where, ".bias: ", k.bias ? "true" : "false",
                     ", but the op", of,
                     biasApplies ? " adds a bias on this rank"
                                 : " adds no bias in this kernel");
  return Status::ok();
}

/// What the instance claims about `op` against what the manifest stores.
/// Any mismatch is a corrupt artifact.
Status checkInstanceAgainstOp(const KernelInstance &k, const OpPlan &op,
                              const artifact::QuantizedTensor &q,
                              bool biasApplies) {
  QTENSOR_TRY(checkSignatureAgainstOp(k, op, biasApplies));
  if (k.isReference())
    return Status::ok();
  std::string where = k.where();
  std::string of = " (tensor \"" + op.tensor + "\")";
  if (k.mixed)
    return makeError(where, ".layout: ", k.layout, ", but", of,
                     " is an affine tensor, which a mixed_2416 kernel does "
                     "not read");
  const kernels::ActivationQuant form =
      !k.activationQuant             ? kernels::ActivationQuant::None
      : k.activationQuant->symmetric ? kernels::ActivationQuant::PerTokenSym
                                     : kernels::ActivationQuant::PerTokenAsym;
  if (form != op.signature.activationQuant)
    return makeError(where, ": takes activations ", kernels::toString(form),
                     ", but the op's binding", of, " gives them ",
                     kernels::toString(op.signature.activationQuant));

  const AffineDescriptor &d = q.logical.descriptor;
  if (k.codeBits != d.code.bits || k.codeSigned != d.code.isSigned)
    return makeError(where, ".code: ", k.codeBits, "-bit ",
                     k.codeSigned ? "signed" : "unsigned", ", but", of,
                     " stores ", d.code.bits, "-bit ",
                     d.code.isSigned ? "signed" : "unsigned", " codes");
  // A code's value is the kernel's to decide: the table must be the one
  // the tensor's codes index (or none on both sides).
  if (k.codebook != d.codebook)
    return makeError(where, ".code.codebook: ", toString(k.codebook), ", but",
                     of, " has codebook ", toString(d.codebook));
  int64_t group = d.granularity == Granularity::Group     ? d.groupSize
                  : d.granularity == Granularity::PerAxis ? 0
                                                          : -1;
  if (k.groupSize != group)
    return makeError(where, ".group_size: ",
                     k.groupSize ? std::to_string(k.groupSize)
                                 : std::string("per_channel"),
                     ", but", of, " has ",
                     group > 0    ? "groups of " + std::to_string(group)
                     : group == 0 ? std::string("per-channel scales")
                                  : std::string("per-tensor scales"));
  // A nested descriptor's or a scale format's kernels read the first level
  // decoded at load (f32, the descriptor's scale type), not stored codes.
  const bool decodedScales = d.nested || d.scaleFormat != ScaleFormat::Plain;
  const safetensors::DType firstScale =
      decodedScales ? artifact::scaleDType(d) : q.scales.dtype;
  const std::optional<safetensors::DType> zeroDType =
      !q.zeros   ? std::nullopt
      : d.nested ? std::optional(artifact::scaleDType(d))
                 : std::optional(q.zeros->dtype);
  if (dtypeOf(argTypeOf(k.scale)) != firstScale)
    return makeError(where, ".scale: ", qtensor::toString(k.scale), ", but", of,
                     decodedScales ? " decodes scales to "
                                   : " stores scales as ",
                     safetensors::dtypeName(firstScale));

  // Packed words: the kernel layout's geometry for these codes.
  KernelLayoutKind kind;
  if (!parseKernelLayoutFamily(k.layout, kind))
    return makeError(where, ".layout: \"", k.layout,
                     "\" is not a kernel layout this build packs");
  KernelLayoutSpec spec{kind, d.code.bits, d.code.isSigned};
  auto geometry = kernelLayoutGeometry(spec, k.n, k.k);
  if (!geometry)
    return makeError(where, ".layout: ", k.layout, " cannot hold", of, ": ",
                     geometry.message());
  uint64_t words = geometry->bytes / 4;
  const KernelArg &w = *k.arg(ArgRole::W);
  if (elements(w.shape) != words)
    return makeError(where, ".args: w has shape ", shapeToString(w.shape), " (",
                     elements(w.shape), " words), but ", k.layout, " packs ",
                     op.n(), " x ", op.k(), " ", d.code.bits, "-bit codes", of,
                     " into ", words, " 32-bit words");
  const KernelArg &sArg = *k.arg(ArgRole::S);
  if (elements(sArg.shape) != elements(q.scales.shape))
    return makeError(where, ".args: s has shape ", shapeToString(sArg.shape),
                     ", but", of, " stores scales of shape ",
                     shapeToString(q.scales.shape));
  QTENSOR_TRY(checkNestedArgs(k, q, where, of));
  const KernelArg *z = k.arg(ArgRole::Z);
  if (bool(z) != q.zeros.has_value())
    return makeError(where, ".args: ", z ? "has" : "lacks",
                     " a zero-point argument z, but", of,
                     q.zeros ? " stores zero-points" : " is symmetric");
  if (z && k.nested) {
    if (!k.minZero)
      return makeError(where, ".code.zero_point: integer, but", of,
                       " stores a min");
    if (elements(z->shape) != elements(q.zeros->shape))
      return makeError(where, ".args: z has shape ", shapeToString(z->shape),
                       ", but", of, " stores min codes of shape ",
                       shapeToString(q.zeros->shape));
  } else if (z) {
    const bool minStored = d.zeroPoint == ZeroPointKind::Min;
    if (k.minZero != minStored)
      return makeError(
          where, ".code.zero_point: ", k.minZero ? "min" : "integer", ", but",
          of, " stores zero-point ", qtensor::toString(d.zeroPoint));
    safetensors::DType want =
        k.minZero ? dtypeOf(argTypeOf(k.scale)) : safetensors::DType::U8;
    if (*zeroDType != want)
      return makeError(where, ".args: z reads ", safetensors::dtypeName(want),
                       " zero-points, but", of, " stores them as ",
                       safetensors::dtypeName(*zeroDType));
    if (elements(z->shape) != elements(q.zeros->shape))
      return makeError(where, ".args: z has shape ", shapeToString(z->shape),
                       ", but", of, " stores zero-points of shape ",
                       shapeToString(q.zeros->shape));
  }
  return Status::ok();
}

/// A mixed_2416 kernel's record against the mixed tensor it binds: the
/// descriptor fields it was specialized for and the streams' dtypes.
Status checkMixedInstanceAgainstOp(const KernelInstance &k, const OpPlan &op,
                                   const artifact::Mixed2416Tensor &mx,
                                   bool biasApplies) {
  QTENSOR_TRY(checkSignatureAgainstOp(k, op, biasApplies));
  std::string where = k.where();
  std::string of = " (tensor \"" + op.tensor + "\")";
  if (!k.mixed)
    return makeError(where, ".layout: ",
                     k.isReference() ? std::string("reference (full-dequant)")
                                     : "\"" + k.layout + "\"",
                     ", but", of,
                     " is a mixed_2416 tensor, which only the mixed_2416 "
                     "GEMV reads");
  const Mixed2416Descriptor &d = mx.logical;
  const artifact::KernelEntry::MixedStreams &m = *k.mixed;
  if (m.firstGroupSize != d.firstGroupSize ||
      m.secondGroupSize != d.secondGroupSize)
    return makeError(where, ".mixed: G1 = ", m.firstGroupSize,
                     ", G2 = ", m.secondGroupSize, ", but", of,
                     " has G1 = ", d.firstGroupSize,
                     ", G2 = ", d.secondGroupSize);
  if (m.secondType != d.secondType ||
      dtypeOf(argTypeOf(m.secondType)) != mx.secondScales.dtype ||
      dtypeOf(argTypeOf(m.secondType)) != mx.secondZeroPoints.dtype)
    return makeError(where,
                     ".mixed.second_type: ", qtensor::toString(m.secondType),
                     ", but", of, " stores its second level as ",
                     safetensors::dtypeName(mx.secondScales.dtype));
  if (m.sparseType != d.sparseType ||
      dtypeOf(argTypeOf(m.sparseType)) != mx.sparseValues.dtype)
    return makeError(where,
                     ".mixed.sparse_type: ", qtensor::toString(m.sparseType),
                     ", but", of, " stores its outliers as ",
                     safetensors::dtypeName(mx.sparseValues.dtype));
  if (m.sparse != d.sparse)
    return makeError(where, ".mixed.sparse: ", toString(m.sparse), ", but", of,
                     " has ", toString(d.sparse), " semantics");
  return Status::ok();
}

struct Planner {
  const artifact::Manifest &m;
  const std::vector<KernelInstance> &instances;
  const PlanOptions &options;
  RunPlan &plan;
  const kernels::KernelRegistry &registry = kernels::builtinRegistry();
  std::map<std::string, std::vector<const KernelInstance *>> byTensor;
  /// The fallback policy of the op being planned: the override, else its
  /// binding's.
  FallbackPolicy policy = FallbackPolicy::Forbid;

  std::string policyText() const {
    return std::string("fallback=") + kernels::toString(policy) + " (" +
           (options.fallback ? "override" : "artifact") + ")";
  }

  /// A GPU artifact carries, for each GPU kernel instance, a host twin:
  /// the registry's host kernel for the selected kernel's layout and phases
  /// (KernelRegistry::hostTwin), so it also runs where no GPU is.
  bool isHostTwinOf(const KernelInstance &k, const std::string &selected) {
    const kernels::KernelCapability *gpu = registry.findKernel(selected);
    const kernels::KernelCapability *twin =
        gpu ? registry.hostTwin(*gpu) : nullptr;
    return twin && twin != gpu && twin->id == k.registryId &&
           k.target.backend == kernels::Backend::Host;
  }

  /// A cubin runs only on its own architecture; elsewhere the driver JITs
  /// the PTX (docs/kernel-abi.md). Keeps one format per phase. A cubin is
  /// machine code from the artifact: only a trusted one's.
  void keepOneGpuFormat(PhasePlan &p) const {
    if (options.target.backend != kernels::Backend::Cuda)
      return;
    bool exactCubin =
        options.cubins &&
        std::any_of(p.instances.begin(), p.instances.end(),
                    [&](const KernelInstance *k) {
                      return k->format == KernelFormat::Cubin &&
                             k->target.name == options.target.name;
                    });
    KernelFormat keep = exactCubin ? KernelFormat::Cubin : KernelFormat::Ptx;
    p.instances.erase(std::remove_if(p.instances.begin(), p.instances.end(),
                                     [&](const KernelInstance *k) {
                                       return k->format != keep;
                                     }),
                      p.instances.end());
  }

  /// The full-dequant kernel must itself be admitted (policy, target,
  /// representation) before an op may fall back to it.
  Status admitFallback(const OpPlan &op, Phase phase, PhasePlan &out,
                       const std::string &why) {
    const kernels::KernelCapability *fd =
        registry.findKernel("full_dequant_linear");
    std::string what = "op \"" + op.tensor + "\" " + kernels::toString(phase);
    if (!fd)
      return makeError(what, ": ", why,
                       "; this build's registry has no full-dequant kernel");
    kernels::Target host{"host", kernels::Backend::Host, 0};
    kernels::Verdict v =
        kernels::admit(registry, *fd, op.signature,
                       {phase, kernels::phaseTokens(phase)}, host, policy);
    if (!v.accepted())
      return makeError(what, ": ", why,
                       "; the full-dequant fallback is not "
                       "admitted either: ",
                       v.reason(), " [", policyText(), "]");
    out.fallback = true;
    out.reason = why;
    if (policy == FallbackPolicy::Warn)
      plan.warnings.push_back(what +
                              ": runs the full-dequant fallback: " + why);
    return Status::ok();
  }

  Expected<PhasePlan> planPhase(OpPlan &op, const artifact::PhaseBinding &pb,
                                const artifact::QuantizedTensor &q,
                                bool biasApplies) {
    PhasePlan p;
    p.phase = pb.phase;
    std::string what =
        "op \"" + op.tensor + "\" " + kernels::toString(pb.phase);
    if (pb.fallback) {
      if (policy == FallbackPolicy::Forbid)
        return makeError(what,
                         ": the artifact runs the full-dequant "
                         "fallback (selected at compile time), "
                         "forbidden by ",
                         policyText());
      for (const KernelInstance *k : byTensor[op.tensor])
        if (k->phase == pb.phase && k->isReference()) {
          if (k->registryId != pb.kernel)
            return makeError(k->where(), ".registry_id: \"", k->registryId,
                             "\", but the op's binding selects \"", pb.kernel,
                             "\" for ", what);
          QTENSOR_TRY(checkInstanceAgainstOp(*k, op, q, biasApplies));
        }
      QTENSOR_TRY(admitFallback(op, pb.phase, p,
                                "the artifact selected " + pb.kernel +
                                    " at compile time"));
      return p;
    }
    std::vector<std::string> rejected;
    bool any = false;
    // A kernel whose entries each take one T up to chunkRows (W8A8) runs
    // prefill through its decode records, in chunks.
    const kernels::KernelCapability *bound = registry.findKernel(pb.kernel);
    const bool chunked =
        pb.phase == Phase::Prefill && bound && bound->chunkRows > 0;
    const Phase recordPhase = chunked ? Phase::Decode : pb.phase;
    for (const KernelInstance *k : byTensor[op.tensor]) {
      if (k->phase != recordPhase || k->isReference())
        continue;
      any = true;
      if (k->registryId != pb.kernel && !isHostTwinOf(*k, pb.kernel))
        return makeError(k->where(), ".registry_id: \"", k->registryId,
                         "\", but the op's binding selects \"", pb.kernel,
                         "\" for ", what);
      QTENSOR_TRY(checkInstanceAgainstOp(*k, op, q, biasApplies));
      if (k->target.backend != options.target.backend) {
        rejected.push_back(k->id + ": built for " + k->target.name +
                           ", this run uses " + options.target.name);
        continue;
      }
      const kernels::KernelCapability *cap = registry.findKernel(k->registryId);
      if (!cap) {
        rejected.push_back(k->id + ": registry kernel \"" + k->registryId +
                           "\" is not in this build's registry");
        continue;
      }
      if (!cap->layout || cap->layout->family != k->layout)
        return makeError(k->where(), ".layout: \"", k->layout,
                         "\", but registry kernel ", cap->id, " reads ",
                         cap->layout ? kernels::toString(*cap->layout)
                                     : std::string("any layout"));
      // The runtime splits rows only for a kernel built to take any range
      // of them: a claim the registry does not make is a corrupt artifact.
      if (k->rowSplit && !cap->rowSplit)
        return makeError(k->where(),
                         ".row_split: true, but "
                         "registry kernel ",
                         cap->id, " computes whole outputs only");
      if (k->activationQuant &&
          options.target.backend == kernels::Backend::Cuda) {
        rejected.push_back(k->id + ": the CUDA backend does not run the "
                                   "per-token activation quantizer yet");
        continue;
      }
      kernels::Verdict v =
          kernels::admit(registry, *cap, op.signature, {recordPhase, k->tokens},
                         options.target, policy);
      if (!v.accepted()) {
        rejected.push_back(k->id + " (" + cap->id + "): " + v.reason());
        continue;
      }
      p.instances.push_back(k);
      p.loadTimeRepack |= op.signature.layout.family != k->layout;
    }
    keepOneGpuFormat(p);
    if (!p.instances.empty() && chunked)
      p.chunkRows = bound->chunkRows;
    if (!p.instances.empty()) {
      p.reason = "admitted by this build's registry on " + options.target.name;
      if (chunked)
        p.reason += ", its decode entries in chunks of " +
                    std::to_string(p.chunkRows) + " rows";
      for (const KernelInstance *k : p.instances)
        plan.files.insert(k->codeFile());
      return p;
    }
    std::string why =
        !any ? "the artifact has no kernel instance for it (its binding "
               "selects " +
                   pb.kernel + ")"
             : "no kernel instance admitted: ";
    for (size_t i = 0; i < rejected.size(); ++i)
      why += (i ? "; " : "") + rejected[i];
    if (policy == FallbackPolicy::Forbid)
      return makeError(what, ": ", why, " [", policyText(), "]");
    QTENSOR_TRY(admitFallback(op, pb.phase, p, why));
    return p;
  }

  /// A mixed_2416 op's phase: its decode GEMV records, checked against the
  /// tensor and re-admitted (Mixed2416Admission.h) at every T an entry
  /// point takes. Prefill runs the same records on chunks of at most their
  /// largest T. There is no full-dequant fallback for the family.
  Expected<PhasePlan> planMixedPhase(OpPlan &op,
                                     const artifact::PhaseBinding &pb,
                                     const artifact::Mixed2416Tensor &mx,
                                     bool biasApplies) {
    PhasePlan p;
    p.phase = pb.phase;
    std::string what =
        "op \"" + op.tensor + "\" " + kernels::toString(pb.phase);
    const kernels::Mixed2416Capability &cap =
        kernels::mixed2416DecodeGemvCapability();
    if (pb.fallback || pb.kernel != cap.name)
      return makeError(what, ": its binding selects ", pb.kernel,
                       pb.fallback ? " (the full-dequant fallback)" : "",
                       ", but a mixed_2416 weight runs only ", cap.name);
    std::vector<std::string> rejected;
    bool any = false;
    for (const KernelInstance *k : byTensor[op.tensor]) {
      if (k->phase != Phase::Decode)
        continue; // the family's records are decode; prefill reuses them
      any = true;
      if (k->registryId != cap.name)
        return makeError(k->where(), ".registry_id: \"", k->registryId,
                         "\", but the op's binding selects \"", pb.kernel,
                         "\" for ", what);
      QTENSOR_TRY(checkMixedInstanceAgainstOp(*k, op, mx, biasApplies));
      if (k->target.backend != options.target.backend) {
        rejected.push_back(k->id + ": built for " + k->target.name +
                           ", this run uses " + options.target.name);
        continue;
      }
      std::string refused;
      for (const EntryPoint &e : k->entries) {
        kernels::Verdict v = kernels::admitMixed2416(
            cap, mx.logical, op.activation, e.tokens.min, op.signature.ranks,
            options.target);
        if (!v.accepted()) {
          refused = "T = " + std::to_string(e.tokens.min) + ": " + v.reason();
          break;
        }
      }
      if (!refused.empty()) {
        rejected.push_back(k->id + " (" + cap.name + "): " + refused);
        continue;
      }
      if (pb.phase == Phase::Prefill) {
        if (k->tokens.min != 1) {
          rejected.push_back(
              k->id + ": starts at T = " + std::to_string(k->tokens.min) +
              ", so its entries cannot cover chunks of T");
          continue;
        }
        p.chunkRows = p.chunkRows ? std::min(p.chunkRows, *k->tokens.max)
                                  : *k->tokens.max;
      }
      p.instances.push_back(k);
    }
    keepOneGpuFormat(p);
    if (!p.instances.empty()) {
      p.reason = "admitted by this build's mixed_2416 predicate on " +
                 options.target.name;
      if (p.chunkRows)
        p.reason += ", in chunks of " + std::to_string(p.chunkRows) + " rows";
      for (const KernelInstance *k : p.instances)
        plan.files.insert(k->codeFile());
      return p;
    }
    std::string why =
        !any ? "the artifact has no " + cap.name + " instance for it"
             : "no kernel instance admitted: ";
    for (size_t i = 0; i < rejected.size(); ++i)
      why += (i ? "; " : "") + rejected[i];
    return makeError(what, ": ", why,
                     " (a mixed_2416 weight has no full-dequant fallback)");
  }

  Status run() {
    std::map<std::string, const artifact::OpBinding *> bindingOf;
    for (const artifact::OpBinding &b : m.bindings)
      bindingOf[b.op] = &b;
    for (const KernelInstance &k : instances)
      for (const std::string &t : k.ops)
        byTensor[t].push_back(&k);

    std::set<std::string> mappedOps;
    std::set<std::string> wanted(options.ops.begin(), options.ops.end()),
        matched;
    for (const artifact::TensorEntry &t : m.tensors) {
      const artifact::QuantizedTensor *q = t.quantized();
      const artifact::Mixed2416Tensor *mx = t.mixed2416();
      // The embedding table is read by the decoder program, not run as an
      // op (validateManifest: no binding names it).
      if (q ? q->use != artifact::TensorUse::Linear : !mx)
        continue;
      const std::vector<int64_t> &shape = t.logicalShape();
      auto [opName, rankSuffix] = splitRankName(t.name);
      if (rankSuffix && *rankSuffix >= plan.tp)
        return makeError("manifest tensor \"", t.name, "\": rank ", *rankSuffix,
                         " is not below topology.tp = ", plan.tp);
      auto bound = bindingOf.find(opName);
      if (bound == bindingOf.end())
        return makeError("manifest tensor \"", t.name,
                         "\": no manifest.bindings entry binds op \"", opName,
                         "\"");
      const artifact::OpBinding &b = *bound->second;
      mappedOps.insert(opName);
      if (rankSuffix && *rankSuffix != plan.rank)
        continue; // another rank's slice
      if (!wanted.empty()) {
        bool hit = wanted.count(t.name) || wanted.count(opName);
        if (!hit)
          continue;
        matched.insert(wanted.count(t.name) ? t.name : opName);
      }
      if (shape.size() != 2)
        return makeError("manifest tensor \"", t.name,
                         "\": a linear weight is 2-D, this one has shape ",
                         shapeToString(shape));
      if (mx && (rankSuffix || b.ranks.size() > 1))
        return makeError(
            "manifest tensor \"", t.name,
            "\": a mixed_2416 weight runs whole on one rank; op \"", opName,
            "\" is bound over ", b.ranks.size(), " ranks");

      OpPlan op;
      op.tensor = t.name;
      op.op = opName;
      op.entry = &t;
      using kernels::Topology;
      if (rankSuffix && !b.sliced())
        return makeError("manifest tensor \"", t.name,
                         "\" is a rank slice, but op \"", opName,
                         "\" is bound ", kernels::toString(b.topology),
                         " over ", b.ranks.size(), " rank(s)");
      if (!rankSuffix && b.sliced())
        return makeError("manifest tensor \"", t.name,
                         "\" is whole, but its binding slices op \"", opName,
                         "\" over ", b.ranks.size(), " ranks");
      if (b.ranks.size() > 1 && int64_t(b.ranks.size()) != plan.tp)
        return makeError("op \"", opName, "\": its binding places it on ",
                         b.ranks.size(), " ranks, topology.tp is ", plan.tp);
      size_t r = b.ranks.size() > 1 ? size_t(plan.rank) : 0;
      op.slice = b.ranks[r];
      if (shape != std::vector<int64_t>{op.slice.n, op.slice.k})
        return makeError("manifest tensor \"", t.name, "\" has shape ",
                         shapeToString(shape), ", but the binding gives rank ",
                         plan.rank, " of op \"", opName, "\" the slice [",
                         op.slice.n, ", ", op.slice.k, "]");
      op.activation = b.activation;
      op.output = b.output;
      kernels::OpSignature &sig = op.signature;
      if (q) {
        sig.descriptor = q->logical.descriptor;
        sig.layout = q->logical.layout;
      } else {
        op.mixed = &mx->logical;
        sig.representation = "mixed_2416";
      }
      sig.activation = b.activation;
      sig.activationQuant = b.activationQuant;
      sig.accumulator = b.accumulator;
      sig.output = b.output;
      sig.epilogue = b.epilogue;
      sig.n = b.n;
      sig.k = b.k;
      sig.topology = b.topology;
      sig.biasAfterReduce = b.biasAfterReduce;
      sig.ranks = b.ranks;
      policy = options.fallback ? *options.fallback : b.fallbackPolicy;

      // A row-parallel op's kernels write partial sums; its bias is added
      // once, after the all-reduce, never by a kernel (docs/kernel-abi.md).
      bool biasApplies =
          b.epilogue == kernels::Epilogue::Bias && b.topology != Topology::Row;
      if (biasApplies) {
        std::string name = biasTensorName(
            opName, plan.rank, rankSuffix && b.topology == Topology::Column);
        const artifact::TensorEntry *bias = m.findTensor(name);
        if (!bias || !bias->plain())
          return makeError("op \"", t.name,
                           "\" has a bias epilogue, but the "
                           "manifest has no plain tensor \"",
                           name, "\"");
        if (bias->plain()->shape != std::vector<int64_t>{op.slice.n})
          return makeError("bias \"", name, "\" has shape ",
                           shapeToString(bias->plain()->shape), ", expected [",
                           op.slice.n, "]");
        if (!safetensors::isFloatDType(bias->plain()->dtype))
          return makeError("bias \"", name, "\" has dtype ",
                           safetensors::dtypeName(bias->plain()->dtype),
                           ", expected a float dtype");
        op.bias = name;
        plan.files.insert(bias->file);
      }

      for (const artifact::PhaseBinding &pb : b.phases) {
        QTENSOR_ASSIGN_OR_RETURN(PhasePlan p,
                                 q ? planPhase(op, pb, *q, biasApplies)
                                   : planMixedPhase(op, pb, *mx, biasApplies));
        op.phases.push_back(std::move(p));
      }
      if (op.phases.empty())
        return makeError("op \"", t.name,
                         "\": its binding selects no kernel for any phase");
      plan.files.insert(t.file);
      plan.ops.push_back(std::move(op));
    }
    for (const artifact::OpBinding &b : m.bindings)
      if (!mappedOps.count(b.op))
        return makeError("manifest.bindings op \"", b.op,
                         "\" has no quantized tensor in the manifest");
    for (const std::string &w : wanted)
      if (!matched.count(w)) {
        std::string some;
        size_t shown = 0;
        for (const artifact::OpBinding &b : m.bindings)
          if (shown++ < 3)
            some += (shown > 1 ? ", " : "") + b.op;
        return makeError("--op \"", w, "\": no quantized op of rank ",
                         plan.rank, " has that name (ops include ", some, ")");
      }
    return Status::ok();
  }
};

} // namespace

Expected<RunPlan>
qtensor::runtime::planRun(const artifact::Manifest &manifest,
                          const std::vector<KernelInstance> &instances,
                          const PlanOptions &options) {
  RunPlan plan;
  plan.tp = manifest.topology.tp;
  if (options.rank < 0 || options.rank >= plan.tp)
    return makeError("rank ", options.rank, " is outside [0, ", plan.tp,
                     ") (topology.tp = ", plan.tp, ")");
  plan.rank = options.rank;
  plan.target = options.target;
  // The summary: the override, else the bindings' policy (the most
  // permissive one where ops differ; each op plans under its own).
  if (options.fallback) {
    plan.policy = *options.fallback;
    plan.policySource = "override";
  } else if (manifest.bindings.empty()) {
    plan.policySource = "default";
  } else {
    plan.policy = manifest.bindings.front().fallbackPolicy;
    plan.policySource = "artifact";
    for (const artifact::OpBinding &b : manifest.bindings)
      if (b.fallbackPolicy != plan.policy) {
        plan.policy = std::max(plan.policy, b.fallbackPolicy);
        plan.policySource = "artifact, per op";
      }
  }
  Planner planner{
      manifest, instances, options, plan, kernels::builtinRegistry(), {}};
  QTENSOR_TRY(planner.run());
  return plan;
}
