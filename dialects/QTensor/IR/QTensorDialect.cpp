//===- QTensorDialect.cpp - The qtensor dialect ---------------------------===//

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDispatch.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"
#include "qtensor/Dialect/QTensor/IR/QTensorPlacement.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::qt;

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.cpp.inc"

namespace {
/// Short aliases keep printed types readable: `#ui4_group128` for a W4
/// descriptor with groups of 128, `#layout_tiled` for a tiled layout.
struct QTensorOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (auto affine = dyn_cast<AffineDescriptorAttr>(attr)) {
      os << (affine.getCode().isSigned() ? "si" : "ui")
         << affine.getCode().getWidth();
      if (affine.getZeroPoint() != ZeroPointKind::None)
        os << "_asym";
      switch (affine.getGranularity()) {
      case Granularity::PerTensor:
        os << "_per_tensor";
        break;
      case Granularity::PerAxis:
        os << "_per_axis" << affine.getAxis();
        break;
      case Granularity::Group:
        // Groups run along K (axis 1) in a linear's weight; say so otherwise.
        os << "_group" << affine.getGroupSize();
        if (affine.getAxis() != 1)
          os << "_axis" << affine.getAxis();
        break;
      }
      if (NestedQParamsAttr nested = affine.getNested())
        os << "_nested" << nested.getSuperGroupSize();
      if (affine.getCodebook() != Codebook::None)
        os << "_" << stringifyCodebook(affine.getCodebook());
      if (affine.getScaleFormat() != ScaleFormat::Plain)
        os << "_" << stringifyScaleFormat(affine.getScaleFormat());
      return AliasResult::FinalAlias;
    }
    if (auto mixed = dyn_cast<Mixed2416DescriptorAttr>(attr)) {
      os << "mixed2416_g" << mixed.getFirstGroupSize() << "_"
         << stringifySparseSemantics(mixed.getSparse());
      return AliasResult::FinalAlias;
    }
    if (auto layout = dyn_cast<LayoutAttr>(attr)) {
      os << "layout";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void QTensorDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "qtensor/Dialect/QTensor/IR/QTensorOps.cpp.inc"
      >();
  addInterfaces<QTensorOpAsmInterface>();
}

LogicalResult QTensorDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (failed(verifyPlacementOpAttribute(op, attr)))
    return failure();
  return verifyDispatchOpAttribute(op, attr);
}
