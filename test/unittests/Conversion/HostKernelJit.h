//===- HostKernelJit.h - Run generated host kernels in-process --*- C++ -*-===//
//
// Test support for the kernel parity tests: builds a kernel's host twin with
// its family builder, lowers it with buildLowerKernelsToHostPipeline and
// JIT-compiles it with mlir::ExecutionEngine; row-major buffers viewed as
// strided memref descriptors; 16-bit float bit conversions.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TEST_UNITTESTS_CONVERSION_HOSTKERNELJIT_H
#define QTENSOR_TEST_UNITTESTS_CONVERSION_HOSTKERNELJIT_H

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Conversion/Passes.h"
#include "qtensor/Numerics/FloatFormats.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/Support/TargetSelect.h"

#include <array>
#include <functional>
#include <memory>
#include <vector>

namespace qtensor::test {

/// A row-major buffer viewed as a rank-R memref descriptor.
template <typename T, int R> struct HostBuffer {
  std::vector<T> data;
  StridedMemRefType<T, R> desc;
  HostBuffer(std::array<int64_t, R> sizes, std::vector<T> values)
      : data(std::move(values)) {
    desc.basePtr = desc.data = data.data();
    desc.offset = 0;
    int64_t stride = 1;
    for (int d = R - 1; d >= 0; --d) {
      desc.sizes[d] = sizes[d];
      desc.strides[d] = stride;
      stride *= sizes[d];
    }
  }
};

/// 16-bit values (f16, bf16) only.
inline uint16_t toBits(float v, FloatType type) {
  return type == FloatType::F16 ? floatToHalfBits(v) : floatToBFloat16Bits(v);
}
inline float fromBits(uint16_t bits, FloatType type) {
  return type == FloatType::F16 ? halfBitsToFloat(bits)
                                : bfloat16BitsToFloat(bits);
}

class HostKernelJit {
public:
  using Builder = std::function<mlir::LogicalResult(
      mlir::ModuleOp, const QuantKernelSpec &, KernelTarget)>;

  HostKernelJit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::DialectRegistry registry;
    registry.insert<mlir::amx::AMXDialect, mlir::arith::ArithDialect,
                    mlir::func::FuncDialect, mlir::LLVM::LLVMDialect,
                    mlir::math::MathDialect, mlir::memref::MemRefDialect,
                    mlir::scf::SCFDialect, mlir::vector::VectorDialect>();
    mlir::registerBuiltinDialectTranslation(registry);
    mlir::registerLLVMDialectTranslation(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Builds the host twin of `spec` with `build`, lowers and JIT-compiles it.
  std::unique_ptr<mlir::ExecutionEngine> compile(const QuantKernelSpec &spec,
                                                 const Builder &build) {
    return compileModule([&](mlir::ModuleOp module) {
      return build(module, spec, KernelTarget::Host);
    });
  }

  /// Lowers and JIT-compiles what `build` puts into an empty module.
  std::unique_ptr<mlir::ExecutionEngine> compileModule(
      const std::function<mlir::LogicalResult(mlir::ModuleOp)> &build) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
    if (mlir::failed(build(*module)))
      return nullptr;
    mlir::PassManager pm(&context);
    buildLowerKernelsToHostPipeline(pm);
    if (mlir::failed(pm.run(*module)))
      return nullptr;
    auto engine = mlir::ExecutionEngine::create(*module);
    if (!engine) {
      llvm::consumeError(engine.takeError());
      return nullptr;
    }
    return std::move(*engine);
  }

  mlir::MLIRContext context;
};

} // namespace qtensor::test

#endif // QTENSOR_TEST_UNITTESTS_CONVERSION_HOSTKERNELJIT_H
