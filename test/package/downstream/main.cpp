// Registers the qtensor dialect from the installed package, parses a module
// with a quantized weight, verifies it and prints it. Exit 0 on success.
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::MLIRContext context;
  context.loadDialect<mlir::qt::QTensorDialect, mlir::func::FuncDialect>();
  const char *source = R"mlir(
    func.func @f() -> !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>> {
      %w = qtensor.weight "layers.0.q_proj" : !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>
      return %w : !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>
    })mlir";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 1;
  int weights = 0;
  module->walk([&](mlir::qt::WeightOp op) {
    auto type = llvm::cast<mlir::qt::QuantizedTensorType>(op.getType());
    llvm::outs() << "weight " << op.getName() << " scales "
                 << type.getScalesType() << "\n";
    ++weights;
  });
  return weights == 1 ? 0 : 1;
}
