//===- RegisterPasses.cpp - qtensor and the curated upstream passes -------===//
//
// Per-conversion headers instead of mlir/Conversion/Passes.h: the umbrella
// costs ~31 s of compile time per TU (BUILD-NOTES.md).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/Passes.h"
#include "qtensor/InitAll.h"
#include "qtensor/Pipelines/Pipelines.h"
#include "qtensor/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void qtensor::registerPasses() {
  mlir::qt::registerQTensorTransformsPasses();
  mlir::qt::registerQTensorConversionPasses();
  mlir::PassPipelineRegistration<>(
      "qtensor-lower-kernels-to-host",
      "Lower host kernels (func.func on memrefs) to the LLVM dialect",
      qtensor::buildLowerKernelsToHostPipeline);
  registerPipelines();

  // Generic transforms: canonicalize, cse, inline, symbol-dce, ...
  mlir::registerTransformsPasses();
  // gpu-kernel-outlining, nvvm-attach-target, gpu-module-to-binary, ...
  mlir::registerGPUPasses();
  mlir::gpu::registerGPUToNVVMPipeline();

  // The conversions of a host or NVVM lowering, each by itself.
  mlir::registerPass([] { return mlir::createLowerAffinePass(); });
  mlir::registerPass([] { return mlir::createSCFToControlFlowPass(); });
  mlir::registerPass([] { return mlir::createArithToLLVMConversionPass(); });
  mlir::registerPass([] { return mlir::createConvertControlFlowToLLVMPass(); });
  mlir::registerPass([] { return mlir::createConvertFuncToLLVMPass(); });
  mlir::registerPass([] { return mlir::createConvertIndexToLLVMPass(); });
  mlir::registerPass([] { return mlir::createConvertMathToLLVMPass(); });
  mlir::registerPass(
      [] { return mlir::createFinalizeMemRefToLLVMConversionPass(); });
  mlir::registerPass([] { return mlir::createConvertVectorToSCFPass(); });
  mlir::registerPass([] { return mlir::createConvertVectorToLLVMPass(); });
  mlir::registerPass([] { return mlir::createConvertToLLVMPass(); });
  mlir::registerPass([] { return mlir::createConvertGpuOpsToNVVMOps(); });
  mlir::registerPass([] { return mlir::createConvertNVGPUToNVVMPass(); });
  mlir::registerPass([] { return mlir::createConvertNVVMToLLVMPass(); });
  mlir::registerPass([] { return mlir::createGpuToLLVMConversionPass(); });
  mlir::registerPass([] { return mlir::createReconcileUnrealizedCastsPass(); });
}
