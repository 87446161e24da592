//===- Pipelines.cpp - Pass pipelines shared by qopt and qtc --------------===//

#include "qtensor/Pipelines/Pipelines.h"

#include "qtensor/Conversion/Passes.h"
#include "qtensor/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
namespace kernels = qtensor::kernels;

void qtensor::buildCleanupPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void qtensor::buildCompilePipeline(OpPassManager &pm,
                                   const CompileOptions &options) {
  pm.addPass(qt::createQTensorImportPass());
  buildCleanupPipeline(pm);
  pm.addPass(qt::createQTensorFuseLinearPass());
  buildCleanupPipeline(pm);

  qt::QTensorPlaceShardsPassOptions place;
  place.tp = options.tp;
  place.strategies.assign(options.strategies.begin(), options.strategies.end());
  place.groupPolicy = options.groupPolicy;
  pm.addPass(qt::createQTensorPlaceShardsPass(place));

  qt::QTensorSelectLayoutsPassOptions select;
  select.target = options.target;
  select.phase = options.phase;
  select.fallback = options.fallback;
  select.traceFile = options.traceFile;
  select.int8Activations = options.int8Activations;
  select.activationQuant = options.activationQuant;
  pm.addPass(qt::createQTensorSelectLayoutsPass(select));

  if (options.lower || !options.ptxDir.empty() || options.hostTwins) {
    qt::QTensorInstantiateKernelsPassOptions instantiate;
    instantiate.target = options.target;
    instantiate.lower = options.lower.value_or(qt::KernelLowering::None);
    instantiate.ptxDir = options.ptxDir;
    instantiate.hostTwins = options.hostTwins;
    instantiate.hostCpu = options.hostCpu;
    instantiate.activationQuant = kernels::toString(options.activationQuant);
    pm.addPass(qt::createQTensorInstantiateKernelsPass(instantiate));
  }
}

namespace {
/// `--qtensor-compile="target=... tp=... phase=... fallback=..."`.
struct CompilePipelineOptions
    : public PassPipelineOptions<CompilePipelineOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("sm_80, sm_90 or host"),
                             llvm::cl::init("sm_90")};
  Option<int64_t> tp{*this, "tp", llvm::cl::desc("Tensor-parallel ranks"),
                     llvm::cl::init(1)};
  Option<kernels::PhaseChoice> phase{
      *this, "phase", llvm::cl::desc("decode, prefill or both"),
      llvm::cl::init(kernels::PhaseChoice::Both), qt::phaseChoiceValues()};
  Option<kernels::FallbackPolicy> fallback{
      *this, "fallback",
      llvm::cl::desc("Full-dequant fallback: forbid, warn or allow"),
      llvm::cl::init(kernels::FallbackPolicy::Forbid),
      qt::fallbackPolicyValues()};
  Option<qt::GroupPolicy> groupPolicy{
      *this, "group-policy",
      llvm::cl::desc("A K-slice cutting a group: error, align, "
                     "replicate-boundary or repack"),
      llvm::cl::init(qt::GroupPolicy::Error), qt::groupPolicyValues()};
  ListOption<std::string> strategies{
      *this, "strategy",
      llvm::cl::desc("Per-op placement PATTERN:column|row|replicate")};
  Option<std::string> traceFile{
      *this, "trace-file",
      llvm::cl::desc("Write the dispatch trace as JSON to this file")};
  Option<bool> int8Activations{
      *this, "int8-activations",
      llvm::cl::desc("Admit host kernels that quantize their T = 1 "
                     "activations to int8 per 32"),
      llvm::cl::init(true)};
  Option<kernels::ActivationQuant> activationQuant{
      *this, "activation-quant",
      llvm::cl::desc("none, or per_token_sym / per_token_asym (w8a8)"),
      llvm::cl::init(kernels::ActivationQuant::None),
      qt::activationQuantValues()};
  Option<qt::KernelLowering> lower{
      *this, "lower",
      llvm::cl::desc("Generate the kernel instances: none (in the IR) or "
                     "ptx (gpu.binary ops holding PTX)"),
      qt::kernelLoweringValues()};
  Option<std::string> ptxDir{
      *this, "ptx-dir",
      llvm::cl::desc("With lower=ptx: write <instance>.ptx into this "
                     "existing directory")};
  Option<bool> hostTwins{
      *this, "host-twins",
      llvm::cl::desc("sm_80, sm_90: also generate each instance's host twin"),
      llvm::cl::init(false)};
  Option<std::string> hostCpu{
      *this, "host-cpu",
      llvm::cl::desc("CPU level of generated host kernels: generic, "
                     "x86-64-v2, x86-64-v3, x86-64-v4, x86-64-v4-vnni or "
                     "x86-64-v4-amx"),
      llvm::cl::init("generic")};

  qtensor::CompileOptions toCompileOptions() const {
    qtensor::CompileOptions options;
    options.target = target;
    options.tp = tp;
    options.phase = phase;
    options.fallback = fallback;
    options.groupPolicy = groupPolicy;
    options.strategies.assign(strategies.begin(), strategies.end());
    options.traceFile = traceFile;
    options.int8Activations = int8Activations;
    options.activationQuant = activationQuant;
    if (lower.hasValue())
      options.lower = lower;
    options.ptxDir = ptxDir;
    options.hostTwins = hostTwins;
    options.hostCpu = hostCpu;
    return options;
  }
};
} // namespace

void qtensor::registerPipelines() {
  PassPipelineRegistration<>(
      "qtensor-cleanup",
      "Fold qtensor assemble/disassemble pairs and identity repacks, then "
      "canonicalize and CSE",
      buildCleanupPipeline);
  PassPipelineRegistration<CompilePipelineOptions>(
      "qtensor-compile",
      "Import, canonicalize, fuse into qtensor.linear, place shards, "
      "select kernels and layouts, and with lower=none|ptx generate the "
      "kernel instances",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        buildCompilePipeline(pm, options.toCompileOptions());
      });
}
