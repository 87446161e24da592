//===- Import.cpp - qtensor-import ----------------------------------------===//
//
// Brings quantized tensors that other front ends spell in upstream `quant`
// or in raw arith into the qtensor dialect (DESIGN.md: "canonicalize ...
// upstream quant import"). The two recognisers live in ImportQuant.cpp and
// ImportArith.cpp (with ImportArithChain.cpp and ImportTrace.cpp); what they
// share, in ImportCommon.cpp.
//
// The pass walks the IR once per recogniser, collecting candidates before
// rewriting, so each candidate is decided (and, with `remarks`, explained)
// exactly once; a greedy pattern driver would revisit candidates it leaves
// alone and repeat their remarks. Everything it builds verifies: the
// `!qtensor.tensor` type is made through the dialect's own checks, and a
// candidate those checks reject stays untouched.
//
//===----------------------------------------------------------------------===//

#include "ImportCommon.h"

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::qt {
#define GEN_PASS_DEF_QTENSORIMPORTPASS
#include "qtensor/Transforms/Passes.h.inc"
} // namespace mlir::qt

using namespace mlir;

namespace {
struct ImportPass : mlir::qt::impl::QTensorImportPassBase<ImportPass> {
  using Base::Base;

  void runOnOperation() override {
    bool leftSome = false;
    auto remark = [&](Operation *op, const Twine &message) {
      if (strict) {
        op->emitError() << "qtensor-import: " << message
                        << " (strict: every candidate must be imported)";
        leftSome = true;
      } else if (remarks) {
        op->emitRemark() << "qtensor-import: " << message;
      }
    };
    Operation *root = getOperation();
    qt::import::importQuantOps(root, remark);
    qt::import::importArithDequantizations(root, remark);
    if (leftSome)
      signalPassFailure();
  }
};
} // namespace
