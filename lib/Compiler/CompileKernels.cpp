//===- CompileKernels.cpp - Kernel files for the artifact -----------------===//
//
// The kernels are read from the compiled module: qtensor-instantiate-kernels
// (a step of the pipeline) generated them there, and the instances are
// derived again with the same code (deriveKernelInstances) to know which
// symbols to take. sm_80/sm_90: the instances' gpu.modules are lowered in
// the module to gpu.binary ops, each binary's PTX is a file, assembled into a
// cubin when ptxas is present (an entry of its own, format "cubin"). host
// (and a GPU artifact's host twins): the instances' func.funcs move into one
// module, lowered to LLVM, compiled to one object and linked into
// kernels-host.so, whose exported `_mlir_ciface_` symbols are checked against
// the entries. The full-dequant fallback gets an entry without a file. What
// remains in the module is the graph. docs/kernel-abi.md is the normative
// description of what is written here.
//
//===----------------------------------------------------------------------===//

#include "CompileKernels.h"
#include "CompilerSupport.h"

#include "qtensor/Target/KernelToolchain.h"

#include "qtensor/Support/Progress.h"

#include "qtensor/Conversion/KernelInstances.h"
#include "qtensor/Conversion/ModelKernels.h"
#include "qtensor/Conversion/Passes.h"
#include "qtensor/Kernels/Registry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>

namespace qtensor::compiler {

using namespace target;

namespace {

using artifact::ArgRole;
using artifact::ArgType;
using artifact::KernelArg;
using artifact::KernelEntry;
using artifact::KernelFormat;
using kernels::Phase;

ArgType argTypeOf(mlir::Type t) {
  if (t.isF16())
    return ArgType::F16;
  if (t.isBF16())
    return ArgType::BF16;
  if (t.isF32())
    return ArgType::F32;
  if (t.isInteger(32))
    return ArgType::I32;
  return ArgType::I8;
}

using artifact::argTypeOf;

/// A token range with an unbounded end spelled as the record keeps it.
kernels::TokenRange tokenRange(int64_t min, std::optional<int64_t> max) {
  return {min, max ? *max : artifact::kMaxDimension};
}

/// The T range of `phase` an instance serves: the phase's range within the
/// instance's entries.
kernels::TokenRange phaseTokens(Phase phase, const KernelAbi &abi) {
  kernels::TokenRange range = kernels::phaseTokens(phase);
  int64_t min = range.min;
  std::optional<int64_t> max = range.max;
  if (!abi.entries.empty()) {
    min = std::max(min, abi.entries.front().minRows);
    std::optional<int64_t> last = abi.entries.back().maxRows;
    if (last && (!max || *last < *max))
      max = last;
  }
  return tokenRange(min, max);
}

/// x, w, s, [s2], [z], [z2], [b], y from the entry's memref arguments (-1
/// for T).
std::vector<KernelArg> argsOf(mlir::TypeRange inputs,
                              const KernelInstance &instance) {
  const QuantKernelSpec &spec = *instance.spec;
  std::vector<ArgRole> roles = {ArgRole::X, ArgRole::W, ArgRole::S};
  if (spec.nested)
    roles.push_back(ArgRole::S2);
  if (spec.takesZeroPoints())
    roles.push_back(ArgRole::Z);
  if (spec.nested && spec.minZero)
    roles.push_back(ArgRole::Z2);
  if (instance.spec->bias)
    roles.push_back(ArgRole::B);
  roles.push_back(ArgRole::Y);
  // A row-split kernel's N is dynamic: the record holds the whole call's.
  const bool rowSplit = kernelInstanceAbi(instance).rowSplit;
  std::vector<KernelArg> args;
  for (size_t i = 0; i < inputs.size() && i < roles.size(); ++i) {
    auto memref = mlir::cast<mlir::MemRefType>(inputs[i]);
    const bool hasT = roles[i] == ArgRole::X || roles[i] == ArgRole::Y;
    KernelArg arg;
    arg.role = roles[i];
    for (auto [dim, extent] : llvm::enumerate(memref.getShape())) {
      const bool isT = hasT && dim == 0;
      int64_t d = extent;
      if (mlir::ShapedType::isDynamic(d) && rowSplit && !isT)
        d = instance.n;
      arg.shape.push_back(mlir::ShapedType::isDynamic(d) ? artifact::kDynamic
                                                         : d);
    }
    // Integer zero-points are bytes the kernel zero-extends (i8 in the
    // IR); a min is a float in the scale dtype; nested scale codes are
    // bytes of their code's signedness, nested min codes unsigned.
    arg.type = argTypeOf(memref.getElementType());
    if (roles[i] == ArgRole::Z && (!spec.minZero || spec.nested))
      arg.type = ArgType::U8;
    if (roles[i] == ArgRole::S && spec.nested && !spec.nested->signedCodes)
      arg.type = ArgType::U8;
    args.push_back(std::move(arg));
  }
  return args;
}

/// A W8A8 GEMV's arguments (w8a8ArgOrder) from its entry's memrefs: T
/// dynamic in xq, sx, zx and y; the codes of asymmetric activations and
/// the weights' zero-points are bytes the kernel zero-extends (u8).
std::vector<KernelArg> w8a8Args(mlir::TypeRange inputs,
                                const KernelInstance &instance) {
  const W8A8GemvSpec &spec = *instance.w8a8;
  std::vector<ArgRole> roles = artifact::w8a8ArgOrder(
      spec.activationSymmetric, !spec.weightSymmetric, spec.bias);
  std::vector<KernelArg> args;
  for (size_t i = 0; i < inputs.size() && i < roles.size(); ++i) {
    auto memref = mlir::cast<mlir::MemRefType>(inputs[i]);
    const ArgRole role = roles[i];
    const bool hasT = role == ArgRole::XQ || role == ArgRole::SX ||
                      role == ArgRole::ZX || role == ArgRole::Y;
    KernelArg arg;
    arg.role = role;
    for (auto [dim, extent] : llvm::enumerate(memref.getShape()))
      arg.shape.push_back(hasT && dim == 0 ? artifact::kDynamic : extent);
    arg.type = argTypeOf(memref.getElementType());
    if ((role == ArgRole::XQ && !spec.activationSymmetric) ||
        role == ArgRole::Z)
      arg.type = ArgType::U8;
    args.push_back(std::move(arg));
  }
  return args;
}

/// The quantizer's entries (and GPU launch) of a W8A8 instance.
artifact::KernelEntry::ActivationQuantizer
w8a8Quantizer(const KernelInstance &instance, const std::string &target) {
  artifact::KernelEntry::ActivationQuantizer q;
  q.symmetric = instance.w8a8->activationSymmetric;
  for (const W8A8GemvSpec &e : w8a8GemvEntries(*instance.w8a8)) {
    KernelAbi abi = w8a8QuantizerAbi(e);
    const KernelEntryPoint &p = abi.entries.front();
    q.entries.push_back(
        {target == "host" ? "_mlir_ciface_" + p.symbol : p.symbol,
         tokenRange(p.minRows, p.maxRows)});
    if (target != "host" && !q.launch) {
      // Over T: a block per kDecodeWarpsPerBlock tokens.
      artifact::LaunchConfig launch;
      launch.grid = {1, 1, 1};
      launch.block = abi.launch.block;
      launch.tokenAxis = 0;
      launch.tokensPerBlock = kDecodeWarpsPerBlock;
      q.launch = launch;
    }
  }
  return q;
}

/// A mixed_2416 instance's arguments, mixed2416ArgOrder with each stream's
/// dtype and shape (Conversion/Mixed2416Kernel.h); the code and outlier
/// streams' lengths are the tensor's, and T is dynamic across the entries.
std::vector<KernelArg> mixedArgs(const KernelInstance &instance) {
  const Mixed2416GemvSpec &spec = *instance.mixed;
  const int64_t n = spec.n, groups = spec.groupsPerRow();
  std::vector<KernelArg> args;
  for (ArgRole role : artifact::mixed2416ArgOrder(spec.bias)) {
    KernelArg a{role, ArgType::I32, {artifact::kDynamic}};
    switch (role) {
    case ArgRole::X:
      a = {role, argTypeOf(spec.activation), {artifact::kDynamic, spec.k}};
      break;
    case ArgRole::Map:
      a = {role, ArgType::U8, {(n * groups + 7) / 8}};
      break;
    case ArgRole::RW4:
    case ArgRole::SR:
      a = {role, ArgType::I32, {n + 1}};
      break;
    case ArgRole::QS:
    case ArgRole::Z1:
      a = {role, ArgType::U8, {n, groups}};
      break;
    case ArgRole::S2:
    case ArgRole::Z2:
      a = {
          role, argTypeOf(spec.secondType), {n / spec.secondGroupSize, groups}};
      break;
    case ArgRole::SV:
      a = {role, argTypeOf(spec.sparseType), {artifact::kDynamic}};
      break;
    case ArgRole::B:
      a = {role, argTypeOf(spec.output), {n}};
      break;
    case ArgRole::Y:
      a = {role, argTypeOf(spec.output), {artifact::kDynamic, n}};
      break;
    default: // w2, w4, sc: i32 words of the tensor's length
      break;
    }
    args.push_back(std::move(a));
  }
  return args;
}

/// The fallback's operands: what the runtime's reference path reads and
/// writes besides the stored weight tensors the manifest describes.
std::vector<KernelArg> fallbackArgs(const KernelInstance &instance) {
  std::vector<KernelArg> args;
  args.push_back({ArgRole::X,
                  argTypeOf(instance.activation),
                  {artifact::kDynamic, instance.k}});
  if (instance.bias)
    args.push_back({ArgRole::B, argTypeOf(instance.output), {instance.n}});
  args.push_back({ArgRole::Y,
                  argTypeOf(instance.output),
                  {artifact::kDynamic, instance.n}});
  return args;
}

/// The manifest tensor names of the instance's uses in `phase`.
std::vector<std::string> opsOf(const KernelInstance &instance, Phase phase) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const KernelInstanceUse &use : instance.uses) {
    std::string name = rankTensorName(use.weight, use.rank, use.ranks);
    if (use.phase == phase && seen.insert(name).second)
      names.push_back(name);
  }
  return names;
}

/// What every entry of an instance shares; addEntries adds the per-phase
/// fields, the callers the arguments (and a host kernel's CPU level).
KernelEntry baseEntry(const KernelInstance &instance, const std::string &target,
                      KernelFormat format) {
  KernelEntry e;
  e.registryId = instance.capability->id;
  e.target = *kernels::parseTarget(target);
  e.format = format;
  e.n = instance.n;
  e.k = instance.k;
  e.activation = instance.activation;
  e.output = instance.output;
  e.bias = instance.bias;
  if (instance.mixed) {
    // The tensor's streams, as stored; one entry per T of [1, 16].
    const Mixed2416GemvSpec &spec = *instance.mixed;
    e.layout = artifact::kMixed2416Layout;
    e.mixed = artifact::KernelEntry::MixedStreams{
        spec.firstGroupSize, spec.secondGroupSize, spec.secondType,
        spec.sparseType, spec.sparse};
    e.args = mixedArgs(instance);
  }
  if (instance.w8a8) {
    // The affine W8 weights in the decode_gemv layout, with the quantizer
    // beside the GEMV; the callers fill the GEMV's arguments.
    const W8A8GemvSpec &spec = *instance.w8a8;
    e.layout = instance.capability->layout->family;
    e.codeBits = 8;
    e.codeSigned = spec.weightSymmetric;
    e.groupSize = spec.groupSize;
    e.scale = spec.scaleType();
    e.activationQuant = w8a8Quantizer(instance, target);
  }
  if (instance.fullDequant()) {
    // No generated code: the runtime decodes the stored weight with the
    // reference decoder (docs/kernel-abi.md, "reference").
    e.args = fallbackArgs(instance);
    return e;
  }
  if (instance.spec) {
    const QuantKernelSpec &spec = *instance.spec;
    e.layout = instance.capability->layout->family;
    e.codeBits = spec.bits;
    e.codeSigned = spec.symmetric;
    e.minZero = spec.minZero;
    e.codebook = spec.codebook;
    e.groupSize = spec.groupSize;
    e.scale = spec.scaleType();
    if (spec.nested)
      e.nested = artifact::KernelEntry::NestedScales{
          spec.nested->superGroupSize, spec.nested->superType};
    e.splitK = spec.splitK;
  }
  KernelAbi abi = kernelInstanceAbi(instance);
  e.zeroOutput = abi.zeroOutput;
  e.rowSplit = abi.rowSplit;
  for (const KernelEntryPoint &p : abi.entries)
    e.entries.push_back(
        {target == "host" ? "_mlir_ciface_" + p.symbol : p.symbol,
         tokenRange(p.minRows, p.maxRows)});
  if (target != "host") {
    artifact::LaunchConfig launch;
    launch.grid = abi.launch.grid;
    launch.block = abi.launch.block;
    launch.sharedBytes = uint64_t(abi.launch.sharedBytes);
    if (abi.launch.tokenAxis >= 0) {
      launch.tokenAxis = abi.launch.tokenAxis;
      launch.tokensPerBlock = abi.launch.tokensPerBlock;
    }
    e.launch = launch;
  }
  return e;
}

/// One manifest entry per (instance, phase, file): an instance that serves
/// both phases (the GEMM) has two entries sharing one file, and a cubin is
/// an entry of its own (`<id>.cubin`) beside the PTX one. The artifact
/// writer renames files by content, and only an entry's `file` follows.
void addEntries(const KernelInstance &instance, const KernelEntry &base,
                const std::optional<std::string> &file,
                std::vector<KernelEntry> &entries,
                const std::string &idSuffix = "") {
  std::vector<Phase> phases = instance.phases();
  KernelAbi abi = kernelInstanceAbi(instance);
  if (instance.mixed || instance.w8a8) {
    // One decode record: the runtime runs prefill through its entries in
    // chunks of at most 16 rows, so its ops are every phase's.
    KernelEntry entry = base;
    entry.id = instance.name + idSuffix;
    entry.file = file;
    entry.phase = Phase::Decode;
    entry.tokens = phaseTokens(Phase::Decode, abi);
    std::set<std::string> seen;
    for (Phase phase : phases)
      for (std::string &op : opsOf(instance, phase))
        if (seen.insert(op).second)
          entry.ops.push_back(std::move(op));
    entries.push_back(std::move(entry));
    return;
  }
  for (Phase phase : phases) {
    KernelEntry entry = base;
    entry.id =
        (phases.size() == 1 ? instance.name
                            : instance.name + "@" + kernels::toString(phase)) +
        idSuffix;
    entry.file = file;
    entry.phase = phase;
    entry.tokens = phaseTokens(phase, abi);
    entry.ops = opsOf(instance, phase);
    entries.push_back(std::move(entry));
  }
}

/// The arguments of a host instance's first entry in `library`.
mlir::TypeRange hostEntryInputs(mlir::ModuleOp library,
                                const KernelInstance &instance) {
  const std::string first = kernelInstanceAbi(instance).entries.front().symbol;
  return library.lookupSymbol<mlir::func::FuncOp>(first)
      .getFunctionType()
      .getInputs();
}

std::string describeUses(const KernelInstance &instance) {
  std::set<std::string> names;
  for (const KernelInstanceUse &use : instance.uses)
    names.insert(use.weight);
  std::string s;
  for (const std::string &n : names) {
    if (s.size() > 200) {
      s += ", ...";
      break;
    }
    s += (s.empty() ? "" : ", ") + n;
  }
  return s;
}

/// Errors naming an instance and where its kernel should have been.
std::string missingKernel(const KernelInstance &instance,
                          const std::string &what) {
  return "the module has no " + what + " for kernel instance '" +
         instance.name + "' (for " + describeUses(instance) +
         "): qtensor-instantiate-kernels did not run on it";
}

/// sm_80 / sm_90: the instances' gpu.modules are lowered to gpu.binary ops
/// in the module, and each binary's PTX is one file (and a cubin where
/// ptxas exists). The binaries are taken out of the module.
Status compileGpu(mlir::MLIRContext &context, mlir::ModuleOp module,
                  const std::vector<KernelInstance> &instances,
                  const std::string &target, const std::string &scratch,
                  ProgressSink &progress, KernelBuild &build) {
  std::string error;
  mlir::FailureOr<PTXTarget> ptxTarget = resolvePTXTarget(target, 0, 3, error);
  if (mlir::failed(ptxTarget))
    return makeError(error);
  // The entries' arguments are the gpu.funcs' before they become binaries.
  std::map<std::string, KernelEntry> native;
  for (const KernelInstance &instance : instances) {
    if (instance.fullDequant())
      continue;
    auto gpuModule = module.lookupSymbol<mlir::gpu::GPUModuleOp>(instance.name);
    const std::string symbol =
        kernelInstanceAbi(instance).entries.front().symbol;
    auto func = gpuModule ? gpuModule.lookupSymbol<mlir::gpu::GPUFuncOp>(symbol)
                          : mlir::gpu::GPUFuncOp();
    if (!func)
      return makeError(missingKernel(instance, "gpu.module @" + instance.name +
                                                   " with @" + symbol));
    KernelEntry entry = baseEntry(instance, target, KernelFormat::Ptx);
    if (instance.w8a8)
      entry.args = w8a8Args(func.getFunctionType().getInputs(), instance);
    else if (!instance.mixed)
      entry.args = argsOf(func.getFunctionType().getInputs(), instance);
    native.emplace(instance.name, std::move(entry));
  }
  if (!native.empty()) {
    DiagnosticCapture diagnostics(context);
    mlir::PassManager pm(&context);
    buildLowerToPTXPipeline(pm, *ptxTarget);
    if (mlir::failed(pm.run(module)))
      return diagnostics.error("lowering the kernel instances to PTX failed");
  }
  std::map<std::string, std::string> ptxOf;
  for (auto &[name, ptx] : collectPTX(module))
    ptxOf[name] = std::move(ptx);
  std::optional<std::string> ptxas = findPtxas();
  size_t done = 0;
  for (const KernelInstance &instance : instances) {
    progress.advance(++done, instances.size(), "kernel instances");
    if (instance.fullDequant()) {
      addEntries(instance, baseEntry(instance, target, KernelFormat::Reference),
                 std::nullopt, build.entries);
      continue;
    }
    auto ptx = ptxOf.find(instance.name);
    if (ptx == ptxOf.end())
      return makeError(missingKernel(instance, "gpu.binary @" + instance.name +
                                                   " holding PTX"));
    KernelEntry &entry = native.at(instance.name);
    const std::string ptxFile = instance.name + ".ptx";
    build.files.push_back(
        {ptxFile, artifact::FileRole::Kernel,
         std::vector<uint8_t>(ptx->second.begin(), ptx->second.end())});
    addEntries(instance, entry, ptxFile, build.entries);
    module.lookupSymbol<mlir::gpu::BinaryOp>(instance.name)->erase();
    if (!ptxas)
      continue;
    const std::string ptxPath = scratch + "/" + ptxFile;
    const std::string cubinPath = scratch + "/" + instance.name + ".cubin";
    {
      std::error_code ec;
      llvm::raw_fd_ostream out(ptxPath, ec);
      if (ec)
        return makeError("cannot write ", ptxPath, ": ", ec.message());
      out << ptx->second;
    }
    if (Status s = assembleCubin(*ptxas, target, ptxPath, cubinPath); !s)
      return makeError("kernel instance '", instance.name, "' (for ",
                       describeUses(instance), "): ", s.message());
    QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> cubin,
                             readFileBytes(cubinPath));
    const std::string cubinFile = instance.name + ".cubin";
    build.files.push_back(
        {cubinFile, artifact::FileRole::Kernel, std::move(cubin)});
    entry.format = KernelFormat::Cubin;
    addEntries(instance, entry, cubinFile, build.entries, ".cubin");
  }
  return Status::ok();
}

/// host: every native instance's func.funcs are moved out of `module` (the
/// compiled module, or its @qtensor_host_twins) into one kernel module with
/// the decoder program's kernels, lowered to LLVM and linked into
/// kernels-host.so.
Status compileHost(mlir::MLIRContext &context, mlir::ModuleOp module,
                   const std::vector<KernelInstance> &instances,
                   const std::vector<ModelKernelSpec> &modelKernels,
                   const std::string &scratch, HostCpuLevel hostCpu,
                   ProgressSink &progress, KernelBuild &build) {
  constexpr const char *kFile = "kernels-host.so";
  DiagnosticCapture diagnostics(context);
  mlir::OwningOpRef<mlir::ModuleOp> library =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  std::vector<KernelEntry> bases;
  std::set<std::string> expected;
  for (const KernelInstance &instance : instances) {
    if (instance.fullDequant()) {
      bases.push_back(baseEntry(instance, "host", KernelFormat::Reference));
      continue;
    }
    std::vector<std::string> symbols;
    for (const KernelEntryPoint &p : kernelInstanceAbi(instance).entries)
      symbols.push_back(p.symbol);
    // A W8A8 instance's quantizers too, shared by the shapes of one K.
    if (instance.w8a8)
      for (const W8A8GemvSpec &e : w8a8GemvEntries(*instance.w8a8))
        symbols.push_back(e.quantizerName());
    for (const std::string &symbol : symbols) {
      if (library->lookupSymbol(symbol))
        continue;
      auto func = module.lookupSymbol<mlir::func::FuncOp>(symbol);
      if (!func)
        return makeError(missingKernel(instance, "func.func @" + symbol));
      func->remove();
      library->push_back(func);
    }
    KernelEntry e = baseEntry(instance, "host", KernelFormat::HostSharedObject);
    if (instance.w8a8)
      e.args = w8a8Args(hostEntryInputs(*library, instance), instance);
    else if (!instance.mixed)
      e.args = argsOf(hostEntryInputs(*library, instance), instance);
    e.cpu = hostCpu;
    for (const artifact::EntryPoint &p : e.entries)
      expected.insert(p.symbol);
    if (e.activationQuant)
      for (const artifact::EntryPoint &p : e.activationQuant->entries)
        expected.insert(p.symbol);
    bases.push_back(std::move(e));
  }
  // The decoder program's kernels share the library (ModelKernels.h): the
  // graph declares them with their specs (graphModelKernels), and their
  // bodies are built here.
  for (const ModelKernelSpec &spec : modelKernels) {
    if (mlir::failed(buildModelKernel(*library, spec)))
      return diagnostics.error("model kernel '" + spec.name() +
                               "': generating it failed");
    expected.insert(spec.symbol());
  }
  if (!modelKernels.empty())
    build.modelKernelFile = kFile;
  progress.advance(1, 3, "steps (build, lower, link)");
  if (!expected.empty()) {
    mlir::PassManager pm(&context);
    buildLowerKernelsToHostPipeline(pm);
    if (mlir::failed(pm.run(*library)))
      return diagnostics.error("lowering the host kernels to LLVM failed");
    progress.advance(2, 3, "steps (build, lower, link)");
    const std::string object = scratch + "/kernels-host.o";
    const std::string shared = scratch + "/" + kFile;
    QTENSOR_TRY(emitHostObject(*library, object, hostCpu));
    QTENSOR_TRY(linkSharedObject(object, shared));
    QTENSOR_ASSIGN_OR_RETURN(std::set<std::string> exported,
                             exportedFunctions(shared));
    for (const std::string &symbol : expected)
      if (!exported.count(symbol))
        return makeError(kFile, " does not export ", symbol);
    QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, readFileBytes(shared));
    build.files.push_back(
        {kFile, artifact::FileRole::Kernel, std::move(bytes)});
  }
  progress.advance(3, 3, "steps (build, lower, link)");
  for (size_t i = 0; i < instances.size(); ++i)
    addEntries(instances[i], bases[i],
               instances[i].fullDequant() ? std::nullopt
                                          : std::optional<std::string>(kFile),
               build.entries);
  return Status::ok();
}

} // namespace

Expected<KernelBuild>
compileKernels(mlir::MLIRContext &context, mlir::ModuleOp module,
               const DispatchResult &dispatch, const std::string &target,
               const std::vector<ModelKernelSpec> &modelKernels,
               const std::string &scratchDir, HostCpuLevel hostCpu,
               ProgressSink &progress,
               kernels::ActivationQuant activationQuant) {
  std::vector<KernelInstance> instances;
  {
    DiagnosticCapture diagnostics(context);
    mlir::FailureOr<std::vector<KernelInstance>> derived =
        deriveKernelInstances(module, target, activationQuant);
    if (mlir::failed(derived))
      return diagnostics.error("deriving the kernel instances failed");
    instances = std::move(*derived);
  }
  // Every kernel the pipeline selected has an instance, and no other.
  std::set<std::string> covered;
  for (const KernelInstance &instance : instances)
    covered.insert(instance.capability->id);
  if (covered != dispatch.kernelIds)
    return makeError("the kernel instances cover ", covered.size(),
                     " selected kernels, the dispatch selected ",
                     dispatch.kernelIds.size(), " (a qtc bug)");

  KernelBuild build;
  Status status = target == "host"
                      ? compileHost(context, module, instances, modelKernels,
                                    scratchDir, hostCpu, progress, build)
                      : compileGpu(context, module, instances, target,
                                   scratchDir, progress, build);
  if (!status)
    return status.error();
  // A GPU artifact's host library holds the twins and, until the model
  // kernels have NVPTX builds, the decoder program's kernels.
  if (target != "host") {
    std::vector<KernelInstance> twins = hostTwinInstances(instances);
    auto twinModule = module.lookupSymbol<mlir::ModuleOp>(kHostTwinsModuleName);
    if (!twins.empty() && !twinModule)
      return makeError(missingKernel(twins.front(), std::string("module @") +
                                                        kHostTwinsModuleName));
    if (!twins.empty() || !modelKernels.empty())
      QTENSOR_TRY(compileHost(context, twinModule ? twinModule : module, twins,
                              modelKernels, scratchDir, hostCpu, progress,
                              build));
    if (twinModule)
      twinModule->erase();
  }
  return build;
}

} // namespace qtensor::compiler
