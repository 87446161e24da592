//===- ImportArith.h - The raw arith half of qtensor-import -----*- C++ -*-===//
//
// Shared by ImportArith.cpp (anchoring at contractions, rewriting),
// ImportArithChain.cpp (matching the elementwise chain) and ImportTrace.cpp
// (following qparam operands to their source).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_TRANSFORMS_IMPORTARITH_H
#define QTENSOR_PASSES_TRANSFORMS_IMPORTARITH_H

#include "ImportCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::qt::import {

//===----------------------------------------------------------------------===//
// ImportTrace.cpp
//===----------------------------------------------------------------------===//

/// The access of each dimension of a tensor that has the codes' own shape.
SmallVector<DimAccess> identityAccess(ArrayRef<int64_t> shape);

/// The access of each dimension of `srcShape` when `groups` of it collapse
/// into dimensions with access `collapsed`: within a group the outermost
/// non-unit dimension is a block of the product of the sizes inside it;
/// inner ones cycle.
Expected<SmallVector<DimAccess>>
splitAccess(ArrayRef<DimAccess> collapsed, ArrayRef<int64_t> srcShape,
            ArrayRef<ReassociationIndices> groups);

/// The access of each dimension of an operand of `shape` read through `map`
/// from loops with access `loops`: `d`, `d floordiv G`, or 0 on a unit
/// dimension.
Expected<SmallVector<DimAccess>> accessThroughMap(AffineMap map,
                                                  ArrayRef<DimAccess> loops,
                                                  ArrayRef<int64_t> shape,
                                                  StringRef what);

/// Follows a qparam tensor whose dimensions index the codes as `dims`
/// through splat and dense constants, `linalg.broadcast`, broadcasting
/// `linalg.generic` copies, `tensor.collapse_shape` and
/// `tensor.expand_shape`, to its source. `what` names it in errors.
Expected<QParamSource> traceQParam(Value value, SmallVector<DimAccess> dims,
                                   StringRef what);

//===----------------------------------------------------------------------===//
// ImportArithChain.cpp
//===----------------------------------------------------------------------===//

/// What a dequantization chain says about the codes and qparams.
struct DequantChain {
  Value codes; ///< signless integer tensor indexed like the result
  unsigned bits = 0;
  bool isSigned = false;
  FloatType floatType;
  QParamSource scales;
  std::optional<QParamSource> zeroPoints;
  ZeroPointKind zeroPointKind = ZeroPointKind::None;
};

/// A factor that converts integers: conv(...) or subf(conv(...), z).
bool convertsInts(Value value);

/// Matches the chain rooted at `mul`: on tensors (null `generic`) or in the
/// body of the elementwise `generic`, whose result dimensions index the
/// codes as `resultDims`.
Expected<DequantChain> matchDequantChain(arith::MulFOp mul,
                                         linalg::GenericOp generic,
                                         ArrayRef<DimAccess> resultDims);

} // namespace mlir::qt::import

#endif // QTENSOR_PASSES_TRANSFORMS_IMPORTARITH_H
