//===- Pipelines.cpp - Pass pipelines shared by qopt and qtc --------------===//

#include "qtensor/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void qtensor::buildCleanupPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void qtensor::registerPipelines() {
  mlir::PassPipelineRegistration<>(
      "qtensor-cleanup",
      "Fold qtensor assemble/disassemble pairs and identity repacks, then "
      "canonicalize and CSE",
      buildCleanupPipeline);
}
