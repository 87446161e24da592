//===- KernelInstances.cpp - The kernels a dispatched module needs --------===//
//
// Reads each dispatched qtensor.linear through the same signature the
// admission predicate saw (SelectLayoutsSignature), turns its selected
// kernel and every stored slice into a kernel spec, and keeps one instance
// per distinct spec. The generated kernels' limits are checked again here:
// a hand-written dispatch attribute must not produce a wrong kernel.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelInstances.h"

#include "qtensor/Transforms/LinearSignature.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"
#include "qtensor/Kernels/Mixed2416Admission.h"
#include "qtensor/Kernels/Registry.h"
#include "qtensor/Numerics/KernelLayout.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;
namespace kernels = qtensor::kernels;

namespace qtensor {

std::vector<kernels::Phase> KernelInstance::phases() const {
  std::vector<kernels::Phase> result;
  for (kernels::Phase p : {kernels::Phase::Decode, kernels::Phase::Prefill})
    if (llvm::any_of(uses,
                     [&](const KernelInstanceUse &u) { return u.phase == p; }))
      result.push_back(p);
  return result;
}

namespace {

/// The slices a weight is stored as: one per rank for column and row
/// placements, one whole copy otherwise (a replicated weight is stored once
/// and every rank reads it).
struct StoredSlice {
  int64_t rank, ranks, n, k;
};

std::vector<StoredSlice> storedSlices(const kernels::OpSignature &sig) {
  if (sig.topology != kernels::Topology::Column &&
      sig.topology != kernels::Topology::Row)
    return {{0, 1, sig.n, sig.k}};
  std::vector<StoredSlice> slices;
  const int64_t ranks = static_cast<int64_t>(sig.ranks.size());
  for (int64_t r = 0; r < ranks; ++r)
    slices.push_back({r, ranks, sig.ranks[r].n, sig.ranks[r].k});
  return slices;
}

/// The builder family of each registry kernel with generated code
/// (lib/Kernels/Registry.cpp names them; docs/kernels.md lists both).
std::optional<KernelFamily>
generatorOf(const kernels::KernelCapability &kernel) {
  static const std::pair<const char *, KernelFamily> kGenerators[] = {
      {"affine_gemv_decode_sm80", KernelFamily::DecodeGemv},
      {"affine_gemv_decode_host", KernelFamily::DecodeGemv},
      {"affine_mma_prefill_sm80", KernelFamily::PrefillMma},
      {"affine_gemm_prefill_host", KernelFamily::PrefillMma},
      {"affine_gemm_host", KernelFamily::HostGemm},
      {"affine_gemm_host_xq8", KernelFamily::HostGemm},
  };
  for (const auto &[id, family] : kGenerators)
    if (kernel.id == id)
      return family;
  return std::nullopt;
}

/// The part of a spec that is the same for every slice, or the reason the
/// generated kernels cannot run this linear.
Expected<QuantKernelSpec> baseSpec(const kernels::KernelCapability &kernel,
                                   const kernels::OpSignature &sig) {
  KernelLayoutKind kind;
  if (!kernel.layout || !parseKernelLayoutFamily(kernel.layout->family, kind))
    return makeError("no generator builds kernels reading ",
                     kernel.layout ? kernels::toString(*kernel.layout)
                                   : std::string("any layout"));
  kernels::LayoutId stored = kernels::LayoutId::of(sig.layout);
  if (stored != *kernel.layout)
    return makeError("the kernel reads ", kernels::toString(*kernel.layout),
                     " but the weight is stored as ",
                     kernels::toString(stored));
  if (sig.representation != "affine")
    return makeError("representation ", sig.representation,
                     " has no generated kernel");
  const AffineDescriptor &d = sig.descriptor;
  QuantKernelSpec spec;
  std::optional<KernelFamily> family = generatorOf(kernel);
  if (!family)
    return makeError("no generator builds registry kernel ", kernel.id);
  spec.family = *family;
  if (spec.layout().kind != kind)
    return makeError("registry kernel ", kernel.id, " reads ",
                     kernels::toString(*kernel.layout),
                     ", its generator another layout");
  spec.bits = d.code.bits;
  spec.symmetric = d.code.isSigned;
  spec.minZero = !d.code.isSigned && d.zeroPoint == ZeroPointKind::Min;
  spec.codebook = d.codebook;
  // 2-, 3-, 5- and 6-bit codes (Q2_K, Q3_K, Q5_x, Q6_K) are byte fields
  // in every family.
  if (d.code.bits < 2 || d.code.bits == 7 || d.code.bits > 8)
    return makeError(d.code.bits, "-bit codes have no generated kernel");
  if (d.code.isSigned || d.codebook != Codebook::None
          ? d.zeroPoint != ZeroPointKind::None
          : d.zeroPoint != ZeroPointKind::Integer && !spec.minZero)
    return makeError("zero-point ", toString(d.zeroPoint), " with ",
                     d.code.isSigned ? "signed" : "unsigned",
                     " codes: the generated kernels take signed codes "
                     "symmetric and unsigned codes with an integer "
                     "zero-point or a min");
  // An act-order permutation changes no kernel: its layout holds K in
  // group order and the runtime gathers x to match (QuantizedStorage.h).
  if (d.granularity == Granularity::Group && d.axis == 1)
    spec.groupSize = d.groupSize;
  else if (d.granularity == Granularity::PerAxis && d.axis == 0)
    spec.groupSize = 0;
  else
    return makeError("scales must be grouped along K or per output channel");
  if (sig.activation == FloatType::F32)
    return makeError("activation ", toString(sig.activation),
                     " has no generated kernel (f16, bf16)");

  if (sig.accumulator != FloatType::F32)
    return makeError("accumulator ", toString(sig.accumulator),
                     " has no generated kernel (f32)");
  spec.activation = sig.activation;
  spec.scale = d.scaleType;
  // Every family reads a nested descriptor's two levels as stored (one
  // byte per group, a 16-bit value per super-group) where every slice
  // holds whole super-groups, the host GEMM where its rows are also short
  // enough for its stack rows; other slices read the first level decoded
  // at load.
  auto readsLevels = [&] {
    for (const StoredSlice &slice : storedSlices(sig))
      if (slice.k % d.nested->superGroupSize != 0 ||
          (spec.family == KernelFamily::HostGemm &&
           slice.k / d.groupSize > kMaxNestedGroupsPerRow))
        return false;
    return true;
  };
  if (d.nested && readsLevels())
    spec.nested = QuantKernelSpec::NestedScales{d.nested->superGroupSize,
                                                d.nested->scaleCode.isSigned,
                                                d.nested->superType};
  spec.output = sig.output;
  // A row-parallel slice yields a partial sum: the bias is added once,
  // after the all-reduce, by the runtime (it is a plain tensor then).
  spec.bias = sig.epilogue == kernels::Epilogue::Bias &&
              sig.topology != kernels::Topology::Row;
  spec.rows = kDynamicRows;
  spec.splitK = 1;
  spec.quantizedActivations = kernel.activationBlock != 0;
  return spec;
}

std::string fullDequantName(const StoredSlice &slice, FloatType act,
                            FloatType out, bool bias) {
  return "qt_full_dequant_n" + std::to_string(slice.n) + "_k" +
         std::to_string(slice.k) + "_" + toString(act) + "_o" + toString(out) +
         (bias ? "_bias" : "");
}

/// Collects instances, one per distinct (kernel, name).
class Collector {
public:
  Collector(const kernels::Target &target,
            kernels::ActivationQuant activationQuant)
      : target(target), activationQuant(activationQuant) {}

  LogicalResult addLinear(qt::LinearOp op, int64_t index);

  std::vector<KernelInstance> take() { return std::move(instances); }

private:
  LogicalResult addPhase(qt::LinearOp op, const std::string &name,
                         const kernels::OpSignature &sig, kernels::Phase phase,
                         StringRef kernelId);
  LogicalResult addMixed(qt::LinearOp op, const std::string &name,
                         const kernels::OpSignature &sig, kernels::Phase phase);
  LogicalResult addW8A8(qt::LinearOp op, const std::string &name,
                        const kernels::OpSignature &sig, kernels::Phase phase,
                        const kernels::KernelCapability &kernel);
  void addUse(KernelInstance instance, const KernelInstanceUse &use);

  const kernels::Target &target;
  kernels::ActivationQuant activationQuant;
  std::vector<KernelInstance> instances;
  std::map<std::string, size_t> byKey;
};

LogicalResult Collector::addLinear(qt::LinearOp op, int64_t index) {
  auto *dialect = op->getContext()->getLoadedDialect<qt::QTensorDialect>();
  qt::DispatchAttr dispatch = dialect->getDispatchAttrHelper().getAttr(op);
  if (!dispatch)
    return success(); // not selected for any requested phase
  std::string name = qt::getLinearName(op, index);
  if (dispatch.getTarget() != target.name)
    return op.emitError("linear '")
           << name << "' was dispatched for " << dispatch.getTarget()
           << ", kernels are being generated for " << target.name;
  FailureOr<kernels::OpSignature> sig =
      qt::getLinearSignature(op, name, kernels::builtinRegistry());
  if (failed(sig))
    return failure();
  if (StringAttr id = dispatch.getDecode())
    if (failed(addPhase(op, name, *sig, kernels::Phase::Decode, id)))
      return failure();
  if (StringAttr id = dispatch.getPrefill())
    if (failed(addPhase(op, name, *sig, kernels::Phase::Prefill, id)))
      return failure();
  return success();
}

LogicalResult Collector::addPhase(qt::LinearOp op, const std::string &name,
                                  const kernels::OpSignature &sig,
                                  kernels::Phase phase, StringRef kernelId) {
  auto fail = [&]() {
    return op.emitError("linear '") << name << "': " << kernels::toString(phase)
                                    << " kernel '" << kernelId << "': ";
  };
  if (kernelId == kernels::mixed2416KernelCapability().id)
    return addMixed(op, name, sig, phase);
  const kernels::KernelCapability *kernel =
      kernels::builtinRegistry().findKernel(kernelId.str());
  if (!kernel)
    return fail() << "not in the kernel registry";
  if (!llvm::is_contained(kernel->backends, target.backend))
    return fail() << "does not run on " << target.name;
  if (!llvm::is_contained(kernel->activationQuants,
                          kernels::ActivationQuant::None))
    return addW8A8(op, name, sig, phase, *kernel);

  std::optional<QuantKernelSpec> base;
  if (!kernel->fullDequant) {
    Expected<QuantKernelSpec> spec = baseSpec(*kernel, sig);
    if (!spec)
      return fail() << spec.message();
    base = *spec;
  }
  const bool bias = sig.epilogue == kernels::Epilogue::Bias &&
                    sig.topology != kernels::Topology::Row;
  for (const StoredSlice &slice : storedSlices(sig)) {
    KernelInstance instance;
    instance.capability = kernel;
    instance.n = slice.n;
    instance.k = slice.k;
    instance.activation = sig.activation;
    instance.output = sig.output;
    instance.bias = bias;
    if (base) {
      QuantKernelSpec spec = *base;
      spec.n = slice.n;
      spec.k = slice.k;
      if (Status s = validateQuantKernelSpec(spec); !s)
        return fail() << "rank " << slice.rank << " of " << slice.ranks << ": "
                      << s.message();
      instance.spec = spec;
      instance.name = spec.name();
    } else {
      instance.name = fullDequantName(slice, sig.activation, sig.output, bias);
    }
    addUse(std::move(instance), {op, name, slice.rank, slice.ranks, phase});
  }
  return success();
}

/// Keeps one instance per (kernel, name) and records the use on it.
void Collector::addUse(KernelInstance instance, const KernelInstanceUse &use) {
  std::string key = instance.capability->id + "|" + instance.name;
  auto [it, inserted] = byKey.try_emplace(key, instances.size());
  if (inserted)
    instances.push_back(std::move(instance));
  instances[it->second].uses.push_back(use);
}

/// A mixed_2416 linear: one instance per distinct spec, its 16 entries
/// serving decode and (in chunks) prefill. The weight is stored whole.
LogicalResult Collector::addMixed(qt::LinearOp op, const std::string &name,
                                  const kernels::OpSignature &sig,
                                  kernels::Phase phase) {
  const kernels::KernelCapability &kernel =
      kernels::mixed2416KernelCapability();
  auto fail = [&]() {
    return op.emitError("linear '") << name << "': " << kernels::toString(phase)
                                    << " kernel '" << kernel.id << "': ";
  };
  if (!sig.mixed)
    return fail() << "the weight is not a mixed_2416 tensor";
  if (sig.topology != kernels::Topology::Single)
    return fail() << "a mixed_2416 tensor is placed whole (tp = 1), this one "
                  << kernels::toString(sig.topology);
  if (sig.accumulator != FloatType::F32)
    return fail() << "accumulator " << toString(sig.accumulator)
                  << " has no generated kernel (f32)";
  const bool bias = sig.epilogue == kernels::Epilogue::Bias;
  Mixed2416GemvSpec spec = mixed2416GemvSpecFor(*sig.mixed, sig.activation,
                                                sig.output, bias, /*rows=*/1);
  if (Status s = validateMixed2416GemvSpec(spec); !s)
    return fail() << s.message();
  KernelInstance instance;
  instance.capability = &kernel;
  instance.mixed = spec;
  instance.n = sig.n;
  instance.k = sig.k;
  instance.activation = sig.activation;
  instance.output = sig.output;
  instance.bias = bias;
  instance.name = mixed2416InstanceName(spec);
  addUse(std::move(instance), {op, name, 0, 1, phase});
  return success();
}

/// A linear dispatched to the W8A8 GEMV: one instance per distinct spec,
/// its 16 quantizer + GEMV pairs serving decode and (in chunks) prefill.
LogicalResult Collector::addW8A8(qt::LinearOp op, const std::string &name,
                                 const kernels::OpSignature &sig,
                                 kernels::Phase phase,
                                 const kernels::KernelCapability &kernel) {
  auto fail = [&]() {
    return op.emitError("linear '") << name << "': " << kernels::toString(phase)
                                    << " kernel '" << kernel.id << "': ";
  };
  if (!llvm::is_contained(kernel.activationQuants, activationQuant)) {
    auto diag = fail() << "takes activations";
    for (kernels::ActivationQuant a : kernel.activationQuants)
      diag << " " << kernels::toString(a);
    return diag << ", the compile's are activation-quant="
                << kernels::toString(activationQuant);
  }
  const AffineDescriptor &d = sig.descriptor;
  if (sig.representation != "affine" || d.code.bits != 8)
    return fail() << "the weight is not an affine 8-bit tensor";
  if (sig.topology != kernels::Topology::Single)
    return fail() << "runs a linear whole (tp = 1), this one is "
                  << kernels::toString(sig.topology);
  if (sig.accumulator != FloatType::F32)
    return fail() << "accumulator " << toString(sig.accumulator)
                  << " has no generated kernel (f32)";
  W8A8GemvSpec spec;
  spec.weightSymmetric = d.code.isSigned;
  spec.activationSymmetric =
      activationQuant == kernels::ActivationQuant::PerTokenSym;
  spec.groupSize = d.granularity == Granularity::Group ? d.groupSize : 0;
  spec.activation = sig.activation;
  spec.scale = d.scaleType;
  spec.output = sig.output;
  spec.bias = sig.epilogue == kernels::Epilogue::Bias;
  spec.rows = 1;
  spec.n = sig.n;
  spec.k = sig.k;
  if (Status s = validateW8A8GemvSpec(spec); !s)
    return fail() << s.message();
  KernelInstance instance;
  instance.capability = &kernel;
  instance.w8a8 = spec;
  instance.n = sig.n;
  instance.k = sig.k;
  instance.activation = sig.activation;
  instance.output = sig.output;
  instance.bias = spec.bias;
  instance.name = w8a8InstanceName(spec);
  addUse(std::move(instance), {op, name, 0, 1, phase});
  return success();
}

} // namespace

FailureOr<std::vector<KernelInstance>>
deriveKernelInstances(ModuleOp module, StringRef target,
                      kernels::ActivationQuant activationQuant) {
  std::optional<kernels::Target> parsed = kernels::parseTarget(target.str());
  if (!parsed || (target != "sm_80" && target != "sm_90" && target != "host"))
    return module.emitError("unknown kernel target '")
           << target << "', expected sm_80, sm_90 or host";
  Collector collector(*parsed, activationQuant);
  int64_t index = 0;
  WalkResult walk = module.walk([&](qt::LinearOp op) {
    return failed(collector.addLinear(op, index++)) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return collector.take();
}

std::optional<KernelFamily>
kernelFamilyOf(const kernels::KernelCapability &kernel) {
  return generatorOf(kernel);
}

KernelAbi kernelInstanceAbi(const KernelInstance &instance) {
  if (instance.w8a8) {
    // The GEMVs, one entry per T; their launch does not depend on T. The
    // quantizers' entries are w8a8QuantizerAbi's.
    KernelAbi abi = w8a8GemvAbi(*instance.w8a8);
    abi.entries.clear();
    for (const W8A8GemvSpec &e : w8a8GemvEntries(*instance.w8a8))
      abi.entries.push_back(w8a8GemvAbi(e).entries.front());
    return abi;
  }
  if (instance.mixed) {
    // One entry per T; the launch does not depend on T.
    KernelAbi abi = mixed2416GemvAbi(*instance.mixed);
    abi.entries.clear();
    for (const Mixed2416GemvSpec &e : mixed2416GemvEntries(*instance.mixed))
      abi.entries.push_back(mixed2416GemvAbi(e).entries.front());
    return abi;
  }
  if (!instance.spec)
    return {};
  return kernelAbiOf(*instance.spec);
}

LogicalResult buildKernelInstance(ModuleOp module,
                                  const KernelInstance &instance,
                                  KernelTarget target, HostCpuLevel hostCpu) {
  if (instance.mixed)
    return buildMixed2416GemvKernels(module, *instance.mixed, target,
                                     instance.name);
  if (instance.w8a8) {
    // Per T a GEMV and a quantizer (host functions, the quantizers shared
    // by the shapes of one K). On a GPU buildW8A8Kernels makes a gpu.module
    // of each; they are gathered into one named by the instance, so its
    // PTX is one file holding its own quantizers.
    std::vector<W8A8GemvSpec> entries = w8a8GemvEntries(*instance.w8a8);
    for (const W8A8GemvSpec &e : entries)
      if (failed(buildW8A8Kernels(module, e, target)))
        return failure();
    if (target == KernelTarget::Host)
      return success();
    if (module.lookupSymbol(instance.name))
      return module.emitError("kernel module '")
             << instance.name << "' already exists";
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto gathered = gpu::GPUModuleOp::create(b, module.getLoc(), instance.name);
    for (const W8A8GemvSpec &e : entries)
      for (const std::string &name : {e.quantizerName(), e.name()}) {
        auto one = module.lookupSymbol<gpu::GPUModuleOp>(name);
        if (!one)
          return module.emitError("kernel module '") << name << "' is missing";
        for (Operation &op :
             llvm::make_early_inc_range(one.getBody()->getOperations()))
          op.moveBefore(gathered.getBody(), gathered.getBody()->end());
        one.erase();
      }
    return success();
  }
  if (!instance.spec)
    return module.emitError("kernel instance '")
           << instance.name << "' is the full-dequant fallback: the runtime "
           << "runs it, nothing is generated";
  return buildKernelOf(module, *instance.spec, target, hostCpu);
}

std::vector<KernelInstance>
hostTwinInstances(ArrayRef<KernelInstance> instances) {
  const kernels::KernelRegistry &registry = kernels::builtinRegistry();
  std::vector<KernelInstance> twins;
  for (const KernelInstance &instance : instances) {
    if (instance.fullDequant())
      continue;
    // The mixed GEMV's host build is its own twin (same emitter).
    if (instance.mixed) {
      KernelInstance host = instance;
      host.name = instance.name + "_host";
      twins.push_back(std::move(host));
      continue;
    }
    const kernels::KernelCapability *twin =
        registry.hostTwin(*instance.capability);
    if (!twin || twin == instance.capability)
      continue;
    KernelInstance host = instance;
    host.name = instance.name + "_host";
    host.capability = twin;
    twins.push_back(std::move(host));
  }
  return twins;
}

void annotateKernelInstances(ArrayRef<KernelInstance> instances) {
  // linear -> phase -> instance name per slice
  std::map<Operation *, std::map<kernels::Phase, std::vector<std::string>>>
      names;
  std::vector<Operation *> order;
  for (const KernelInstance &instance : instances)
    for (const KernelInstanceUse &use : instance.uses) {
      if (!names.count(use.linear))
        order.push_back(use.linear);
      std::vector<std::string> &slot = names[use.linear][use.phase];
      slot.resize(use.ranks);
      slot[use.rank] = instance.name;
    }
  for (Operation *op : order) {
    Builder b(op->getContext());
    SmallVector<NamedAttribute> entries;
    for (const auto &[phase, slices] : names[op]) {
      SmallVector<Attribute> values;
      for (const std::string &s : slices)
        values.push_back(b.getStringAttr(s));
      entries.push_back(
          b.getNamedAttr(kernels::toString(phase), b.getArrayAttr(values)));
    }
    auto *dialect = op->getContext()->getLoadedDialect<qt::QTensorDialect>();
    dialect->getKernelsAttrHelper().setAttr(op, b.getDictionaryAttr(entries));
  }
}

} // namespace qtensor
