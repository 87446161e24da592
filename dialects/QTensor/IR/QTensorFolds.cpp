//===- QTensorFolds.cpp - Folders of qtensor operations -------------------===//
//
// Folds that are exact by construction: assemble and disassemble are inverse
// and code-preserving; a repack to the same layout is the identity.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

using namespace mlir;
using namespace mlir::qt;

/// assemble(disassemble(%q)) -> %q
OpFoldResult AssembleOp::fold(FoldAdaptor) {
  auto source = getCodes().getDefiningOp<DisassembleOp>();
  // All three operands must be the matching results of one disassemble
  // (codes and zero-points can have the same type).
  if (!source || getCodes() != source.getCodes() ||
      getScales() != source.getScales() ||
      getZeroPoints() != source.getZeroPoints() ||
      source.getInput().getType() != getType())
    return {};
  return source.getInput();
}

/// disassemble(assemble(%c, %s, %z)) -> %c, %s, %z
LogicalResult DisassembleOp::fold(FoldAdaptor,
                                  SmallVectorImpl<OpFoldResult> &results) {
  auto source = getInput().getDefiningOp<AssembleOp>();
  if (!source)
    return failure();
  results.push_back(source.getCodes());
  results.push_back(source.getScales());
  if (Value zeros = source.getZeroPoints())
    results.push_back(zeros);
  return success();
}

/// repack(%q) to its own type -> %q; repack(repack(%q)) -> one repack.
OpFoldResult RepackOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<RepackOp>()) {
    if (inner.getInput().getType() == getType())
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}
