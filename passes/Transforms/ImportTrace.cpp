//===- ImportTrace.cpp - Following qparam operands to their source -------===//
//
// How each dimension of a scale or zero-point operand indexes the codes,
// carried from the dequantized result back through the ops that only
// broadcast or reshape it. A broadcast dimension indexes nothing; a
// collapse of [K/G, G] into K makes the outer dimension a block of G and the
// inner one cycle; `d floordiv G` in an indexing map is a block of G.
//
//===----------------------------------------------------------------------===//

#include "ImportArith.h"

#include "qtensor/Support/CheckedMath.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Support/DebugStringHelper.h"

using namespace mlir;
using namespace mlir::qt;
using namespace mlir::qt::import;

SmallVector<DimAccess> import::identityAccess(ArrayRef<int64_t> shape) {
  SmallVector<DimAccess> dims;
  for (auto [i, size] : llvm::enumerate(shape))
    dims.push_back(size == 1 ? DimAccess::unit()
                             : DimAccess::block(static_cast<int64_t>(i), 1));
  return dims;
}

Expected<SmallVector<DimAccess>>
import::splitAccess(ArrayRef<DimAccess> collapsed, ArrayRef<int64_t> srcShape,
                    ArrayRef<ReassociationIndices> groups) {
  SmallVector<DimAccess> dims(srcShape.size(), DimAccess::unit());
  for (auto [access, group] : llvm::zip_equal(collapsed, groups)) {
    bool outermost = true;
    for (auto [t, dim] : llvm::enumerate(group)) {
      if (srcShape[dim] == 1)
        continue;
      if (access.kind != DimAccess::Kind::Block || !outermost) {
        dims[dim] = access.kind == DimAccess::Kind::Unit
                        ? DimAccess::unit()
                        : DimAccess::periodic(access.codesDim);
        outermost = false;
        continue;
      }
      std::optional<uint64_t> stride = access.blockSize;
      for (int64_t inner : ArrayRef<int64_t>(group).drop_front(t + 1))
        if (stride)
          stride = ::qtensor::checkedMul(*stride, srcShape[inner]);
      if (!stride || *stride > static_cast<uint64_t>(INT64_MAX))
        return makeError("a block size overflows");
      dims[dim] =
          DimAccess::block(access.codesDim, static_cast<int64_t>(*stride));
      outermost = false;
    }
  }
  return dims;
}

namespace {
/// Besides `d` and `d floordiv G`, an index may only be 0 on a unit
/// dimension (a broadcast).
Status checkConstantIndex(AffineExpr expr, int64_t size, StringRef what) {
  auto constant = dyn_cast<AffineConstantExpr>(expr);
  if (constant && constant.getValue() == 0 && size == 1)
    return Status::ok();
  return makeError(what.str(), " index a dimension of size ", size, " with ",
                   debugString(expr),
                   "; the import follows d, d floordiv G, and 0 on a unit "
                   "dimension");
}

/// True for `linalg.generic` copies that only broadcast their one input.
bool isBroadcastGeneric(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return false;
  Block &body = generic.getRegion().front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  return yield && body.getOperations().size() == 1 &&
         yield.getNumOperands() == 1 &&
         yield.getOperand(0) == body.getArgument(0);
}

} // namespace

Expected<SmallVector<DimAccess>>
import::accessThroughMap(AffineMap map, ArrayRef<DimAccess> loops,
                         ArrayRef<int64_t> shape, StringRef what) {
  SmallVector<DimAccess> dims;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      dims.push_back(shape[i] == 1 ? DimAccess::unit()
                                   : loops[dim.getPosition()]);
      continue;
    }
    auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
    if (binary && binary.getKind() == AffineExprKind::FloorDiv) {
      auto dim = dyn_cast<AffineDimExpr>(binary.getLHS());
      auto divisor = dyn_cast<AffineConstantExpr>(binary.getRHS());
      if (dim && divisor && divisor.getValue() > 0) {
        DimAccess access = loops[dim.getPosition()];
        if (shape[i] == 1)
          access = DimAccess::unit();
        else if (access.kind == DimAccess::Kind::Block) {
          auto block =
              ::qtensor::checkedMul(access.blockSize, divisor.getValue());
          if (!block || *block > static_cast<uint64_t>(INT64_MAX))
            return makeError("a block size overflows");
          access.blockSize = static_cast<int64_t>(*block);
        }
        dims.push_back(access);
        continue;
      }
    }
    if (Status s = checkConstantIndex(expr, shape[i], what); !s)
      return s.error();
    dims.push_back(DimAccess::unit());
  }
  return dims;
}

Expected<QParamSource>
import::traceQParam(Value value, SmallVector<DimAccess> dims, StringRef what) {
  while (true) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape())
      return makeError(what.str(), " have the dynamic type ",
                       debugString(value.getType()));
    DenseElementsAttr constant;
    if (matchPattern(value, m_Constant(&constant))) {
      QParamSource source;
      if (constant.isSplat())
        source.splat = constant.getSplatValue<TypedAttr>();
      else
        source.constant = constant;
      source.dims = std::move(dims);
      return source;
    }
    Operation *op = value.getDefiningOp();
    if (auto broadcast = dyn_cast_or_null<linalg::BroadcastOp>(op)) {
      SmallVector<DimAccess> kept;
      ArrayRef<int64_t> added = broadcast.getDimensions();
      for (auto [i, access] : llvm::enumerate(dims))
        if (!llvm::is_contained(added, static_cast<int64_t>(i)))
          kept.push_back(access);
      dims = std::move(kept);
      value = broadcast.getInput();
      continue;
    }
    if (auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
        generic && isBroadcastGeneric(generic)) {
      OpOperand *input = generic.getDpsInputOperand(0);
      auto inputType = dyn_cast<RankedTensorType>(input->get().getType());
      if (!inputType)
        break;
      auto next = accessThroughMap(generic.getMatchingIndexingMap(input), dims,
                                   inputType.getShape(), what);
      if (!next)
        return next.error();
      dims = std::move(*next);
      value = input->get();
      continue;
    }
    if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(op)) {
      auto next = splitAccess(dims, collapse.getSrcType().getShape(),
                              collapse.getReassociationIndices());
      if (!next)
        return next.error();
      dims = std::move(*next);
      value = collapse.getSrc();
      continue;
    }
    if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(op)) {
      SmallVector<DimAccess> merged;
      for (const ReassociationIndices &group :
           expand.getReassociationIndices()) {
        SmallVector<DimAccess> varying;
        for (int64_t dim : group)
          if (type.getDimSize(dim) != 1)
            varying.push_back(dims[dim]);
        if (varying.size() > 1)
          return makeError(what.str(),
                           " come from a tensor.expand_shape that splits a "
                           "dimension they vary along");
        merged.push_back(varying.empty() ? DimAccess::unit() : varying[0]);
      }
      dims = std::move(merged);
      value = expand.getSrc();
      continue;
    }
    break;
  }
  QParamSource source;
  source.value = value;
  source.dims = std::move(dims);
  return source;
}
