//===- LowerToHost.cpp - Host kernels to the LLVM dialect -----------------===//
//
// The CPU twin of the NVPTX lowering: the host kernels built by
// KernelBuilders (func.func on memrefs) become LLVM dialect that
// mlir::ExecutionEngine runs in the parity tests and qtc links into
// kernels-host.so. bf16 conversions are expanded to integer arithmetic
// first: x86 has no bf16 instructions without AVX512-BF16, and LLVM would
// otherwise call __truncsfbf2, which libgcc 12 does not provide.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

void qtensor::buildLowerKernelsToHostPipeline(OpPassManager &pm) {
  // bf16 arithmetic (the prefill GEMM subtracts in bf16x2) is computed in
  // f32 and rounded once, which is exact for add, sub and mul; the
  // truncation back to bf16 is then expanded below.
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createSCFToControlFlowPass());
  // AMX tile ops (the host GEMM's T > 1 at x86-64-v4-amx) become LLVM's
  // x86 tile intrinsics beside the vector ops.
  ConvertVectorToLLVMPassOptions vectorOptions;
  vectorOptions.amx = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}
