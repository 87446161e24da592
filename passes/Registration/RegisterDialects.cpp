//===- RegisterDialects.cpp - qtensor and the curated host dialects -------===//

#include "qtensor/InitAll.h"

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace qtensor::detail {
void registerGPUDialects(mlir::DialectRegistry &registry);
} // namespace qtensor::detail

void qtensor::registerQTensorDialect(mlir::DialectRegistry &registry) {
  registry.insert<mlir::qt::QTensorDialect>();
}

void qtensor::registerDialects(mlir::DialectRegistry &registry) {
  registerQTensorDialect(registry);
  registry.insert<mlir::amx::AMXDialect, mlir::affine::AffineDialect,
                  mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::index::IndexDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::ml_program::MLProgramDialect, mlir::quant::QuantDialect,
                  mlir::scf::SCFDialect, mlir::shard::ShardDialect,
                  mlir::tensor::TensorDialect, mlir::ub::UBDialect,
                  mlir::vector::VectorDialect>();
  detail::registerGPUDialects(registry);
}
