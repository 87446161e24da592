//===- TrustedCode.cpp - Kernels rebuilt from an artifact's records -------===//

#include "qtensor/Compiler/TrustedCode.h"

#include "CompilerSupport.h"

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Conversion/KernelInstances.h"
#include "qtensor/Conversion/Mixed2416Kernel.h"
#include "qtensor/Conversion/ModelKernels.h"
#include "qtensor/Conversion/Passes.h"
#include "qtensor/Conversion/W8A8Kernel.h"
#include "qtensor/Formats/ModelKernelSpec.h"
#include "qtensor/InitAll.h"
#include "qtensor/Kernels/Mixed2416Admission.h"
#include "qtensor/Kernels/Registry.h"
#include "qtensor/Runtime/KernelInstance.h"
#include "qtensor/Support/FileIO.h"
#include "qtensor/Support/Sha256.h"
#include "qtensor/Target/KernelToolchain.h"

#include "QTensorRevision.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <chrono>
#include <cstdio>
#include <set>
#include <unistd.h>

namespace qtensor::compiler {
namespace {

/// The spec a kernel record describes, checked against the symbols (and, on
/// a GPU, the launch geometry) the record lists: the runtime calls what the
/// record names, so it must be what this installation builds.
Expected<QuantKernelSpec> specOfRecord(const runtime::KernelInstance &k) {
  const std::string where = k.where();
  const kernels::KernelCapability *cap =
      kernels::builtinRegistry().findKernel(k.registryId);
  if (!cap)
    return makeError(where, ": registry kernel \"", k.registryId,
                     "\" is not one this installation has");
  std::optional<KernelFamily> family = kernelFamilyOf(*cap);
  if (!family)
    return makeError(where, ": no generator builds \"", k.registryId, "\"");
  if (k.activation != FloatType::F16 && k.activation != FloatType::BF16)
    return makeError(where, ": activation ", toString(k.activation),
                     " has no generated kernel");
  QuantKernelSpec spec;
  spec.family = *family;
  spec.bits = k.codeBits;
  spec.symmetric = k.codeSigned;
  spec.minZero = k.minZero;
  spec.codebook = k.codebook;
  spec.groupSize = k.groupSize;
  spec.activation = k.activation;
  spec.scale = k.scale;
  spec.output = k.output;
  spec.bias = k.bias;
  spec.rows = kDynamicRows;
  spec.n = k.n;
  spec.k = k.k;
  spec.splitK = k.splitK;
  spec.quantizedActivations = cap->activationBlock != 0;
  if (k.nested) {
    const runtime::KernelArg *codes = k.arg(runtime::ArgRole::S);
    spec.nested = QuantKernelSpec::NestedScales{
        k.nested->superGroupSize, codes && codes->type == runtime::ArgType::I8,
        k.nested->superType};
  }
  if (Status s = validateQuantKernelSpec(spec); !s)
    return makeError(where, ": ", s.message());
  const KernelAbi abi = kernelAbiOf(spec);
  std::vector<std::string> built, recorded;
  for (const KernelEntryPoint &e : abi.entries)
    built.push_back(k.isHost() ? "_mlir_ciface_" + e.symbol : e.symbol);
  for (const runtime::EntryPoint &e : k.entries)
    recorded.push_back(e.symbol);
  if (built != recorded)
    return makeError(where, ": its entries name symbols (first \"",
                     recorded.empty() ? std::string() : recorded.front(),
                     "\") that its capability does not build (it builds \"",
                     built.empty() ? std::string() : built.front(), "\"",
                     built.size() > 1 ? " and more" : "", ")");
  if (k.isGpu()) {
    const runtime::LaunchConfig &l = *k.launch;
    const KernelLaunch &want = abi.launch;
    if (l.grid != want.grid || l.block != want.block ||
        l.sharedBytes != uint64_t(want.sharedBytes) ||
        l.tokenAxis != want.tokenAxis ||
        (want.tokenAxis >= 0 && l.tokensPerBlock != want.tokensPerBlock))
      return makeError(where, ": its launch geometry is not the one its "
                              "capability builds");
  }
  return spec;
}

/// A mixed_2416 record's kernels: one spec per entry point, each T's spec
/// for the record's streams (mixed2416GemvSpecFor), checked against the
/// symbols and, on a GPU, the launch the record lists.
Expected<std::vector<Mixed2416GemvSpec>>
mixedSpecsOfRecord(const runtime::KernelInstance &k) {
  const std::string where = k.where();
  if (k.registryId != kernels::mixed2416KernelCapability().id)
    return makeError(where, ": a mixed_2416 record names registry kernel \"",
                     k.registryId, "\", not ",
                     kernels::mixed2416KernelCapability().id);
  Mixed2416Descriptor d;
  d.shape = {k.n, k.k};
  d.elementType = k.activation;
  d.firstGroupSize = k.mixed->firstGroupSize;
  d.secondGroupSize = k.mixed->secondGroupSize;
  d.secondType = k.mixed->secondType;
  d.sparseType = k.mixed->sparseType;
  d.sparse = k.mixed->sparse;
  std::vector<Mixed2416GemvSpec> specs;
  for (const runtime::EntryPoint &e : k.entries) {
    if (e.tokens.min != *e.tokens.max)
      return makeError(where, ": entry \"", e.symbol,
                       "\" takes T in a range; a mixed_2416 entry takes one");
    Mixed2416GemvSpec spec =
        mixed2416GemvSpecFor(d, k.activation, k.output, k.bias, e.tokens.min);
    if (Status s = validateMixed2416GemvSpec(spec); !s)
      return makeError(where, ": ", s.message());
    const std::string built =
        k.isHost() ? "_mlir_ciface_" + spec.name() : spec.name();
    if (built != e.symbol)
      return makeError(where, ": entry \"", e.symbol,
                       "\" for T = ", e.tokens.min,
                       " is not the symbol its record's kernel "
                       "builds (\"",
                       built, "\")");
    if (k.isGpu()) {
      const runtime::LaunchConfig &l = *k.launch;
      const KernelLaunch want = mixed2416GemvAbi(spec).launch;
      if (l.grid != want.grid || l.block != want.block ||
          l.sharedBytes != uint64_t(want.sharedBytes) || l.tokenAxis >= 0)
        return makeError(where, ": its launch geometry is not the one its "
                                "kernel builds");
    }
    specs.push_back(spec);
  }
  return specs;
}

/// A W8A8 record's kernels: one spec per entry point T (the weights' code,
/// groups and scale, the activation form, dtypes, bias), each checked to
/// build the GEMV and quantizer symbols the record lists for that T.
Expected<std::vector<W8A8GemvSpec>>
w8a8SpecsOfRecord(const runtime::KernelInstance &k) {
  const std::string where = k.where();
  const artifact::KernelEntry::ActivationQuantizer &q = *k.activationQuant;
  if (k.layout != "decode_gemv" || k.codeBits != 8 ||
      k.codebook != Codebook::None || k.minZero || k.nested || k.mixed)
    return makeError(where, ": a W8A8 record holds 8-bit affine codes in "
                            "the decode_gemv layout");
  if (q.entries.size() != k.entries.size())
    return makeError(where, ": ", q.entries.size(), " quantizer entries for ",
                     k.entries.size(), " GEMV entries");
  std::vector<W8A8GemvSpec> specs;
  for (size_t i = 0; i < k.entries.size(); ++i) {
    const runtime::EntryPoint &e = k.entries[i];
    const kernels::TokenRange &qt = q.entries[i].tokens;
    if (e.tokens.min != *e.tokens.max || qt.min != e.tokens.min ||
        qt.max != e.tokens.max)
      return makeError(where, ": entry \"", e.symbol,
                       "\" and its quantizer must take the same one T");
    W8A8GemvSpec spec;
    spec.weightSymmetric = k.codeSigned;
    spec.activationSymmetric = q.symmetric;
    spec.groupSize = k.groupSize;
    spec.activation = k.activation;
    spec.scale = k.scale;
    spec.output = k.output;
    spec.bias = k.bias;
    spec.rows = e.tokens.min;
    spec.n = k.n;
    spec.k = k.k;
    if (Status s = validateW8A8GemvSpec(spec); !s)
      return makeError(where, ": ", s.message());
    const std::string prefix = k.isHost() ? "_mlir_ciface_" : "";
    for (auto [listed, built] :
         {std::pair{e.symbol, prefix + spec.name()},
          std::pair{q.entries[i].symbol, prefix + spec.quantizerName()}})
      if (listed != built)
        return makeError(
            where, ": entry \"", listed, "\" for T = ", e.tokens.min,
            " is not the symbol its record's kernel builds (\"", built, "\")");
    specs.push_back(spec);
  }
  return specs;
}

/// The cache key of generated code: what was generated (`module`, before
/// lowering), for which target, by which source.
Expected<std::string> cacheKey(mlir::ModuleOp module,
                               const std::string &target) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << QTENSOR_SOURCE_REVISION << "\n" << target << "\n";
  module->print(os);
  return sha256Hex(reinterpret_cast<const uint8_t *>(text.data()), text.size());
}

std::string defaultCacheDir() {
  if (const char *dir = std::getenv("QTENSOR_KERNEL_CACHE"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/qtensor/kernels";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/qtensor/kernels";
  return "off";
}

/// Whether the object at `path` exports every symbol of `expected`.
bool exportsAll(const std::string &path, const std::set<std::string> &expected,
                std::string &missing) {
  auto exported = target::exportedFunctions(path);
  if (!exported) {
    missing = exported.message();
    return false;
  }
  for (const std::string &symbol : expected)
    if (!exported->count(symbol)) {
      missing = path + " does not export " + symbol;
      return false;
    }
  return true;
}

/// Writes `data` to `path` in `dir` atomically (a reader sees no file or
/// the whole one).
Status storeInCache(const std::string &dir, const std::string &path,
                    std::string_view data) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return makeError("cannot create ", dir, ": ", ec.message());
  return writeFileAtomically(path, data);
}

/// A fresh MLIR context with every dialect the generators and lowerings use.
struct KernelContext {
  mlir::DialectRegistry registry;
  mlir::MLIRContext context;
  KernelContext() : context((registerDialects(registry), registry)) {
    context.loadAllAvailableDialects();
  }
};

} // namespace

Expected<runtime::TrustedHostCode>
rebuildHostKernels(const artifact::Manifest &manifest,
                   const artifact::DecoderProgram *program,
                   const TrustedCodeOptions &options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<QuantKernelSpec> quant;
  std::vector<Mixed2416GemvSpec> mixed;
  std::vector<W8A8GemvSpec> w8a8;
  std::set<std::string> names, expected;
  std::optional<HostCpuLevel> cpu;
  auto sameCpu = [&](HostCpuLevel level, const std::string &where) -> Status {
    if (cpu && *cpu != level)
      return makeError(where, ": built for CPU level ", toString(level),
                       ", other host code for ", toString(*cpu),
                       " (one object holds them all)");
    cpu = level;
    return Status::ok();
  };
  for (size_t i = 0; i < manifest.kernels.size(); ++i) {
    const runtime::KernelInstance k = runtime::kernelInstanceOf(manifest, i);
    if (!k.isHost())
      continue;
    QTENSOR_TRY(sameCpu(k.cpu, k.where()));
    if (k.activationQuant) {
      QTENSOR_ASSIGN_OR_RETURN(std::vector<W8A8GemvSpec> specs,
                               w8a8SpecsOfRecord(k));
      for (const W8A8GemvSpec &spec : specs) {
        expected.insert("_mlir_ciface_" + spec.name());
        expected.insert("_mlir_ciface_" + spec.quantizerName());
        if (names.insert(spec.name()).second)
          w8a8.push_back(spec);
      }
      continue;
    }
    if (k.mixed) {
      QTENSOR_ASSIGN_OR_RETURN(std::vector<Mixed2416GemvSpec> specs,
                               mixedSpecsOfRecord(k));
      for (const Mixed2416GemvSpec &spec : specs) {
        expected.insert("_mlir_ciface_" + spec.name());
        if (names.insert(spec.name()).second)
          mixed.push_back(spec);
      }
      continue;
    }
    QTENSOR_ASSIGN_OR_RETURN(QuantKernelSpec spec, specOfRecord(k));
    for (const runtime::EntryPoint &e : k.entries)
      expected.insert(e.symbol);
    if (names.insert(spec.name()).second)
      quant.push_back(spec);
  }
  std::vector<ModelKernelSpec> model;
  if (program) {
    QTENSOR_TRY(sameCpu(program->hostCpu, "program.json"));
    // The loader checked the program's symbols against these same specs.
    QTENSOR_TRY(checkProgramKernels(*program, manifest, "program.json"));
    model = programKernelSpecs(*program, manifest);
    for (const ModelKernelSpec &spec : model)
      expected.insert(spec.symbol());
  }
  if (expected.empty())
    return makeError("the artifact records no host kernels to build");

  KernelContext kc;
  mlir::MLIRContext &context = kc.context;
  DiagnosticCapture diagnostics(context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  for (const QuantKernelSpec &spec : quant)
    if (mlir::failed(buildKernelOf(*module, spec, KernelTarget::Host, *cpu)))
      return diagnostics.error("generating " + spec.name() + " failed");
  for (const Mixed2416GemvSpec &spec : mixed)
    if (mlir::failed(
            buildMixed2416GemvKernel(*module, spec, KernelTarget::Host)))
      return diagnostics.error("generating " + spec.name() + " failed");
  // Quantizers are shared by the GEMVs of one K (buildW8A8Kernels).
  for (const W8A8GemvSpec &spec : w8a8)
    if (mlir::failed(buildW8A8Kernels(*module, spec, KernelTarget::Host)))
      return diagnostics.error("generating " + spec.name() + " failed");
  for (const ModelKernelSpec &spec : model)
    if (mlir::failed(buildModelKernel(*module, spec)))
      return diagnostics.error("generating " + spec.name() + " failed");

  QTENSOR_ASSIGN_OR_RETURN(std::string key, cacheKey(*module, toString(*cpu)));
  const std::string what =
      std::to_string(quant.size() + mixed.size() + w8a8.size() + model.size()) +
      " kernels (" + std::to_string(quant.size()) + " quantized linears, " +
      (mixed.empty() ? std::string()
                     : std::to_string(mixed.size()) + " mixed_2416 entries, ") +
      (w8a8.empty() ? std::string()
                    : std::to_string(w8a8.size()) +
                          " W8A8 entries with their quantizers, ") +
      std::to_string(model.size()) + " model kernels)";
  const std::string cacheDir =
      options.cacheDir.empty() ? defaultCacheDir() : options.cacheDir;
  const bool caching = cacheDir != "off";
  const std::string cached = cacheDir + "/" + key + ".so";
  std::string missing;
  if (caching && std::filesystem::exists(cached) &&
      exportsAll(cached, expected, missing)) {
    QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                             target::readFileBytes(cached));
    return runtime::TrustedHostCode{
        std::move(bytes), "this installation's build of the artifact's " +
                              what + ", from its cache (" + cached + ")"};
  }

  ScratchDir scratch("qtc-host-code");
  if (scratch.path.empty())
    return makeError("cannot create a scratch directory");
  mlir::PassManager pm(&context);
  buildLowerKernelsToHostPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return diagnostics.error("lowering the host kernels to LLVM failed");
  const std::string object = scratch.path + "/kernels.o";
  const std::string shared = scratch.path + "/kernels.so";
  QTENSOR_TRY(target::emitHostObject(*module, object, *cpu));
  QTENSOR_TRY(target::linkSharedObject(object, shared));
  if (!exportsAll(shared, expected, missing))
    return makeError("the rebuilt host code is incomplete: ", missing);
  QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                           target::readFileBytes(shared));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  char took[32];
  std::snprintf(took, sizeof took, "%.2f s", seconds);
  std::string how = "rebuilt by this installation from the artifact's "
                    "records: " +
                    what + " in " + took;
  if (caching) {
    Status s = storeInCache(
        cacheDir, cached,
        {reinterpret_cast<const char *>(bytes.data()), bytes.size()});
    how += s ? ", cached as " + cached : " (not cached: " + s.message() + ")";
  }
  return runtime::TrustedHostCode{std::move(bytes), how};
}

Expected<std::string> rebuildGpuKernel(const artifact::Manifest &manifest,
                                       size_t index,
                                       const TrustedCodeOptions &options) {
  if (index >= manifest.kernels.size())
    return makeError("manifest.kernels[", index, "] does not exist");
  const runtime::KernelInstance k = runtime::kernelInstanceOf(manifest, index);
  if (!k.isGpu())
    return makeError(k.where(), ": not a GPU kernel");
  std::optional<QuantKernelSpec> quant;
  std::vector<Mixed2416GemvSpec> mixed;
  std::vector<W8A8GemvSpec> w8a8;
  if (k.activationQuant) {
    QTENSOR_ASSIGN_OR_RETURN(w8a8, w8a8SpecsOfRecord(k));
    // Its PTX holds the 16 GEMVs and quantizers, T = 1..16, as compiled.
    if (w8a8.size() != 16 || w8a8.front().rows != 1)
      return makeError(k.where(), ": a W8A8 GPU record lists ", w8a8.size(),
                       " entries; its PTX holds T = 1..16");
    const KernelLaunch gemv = w8a8GemvAbi(w8a8.front()).launch;
    const KernelLaunch quantizer = w8a8QuantizerAbi(w8a8.front()).launch;
    const std::optional<runtime::LaunchConfig> &ql = k.activationQuant->launch;
    if (!k.launch || k.launch->grid != gemv.grid ||
        k.launch->block != gemv.block || k.launch->tokenAxis >= 0 || !ql ||
        ql->block != quantizer.block || ql->tokenAxis != 0 ||
        ql->tokensPerBlock != kDecodeWarpsPerBlock)
      return makeError(k.where(), ": its launch geometry is not the one its "
                                  "kernels build");
  } else if (k.mixed) {
    QTENSOR_ASSIGN_OR_RETURN(mixed, mixedSpecsOfRecord(k));
    // Its PTX holds the 16 entries, T = 1..16, as compiled.
    if (mixed.size() != 16 || mixed.front().rows != 1)
      return makeError(k.where(), ": a mixed_2416 GPU record lists ",
                       mixed.size(), " entries; its PTX holds T = 1..16");
  } else {
    QTENSOR_ASSIGN_OR_RETURN(quant, specOfRecord(k));
  }
  const std::string name = quant ? quant->name()
                           : !mixed.empty()
                               ? mixed2416InstanceName(mixed.front())
                               : w8a8InstanceName(w8a8.front());
  std::string error;
  mlir::FailureOr<PTXTarget> ptxTarget =
      resolvePTXTarget(k.target.name, 0, 3, error);
  if (mlir::failed(ptxTarget))
    return makeError(k.where(), ": ", error);

  KernelContext kc;
  DiagnosticCapture diagnostics(kc.context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&kc.context));
  // A mixed or W8A8 record's entries are one GPU module, as compiled.
  KernelInstance instance;
  instance.name = name;
  if (!w8a8.empty())
    instance.w8a8 = w8a8.front();
  if (quant ? mlir::failed(buildKernelOf(*module, *quant, KernelTarget::NVPTX,
                                         HostCpuLevel::Generic))
      : !mixed.empty()
          ? mlir::failed(buildMixed2416GemvKernels(*module, mixed.front(),
                                                   KernelTarget::NVPTX, name))
          : mlir::failed(buildKernelInstance(
                *module, instance, KernelTarget::NVPTX, HostCpuLevel::Generic)))
    return diagnostics.error("generating " + name + " failed");
  QTENSOR_ASSIGN_OR_RETURN(std::string key, cacheKey(*module, k.target.name));
  const std::string cacheDir =
      options.cacheDir.empty() ? defaultCacheDir() : options.cacheDir;
  const std::string cached = cacheDir + "/" + key + ".ptx";
  if (cacheDir != "off" && std::filesystem::exists(cached)) {
    QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                             target::readFileBytes(cached));
    return std::string(bytes.begin(), bytes.end());
  }
  mlir::PassManager pm(&kc.context);
  buildLowerToPTXPipeline(pm, *ptxTarget);
  if (mlir::failed(pm.run(*module)))
    return diagnostics.error("lowering " + name + " to PTX failed");
  std::vector<std::pair<std::string, std::string>> ptx = collectPTX(*module);
  if (ptx.size() != 1)
    return makeError(k.where(), ": lowering produced ", ptx.size(),
                     " PTX modules, expected 1");
  if (cacheDir != "off") // a failure costs a rebuild next time, no more
    (void)storeInCache(cacheDir, cached, ptx[0].second);
  return ptx[0].second;
}

void installTrustedCodeBuilders(runtime::ArtifactCodePolicy &policy,
                                TrustedCodeOptions options) {
  policy.rebuild = [options](const artifact::Manifest &manifest,
                             const artifact::DecoderProgram *program) {
    return rebuildHostKernels(manifest, program, options);
  };
  policy.rebuildGpu = [options](const artifact::Manifest &manifest,
                                size_t index) {
    return rebuildGpuKernel(manifest, index, options);
  };
}

} // namespace qtensor::compiler
