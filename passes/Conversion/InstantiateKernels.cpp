//===- InstantiateKernels.cpp - qtensor-instantiate-kernels ---------------===//
//
// The IR face of KernelInstances: the kernels the dispatched linears need,
// generated into the module, optionally lowered to PTX. Every option is
// checked before anything is built, so a bad one leaves the module alone.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelInstances.h"
#include "qtensor/Conversion/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"

namespace mlir::qt {
#define GEN_PASS_DEF_QTENSORINSTANTIATEKERNELSPASS
#include "qtensor/Conversion/Passes.h.inc"
} // namespace mlir::qt

using namespace mlir;

namespace {

struct InstantiateKernelsPass
    : public qt::impl::QTensorInstantiateKernelsPassBase<
          InstantiateKernelsPass> {
  using Base::Base;

  /// lower=ptx runs the PTX pipeline dynamically: declare what it creates.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    qtensor::getLowerToPTXDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&]() {
      signalPassFailure();
      return module.emitError("qtensor-instantiate-kernels: ");
    };
    const bool host = target == "host";
    if (!host && target != "sm_80" && target != "sm_90") {
      fail() << "unknown target '" << target
             << "', expected sm_80, sm_90 or host";
      return;
    }
    const bool toPTX = lower == qt::KernelLowering::PTX;
    if (toPTX && host) {
      fail() << "lower=ptx needs target sm_80 or sm_90, got host";
      return;
    }
    if (!ptxDir.empty() && !toPTX) {
      fail() << "ptx-dir needs lower=ptx";
      return;
    }
    if (!ptxDir.empty() && !llvm::sys::fs::is_directory(ptxDir)) {
      fail() << "ptx-dir '" << ptxDir << "' is not an existing directory";
      return;
    }
    if (hostTwins && host) {
      fail() << "host-twins needs target sm_80 or sm_90, got host (a host "
                "kernel is its own twin)";
      return;
    }
    std::optional<qtensor::HostCpuLevel> cpu =
        qtensor::parseHostCpuLevel(hostCpu);
    if (!cpu) {
      fail() << "unknown host-cpu '" << hostCpu << "', expected one of "
             << qtensor::knownHostCpuLevels();
      return;
    }
    std::optional<qtensor::PTXTarget> ptx;
    if (toPTX) {
      std::string error;
      FailureOr<qtensor::PTXTarget> resolved =
          qtensor::resolvePTXTarget(target, 0, 3, error);
      if (failed(resolved)) {
        fail() << error;
        return;
      }
      ptx = *resolved;
    }

    std::optional<qtensor::kernels::ActivationQuant> activations =
        qtensor::kernels::parseActivationQuant(activationQuant);
    if (!activations) {
      fail() << "unknown activation-quant '" << activationQuant
             << "', expected none, per_token_sym or per_token_asym";
      return;
    }
    FailureOr<std::vector<qtensor::KernelInstance>> instances =
        qtensor::deriveKernelInstances(module, target, *activations);
    if (failed(instances))
      return signalPassFailure();
    qtensor::KernelTarget kernelTarget =
        host ? qtensor::KernelTarget::Host : qtensor::KernelTarget::NVPTX;
    for (const qtensor::KernelInstance &instance : *instances)
      if (!instance.fullDequant() && failed(qtensor::buildKernelInstance(
                                         module, instance, kernelTarget, *cpu)))
        return signalPassFailure();
    qtensor::annotateKernelInstances(*instances);
    if (hostTwins) {
      std::vector<qtensor::KernelInstance> twins =
          qtensor::hostTwinInstances(*instances);
      if (module.lookupSymbol(qtensor::kHostTwinsModuleName)) {
        fail() << "the module already has a @" << qtensor::kHostTwinsModuleName;
        return;
      }
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      auto twinModule = ModuleOp::create(
          b, module.getLoc(), StringRef(qtensor::kHostTwinsModuleName));
      for (const qtensor::KernelInstance &twin : twins)
        if (failed(qtensor::buildKernelInstance(
                twinModule, twin, qtensor::KernelTarget::Host, *cpu)))
          return signalPassFailure();
    }

    if (!ptx)
      return;
    OpPassManager pm(ModuleOp::getOperationName());
    qtensor::buildLowerToPTXPipeline(pm, *ptx);
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
    if (!ptxDir.empty() && failed(qtensor::writePTXFiles(module, ptxDir)))
      return signalPassFailure();
  }
};

} // namespace
