//===- CompileKernels.cpp - Kernel files for the artifact -----------------===//
//
// The instances come from qtensor::deriveKernelInstances, the derivation
// qtensor-instantiate-kernels uses, so the artifact's kernels are the IR's.
// sm_80/sm_90: each native instance is built into a module of its own and
// lowered to PTX (one file per instance), then assembled into a cubin when
// ptxas is present (an entry of its own, format "cubin"). host: every instance
// goes into one module, lowered to LLVM, compiled to one object and linked into
// kernels-host.so, whose exported `_mlir_ciface_` symbols are checked against
// the entries. The full-dequant fallback gets an entry without a file.
// docs/kernel-abi.md is the normative description of what is written here.
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

using json = nlohmann::json;
using kernels::Phase;

const char *dtypeOf(mlir::Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  return "i8";
}

json tokensJson(int64_t min, std::optional<int64_t> max) {
  return json::array({min, max ? json(*max) : json(nullptr)});
}

/// The T range of `phase` an instance serves: the phase's range within the
/// instance's entries.
json phaseTokens(Phase phase, const KernelAbi &abi) {
  kernels::TokenRange range = kernels::phaseTokens(phase);
  int64_t min = range.min;
  std::optional<int64_t> max = range.max;
  if (!abi.entries.empty()) {
    min = std::max(min, abi.entries.front().minRows);
    std::optional<int64_t> last = abi.entries.back().maxRows;
    if (last && (!max || *last < *max))
      max = last;
  }
  return tokensJson(min, max);
}

/// x, w, s, [z], [b], y from the entry's memref arguments (-1 for T).
json argsJson(mlir::TypeRange inputs, const KernelInstance &instance) {
  std::vector<std::string> names = {"x", "w", "s"};
  if (!instance.spec->symmetric)
    names.push_back("z");
  if (instance.spec->bias)
    names.push_back("b");
  names.push_back("y");
  // A row-split kernel's N is dynamic: the record holds the whole call's.
  const bool rowSplit = kernelInstanceAbi(instance).rowSplit;
  json args = json::array();
  for (size_t i = 0; i < inputs.size() && i < names.size(); ++i) {
    auto memref = mlir::cast<mlir::MemRefType>(inputs[i]);
    const bool hasT = names[i] == "x" || names[i] == "y";
    json shape = json::array();
    for (auto [dim, extent] : llvm::enumerate(memref.getShape())) {
      const bool isT = hasT && dim == 0;
      int64_t d = extent;
      if (mlir::ShapedType::isDynamic(d) && rowSplit && !isT)
        d = instance.n;
      shape.push_back(mlir::ShapedType::isDynamic(d) ? int64_t(-1) : d);
    }
    // Integer zero-points are bytes the kernel zero-extends (i8 in the
    // IR); a min is a float in the scale dtype.
    const char *dtype = names[i] == "z" && !instance.spec->minZero
                            ? "u8"
                            : dtypeOf(memref.getElementType());
    args.push_back({{"name", names[i]}, {"dtype", dtype}, {"shape", shape}});
  }
  return args;
}

/// The fallback's operands: what the runtime's reference path reads and
/// writes besides the stored weight tensors the manifest describes.
json fallbackArgs(const KernelInstance &instance) {
  json args = json::array();
  args.push_back({{"name", "x"},
                  {"dtype", toString(instance.activation)},
                  {"shape", {-1, instance.k}}});
  if (instance.bias)
    args.push_back({{"name", "b"},
                    {"dtype", toString(instance.output)},
                    {"shape", {instance.n}}});
  args.push_back({{"name", "y"},
                  {"dtype", toString(instance.output)},
                  {"shape", {-1, instance.n}}});
  return args;
}

/// The manifest tensor names of the instance's uses in `phase`.
json opsJson(const KernelInstance &instance, Phase phase) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const KernelInstanceUse &use : instance.uses) {
    std::string name = rankTensorName(use.weight, use.rank, use.ranks);
    if (use.phase == phase && seen.insert(name).second)
      names.push_back(name);
  }
  return names;
}

/// What every entry of an instance shares; the caller adds per-phase fields.
json baseCapability(const KernelInstance &instance, const std::string &target,
                    const std::string &format) {
  json c;
  c["registry_id"] = instance.capability->id;
  c["target"] = target;
  c["format"] = format;
  c["n"] = instance.n;
  c["k"] = instance.k;
  c["activation"] = toString(instance.activation);
  c["output"] = toString(instance.output);
  c["bias"] = instance.bias;
  if (!instance.spec) {
    c["layout"] = nullptr;
    c["execution"] = "reference";
    c["description"] =
        "no generated code: decode the stored weight with the reference "
        "decoder (include/qtensor/Descriptor/Reconstruct.h) to W_hat in f32, "
        "then y = x W_hat^T (+ b) as an f32 matmul rounded once to the "
        "output dtype";
    c["args"] = fallbackArgs(instance);
    c["split_k"] = 1;
    c["zero_output"] = false;
    return c;
  }
  const QuantKernelSpec &spec = *instance.spec;
  c["layout"] = instance.capability->layout->family;
  c["code"] = {{"bits", spec.bits}, {"signed", spec.symmetric}};
  if (spec.minZero)
    c["code"]["zero_point"] = "min";
  c["group_size"] =
      spec.groupSize == 0 ? json("per_channel") : json(spec.groupSize);
  c["scale"] = toString(spec.scaleType());
  c["split_k"] = spec.splitK;
  KernelAbi abi = kernelInstanceAbi(instance);
  c["zero_output"] = abi.zeroOutput;
  if (abi.rowSplit)
    c["row_split"] = true;
  json entries = json::array();
  for (const KernelEntryPoint &e : abi.entries)
    entries.push_back(
        {{"symbol", target == "host" ? "_mlir_ciface_" + e.symbol : e.symbol},
         {"tokens", tokensJson(e.minRows, e.maxRows)}});
  c["entries"] = entries;
  if (target != "host") {
    json launch = {{"grid", abi.launch.grid},
                   {"block", abi.launch.block},
                   {"shared_bytes", abi.launch.sharedBytes}};
    if (abi.launch.tokenAxis >= 0) {
      launch["token_axis"] = abi.launch.tokenAxis;
      launch["tokens_per_block"] = abi.launch.tokensPerBlock;
    }
    c["launch"] = launch;
  }
  return c;
}

/// One manifest entry per (instance, phase, file): an instance that serves
/// both phases (the GEMM) has two entries sharing one file, and a cubin is
/// an entry of its own (`<id>.cubin`) beside the PTX one. The artifact
/// writer renames files by content, and only an entry's `file` follows.
void addEntries(const KernelInstance &instance, json capability,
                const std::optional<std::string> &file,
                std::vector<artifact::KernelEntry> &entries,
                const std::string &idSuffix = "") {
  std::vector<Phase> phases = instance.phases();
  KernelAbi abi = kernelInstanceAbi(instance);
  for (Phase phase : phases) {
    artifact::KernelEntry entry;
    entry.id =
        (phases.size() == 1 ? instance.name
                            : instance.name + "@" + kernels::toString(phase)) +
        idSuffix;
    entry.file = file;
    json c = capability;
    c["phase"] = kernels::toString(phase);
    c["tokens"] = phaseTokens(phase, abi);
    c["ops"] = opsJson(instance, phase);
    entry.capability = std::move(c);
    entries.push_back(std::move(entry));
  }
}

mlir::TypeRange entryInputs(mlir::ModuleOp module,
                            const KernelInstance &instance, bool host) {
  const std::string first = kernelInstanceAbi(instance).entries.front().symbol;
  if (host)
    return module.lookupSymbol<mlir::func::FuncOp>(first)
        .getFunctionType()
        .getInputs();
  auto gpuModule = module.lookupSymbol<mlir::gpu::GPUModuleOp>(instance.name);
  return gpuModule.lookupSymbol<mlir::gpu::GPUFuncOp>(first)
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

/// sm_80 / sm_90: one PTX file (and cubin) per native instance.
Status compileGpu(mlir::MLIRContext &context,
                  const std::vector<KernelInstance> &instances,
                  const std::string &target, const std::string &scratch,
                  ProgressSink &progress, KernelBuild &build) {
  std::string error;
  mlir::FailureOr<PTXTarget> ptxTarget = resolvePTXTarget(target, 0, 3, error);
  if (mlir::failed(ptxTarget))
    return makeError(error);
  std::optional<std::string> ptxas = findPtxas();
  size_t done = 0;
  for (const KernelInstance &instance : instances) {
    progress.advance(++done, instances.size(), "kernel instances");
    if (instance.fullDequant()) {
      addEntries(instance, baseCapability(instance, target, "reference"),
                 std::nullopt, build.entries);
      continue;
    }
    const std::string what = "kernel instance '" + instance.name + "' (for " +
                             describeUses(instance) + ")";
    DiagnosticCapture diagnostics(context);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
    if (mlir::failed(
            buildKernelInstance(*module, instance, KernelTarget::NVPTX)))
      return diagnostics.error(what + ": generating it failed");
    json capability = baseCapability(instance, target, "ptx");
    capability["args"] =
        argsJson(entryInputs(*module, instance, false), instance);
    mlir::PassManager pm(&context);
    buildLowerToPTXPipeline(pm, *ptxTarget);
    if (mlir::failed(pm.run(*module)))
      return diagnostics.error(what + ": lowering it to PTX failed");
    std::vector<std::pair<std::string, std::string>> ptx = collectPTX(*module);
    if (ptx.size() != 1)
      return makeError(what, ": lowering produced ", ptx.size(),
                       " PTX modules, expected 1");
    const std::string ptxFile = instance.name + ".ptx";
    build.files.push_back(
        {ptxFile, artifact::FileRole::Kernel,
         std::vector<uint8_t>(ptx[0].second.begin(), ptx[0].second.end())});
    addEntries(instance, capability, ptxFile, build.entries);
    if (ptxas) {
      const std::string ptxPath = scratch + "/" + ptxFile;
      const std::string cubinPath = scratch + "/" + instance.name + ".cubin";
      {
        std::error_code ec;
        llvm::raw_fd_ostream out(ptxPath, ec);
        if (ec)
          return makeError("cannot write ", ptxPath, ": ", ec.message());
        out << ptx[0].second;
      }
      if (Status s = assembleCubin(*ptxas, target, ptxPath, cubinPath); !s)
        return makeError(what, ": ", s.message());
      QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> cubin,
                               readFileBytes(cubinPath));
      const std::string cubinFile = instance.name + ".cubin";
      build.files.push_back(
          {cubinFile, artifact::FileRole::Kernel, std::move(cubin)});
      capability["format"] = "cubin";
      addEntries(instance, std::move(capability), cubinFile, build.entries,
                 ".cubin");
    }
  }
  return Status::ok();
}

/// host: every native instance in one kernels-host.so.
Status compileHost(mlir::MLIRContext &context,
                   const std::vector<KernelInstance> &instances,
                   const std::vector<ModelKernelSpec> &modelKernels,
                   const std::string &scratch, HostCpuLevel hostCpu,
                   ProgressSink &progress, KernelBuild &build) {
  constexpr const char *kFile = "kernels-host.so";
  DiagnosticCapture diagnostics(context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  std::vector<json> capabilities;
  std::set<std::string> expected;
  for (const KernelInstance &instance : instances) {
    if (instance.fullDequant()) {
      capabilities.push_back(baseCapability(instance, "host", "reference"));
      continue;
    }
    if (mlir::failed(
            buildKernelInstance(*module, instance, KernelTarget::Host)))
      return diagnostics.error("kernel instance '" + instance.name +
                               "': generating it failed");
    json c = baseCapability(instance, "host", "host_so");
    c["args"] = argsJson(entryInputs(*module, instance, true), instance);
    c["cpu"] = toString(hostCpu);
    for (const json &e : c["entries"])
      expected.insert(e["symbol"].get<std::string>());
    capabilities.push_back(std::move(c));
  }
  // The decoder program's kernels share the library (ModelKernels.h).
  for (const ModelKernelSpec &spec : modelKernels) {
    if (mlir::failed(buildModelKernel(*module, spec)))
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
    if (mlir::failed(pm.run(*module)))
      return diagnostics.error("lowering the host kernels to LLVM failed");
    progress.advance(2, 3, "steps (build, lower, link)");
    const std::string object = scratch + "/kernels-host.o";
    const std::string shared = scratch + "/" + kFile;
    QTENSOR_TRY(emitHostObject(*module, object, hostCpu));
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
    addEntries(instances[i], std::move(capabilities[i]),
               instances[i].fullDequant() ? std::nullopt
                                          : std::optional<std::string>(kFile),
               build.entries);
  return Status::ok();
}

/// The host twins of GPU instances: the registry's host kernel that reads
/// the same layout with the same contract, built by the same emitter
/// (docs/codegen.md), under the name `<gpu instance>_host`. A GPU artifact
/// carries them so the runtime and `qtc verify` (L3) run the very bytes the
/// GPU reads on a machine without a GPU; a GPU instance without a host twin
/// (or the full-dequant fallback) gets none.
std::vector<KernelInstance>
hostTwins(const std::vector<KernelInstance> &instances) {
  const kernels::KernelRegistry &registry = kernels::builtinRegistry();
  std::vector<KernelInstance> twins;
  for (const KernelInstance &instance : instances) {
    if (instance.fullDequant())
      continue;
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

} // namespace

Expected<KernelBuild>
compileKernels(mlir::MLIRContext &context, mlir::ModuleOp module,
               const DispatchResult &dispatch, const std::string &target,
               const std::vector<ModelKernelSpec> &modelKernels,
               const std::string &scratchDir, HostCpuLevel hostCpu,
               ProgressSink &progress) {
  std::vector<KernelInstance> instances;
  {
    DiagnosticCapture diagnostics(context);
    mlir::FailureOr<std::vector<KernelInstance>> derived =
        deriveKernelInstances(module, target);
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
  Status status =
      target == "host"
          ? compileHost(context, instances, modelKernels, scratchDir, hostCpu,
                        progress, build)
          : compileGpu(context, instances, target, scratchDir, progress, build);
  if (!status)
    return status.error();
  // A GPU artifact's host library holds the twins and, until the model
  // kernels have NVPTX builds, the decoder program's kernels.
  if (target != "host") {
    std::vector<KernelInstance> twins = hostTwins(instances);
    if (!twins.empty() || !modelKernels.empty())
      QTENSOR_TRY(compileHost(context, twins, modelKernels, scratchDir, hostCpu,
                              progress, build));
  }
  return build;
}

} // namespace qtensor::compiler
