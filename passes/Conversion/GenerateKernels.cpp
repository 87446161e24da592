//===- GenerateKernels.cpp - qtensor-generate-kernels ---------------------===//
//
// Parses every kernel spec before building anything, so a bad entry leaves
// the module untouched, then calls the family's builder.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Conversion/Mixed2416Kernel.h"
#include "qtensor/Conversion/Passes.h"
#include "qtensor/Conversion/W8A8Kernel.h"

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

namespace mlir::qt {
#define GEN_PASS_DEF_QTENSORGENERATEKERNELSPASS
#include "qtensor/Conversion/Passes.h.inc"
} // namespace mlir::qt

using namespace mlir;

namespace {

struct GenerateKernelsPass
    : public qt::impl::QTensorGenerateKernelsPassBase<GenerateKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    qtensor::KernelTarget kernelTarget;
    if (target == "host") {
      kernelTarget = qtensor::KernelTarget::Host;
    } else if (target == "sm_80" || target == "sm_90") {
      kernelTarget = qtensor::KernelTarget::NVPTX;
    } else {
      module.emitError("qtensor-generate-kernels: unknown target '")
          << target << "', expected sm_80, sm_90 or host";
      return signalPassFailure();
    }
    std::optional<qtensor::HostCpuLevel> cpu =
        qtensor::parseHostCpuLevel(hostCpu);
    if (!cpu) {
      module.emitError("qtensor-generate-kernels: unknown host-cpu '")
          << hostCpu << "', expected one of " << qtensor::knownHostCpuLevels();
      return signalPassFailure();
    }
    SmallVector<qtensor::QuantKernelSpec> specs;
    SmallVector<qtensor::Mixed2416GemvSpec> mixedSpecs;
    SmallVector<qtensor::W8A8GemvSpec> w8a8Specs;
    for (const std::string &text : kernels) {
      // The mixed 2/4/16 GEMV reads streams, not a QuantKernelSpec's codes.
      if (llvm::StringRef(text).trim().starts_with("mixed2416_gemv")) {
        qtensor::Expected<qtensor::Mixed2416GemvSpec> spec =
            qtensor::parseMixed2416GemvSpec(text);
        if (!spec) {
          module.emitError("qtensor-generate-kernels: ") << spec.message();
          return signalPassFailure();
        }
        mixedSpecs.push_back(*spec);
        continue;
      }
      // W8A8 adds its activation quantizer beside the GEMV.
      if (llvm::StringRef(text).trim().starts_with("w8a8_gemv")) {
        qtensor::Expected<qtensor::W8A8GemvSpec> spec =
            qtensor::parseW8A8GemvSpec(text);
        if (!spec) {
          module.emitError("qtensor-generate-kernels: ") << spec.message();
          return signalPassFailure();
        }
        w8a8Specs.push_back(*spec);
        continue;
      }
      qtensor::Expected<qtensor::QuantKernelSpec> spec =
          qtensor::parseQuantKernelSpec(text);
      if (!spec) {
        module.emitError("qtensor-generate-kernels: ") << spec.message();
        return signalPassFailure();
      }
      specs.push_back(*spec);
    }
    for (const qtensor::QuantKernelSpec &spec : specs)
      if (failed(qtensor::buildKernelOf(module, spec, kernelTarget, *cpu)))
        return signalPassFailure();
    for (const qtensor::W8A8GemvSpec &spec : w8a8Specs)
      if (failed(qtensor::buildW8A8Kernels(module, spec, kernelTarget)))
        return signalPassFailure();
    for (const qtensor::Mixed2416GemvSpec &spec : mixedSpecs)
      if (failed(qtensor::buildMixed2416GemvKernel(module, spec, kernelTarget)))
        return signalPassFailure();
  }
};

} // namespace
