//===- LowerToPTX.cpp - qtensor-lower-to-ptx ------------------------------===//
//
// Device-only NVPTX lowering (the device half of upstream's
// gpu-lower-to-nvvm-pipeline, without its host conversions, so a module that
// still holds tensor-level host code keeps it) behind a target check:
// LLVM aborts the process for e.g. sm_90 at PTX < 7.8 (BUILD-NOTES.md).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::qt {
#define GEN_PASS_DEF_QTENSORLOWERTOPTXPASS
#include "qtensor/Conversion/Passes.h.inc"
} // namespace mlir::qt

using namespace mlir;

namespace {

/// PTX ISA versions LLVM 22's NVPTX backend knows (its +ptxNN features). An
/// unknown feature is silently ignored and then aborts on newer chips.
bool isKnownPTXVersion(unsigned v) {
  return (v >= 70 && v <= 78) || (v >= 80 && v <= 88) || v == 90;
}

} // namespace

FailureOr<qtensor::PTXTarget> qtensor::resolvePTXTarget(StringRef chip,
                                                        unsigned ptxVersion,
                                                        unsigned optLevel,
                                                        std::string &error) {
  // The minimum PTX ISA per chip (PTX ISA release notes: sm_80 arrived in
  // 7.0, sm_90 in 7.8); the generated kernels use nothing newer.
  unsigned minimum;
  if (chip == "sm_80") {
    minimum = 70;
  } else if (chip == "sm_90") {
    minimum = 78;
  } else {
    error = "unsupported chip '" + chip.str() + "', expected sm_80 or sm_90";
    return failure();
  }
  if (ptxVersion == 0)
    ptxVersion = minimum;
  if (!isKnownPTXVersion(ptxVersion)) {
    error = "unknown PTX ISA version " + std::to_string(ptxVersion) +
            ", expected 70-78, 80-88 or 90";
    return failure();
  }
  if (ptxVersion < minimum) {
    error = chip.str() + " needs PTX ISA " + std::to_string(minimum / 10) +
            "." + std::to_string(minimum % 10) + " or later, got " +
            std::to_string(ptxVersion / 10) + "." +
            std::to_string(ptxVersion % 10);
    return failure();
  }
  if (optLevel > 3) {
    error = "opt-level must be 0-3, got " + std::to_string(optLevel);
    return failure();
  }
  return PTXTarget{chip.str(), ptxVersion, optLevel};
}

void qtensor::getLowerToPTXDependentDialects(DialectRegistry &registry) {
  OpPassManager pm(ModuleOp::getOperationName());
  buildLowerToPTXPipeline(pm, PTXTarget{"sm_90", 78, 3});
  pm.getDependentDialects(registry);
}

void qtensor::buildLowerToPTXPipeline(OpPassManager &pm,
                                      const PTXTarget &target) {
  GpuNVVMAttachTargetOptions attach;
  attach.chip = target.chip;
  attach.features = "+ptx" + std::to_string(target.ptxVersion);
  attach.optLevel = target.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(attach));

  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createConvertNVGPUToNVVMPass());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa"; // PTX text: no CUDA toolkit needed
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {

/// Kernel names become file names: keep them to a safe alphabet.
bool isSafeFileStem(StringRef name) {
  return !name.empty() && name.front() != '.' && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '-' || c == '.';
  });
}

} // namespace

std::vector<std::pair<std::string, std::string>>
qtensor::collectPTX(ModuleOp module) {
  std::vector<std::pair<std::string, std::string>> result;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute attr : binary.getObjectsAttr()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (object && object.getFormat() == gpu::CompilationTarget::Assembly)
        result.emplace_back(binary.getSymName().str(),
                            object.getObject().getValue().str());
    }
  return result;
}

LogicalResult qtensor::writePTXFiles(ModuleOp module, StringRef dir) {
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    StringRef name = binary.getSymName();
    if (!isSafeFileStem(name))
      return binary.emitError("kernel name '")
             << name << "' is not a safe file name for ptx-dir";
  }
  for (const auto &[name, ptx] : collectPTX(module)) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, name + ".ptx");
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
    if (!ec) {
      out << ptx;
      out.close();
      ec = out.error();
    }
    if (ec)
      return module.emitError("cannot write '")
             << path << "': " << ec.message();
  }
  return success();
}

namespace {

struct LowerToPTXPass
    : public qt::impl::QTensorLowerToPTXPassBase<LowerToPTXPass> {
  using Base::Base;

  /// A dynamic pipeline loads no dialects itself: declare what it creates.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    qtensor::getLowerToPTXDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    FailureOr<qtensor::PTXTarget> target =
        qtensor::resolvePTXTarget(chip, ptxVersion, optLevel, error);
    if (failed(target)) {
      module.emitError("qtensor-lower-to-ptx: ") << error;
      return signalPassFailure();
    }
    if (!ptxDir.empty() && !llvm::sys::fs::is_directory(ptxDir)) {
      module.emitError("qtensor-lower-to-ptx: ptx-dir '")
          << ptxDir << "' is not an existing directory";
      return signalPassFailure();
    }
    OpPassManager pm(ModuleOp::getOperationName());
    qtensor::buildLowerToPTXPipeline(pm, *target);
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
    if (!ptxDir.empty() && failed(qtensor::writePTXFiles(module, ptxDir)))
      return signalPassFailure();
  }
};

} // namespace
