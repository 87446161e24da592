//===- QTensorAttrs.cpp - Descriptor and layout attributes ----------------===//
//
// Attribute verifiers delegate to the MLIR-free checks in lib/Descriptor so
// the IR, the manifest reader and the runtime enforce identical rules.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.h"
#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qt;

#include "qtensor/Dialect/QTensor/IR/QTensorEnums.cpp.inc"
#include "qtensor/Dialect/QTensor/IR/QTensorInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.cpp.inc"

void QTensorDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// AffineDescriptorAttr
//===----------------------------------------------------------------------===//

namespace mlir::qt::detail {
/// Defined in DescriptorBridge.cpp; shared by verify() and toDescriptor().
::qtensor::AffineDescriptor
makeAffineDescriptor(IntegerType code, QuantScheme scheme,
                     ZeroPointKind zeroPoint, Granularity granularity,
                     int64_t axis, int64_t groupSize, TailRule tail,
                     FloatType scale, RoundingMode rounding,
                     SaturationMode saturation, bool narrowRange,
                     SignedEncoding encoding, DenseI64ArrayAttr permutation,
                     uint32_t decoderVersion);
bool isScaleType(Type type);
} // namespace mlir::qt::detail

LogicalResult AffineDescriptorAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, IntegerType code,
    QuantScheme scheme, ZeroPointKind zeroPoint, Granularity granularity,
    int64_t axis, int64_t groupSize, TailRule tail, FloatType scale,
    RoundingMode rounding, SaturationMode saturation, bool narrowRange,
    SignedEncoding encoding, DenseI64ArrayAttr permutation,
    uint32_t decoderVersion) {
  if (code.isSignless())
    return emitError() << "code type must be signed (si" << code.getWidth()
                       << ") or unsigned (ui" << code.getWidth()
                       << "), got signless " << code;
  if (!detail::isScaleType(scale))
    return emitError() << "scale type must be f16, bf16 or f32, got " << scale;
  ::qtensor::Status status = ::qtensor::verifyDescriptor(
      detail::makeAffineDescriptor(code, scheme, zeroPoint, granularity, axis,
                                   groupSize, tail, scale, rounding,
                                   saturation, narrowRange, encoding,
                                   permutation, decoderVersion));
  if (!status)
    return emitError() << status.message();
  return success();
}

StringRef AffineDescriptorAttr::getFamilyName() const { return "affine"; }

LogicalResult AffineDescriptorAttr::verifyForTensor(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
    Type elementType) const {
  ::qtensor::Status status = ::qtensor::verifyDescriptorForShape(
      toDescriptor(*this), std::vector<int64_t>(shape.begin(), shape.end()));
  if (!status)
    return emitError() << status.message();
  return success();
}

Type AffineDescriptorAttr::getCodeElementType() const { return getCode(); }

Type AffineDescriptorAttr::getScaleElementType() const { return getScale(); }

Type AffineDescriptorAttr::getZeroPointElementType() const {
  switch (getZeroPoint()) {
  case ZeroPointKind::None:
    return {};
  case ZeroPointKind::Integer:
    return getCode();
  case ZeroPointKind::Float:
  case ZeroPointKind::Min:
    return getScale();
  }
  return {};
}

SmallVector<int64_t>
AffineDescriptorAttr::getQParamShape(ArrayRef<int64_t> shape) const {
  std::vector<int64_t> result = ::qtensor::qparamShape(
      toDescriptor(*this), std::vector<int64_t>(shape.begin(), shape.end()));
  return SmallVector<int64_t>(result.begin(), result.end());
}

std::pair<int64_t, int64_t> AffineDescriptorAttr::getCodeBounds() const {
  ::qtensor::CodeBounds bounds = ::qtensor::codeBounds(toDescriptor(*this));
  return {bounds.min, bounds.max};
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef family, uint32_t version,
                                 StringRef encoding, DenseI64ArrayAttr tile,
                                 DenseI64ArrayAttr padding) {
  // One spelling per layout: an absent list, never an empty one.
  if (tile && tile.empty())
    return emitError() << "omit `tile` instead of giving an empty list";
  if (padding && padding.empty())
    return emitError() << "omit `padding` instead of giving an empty list";
  ::qtensor::LayoutDescriptor plain;
  plain.family = family.str();
  plain.version = version;
  plain.encoding = encoding.str();
  if (tile)
    plain.tile.assign(tile.asArrayRef().begin(), tile.asArrayRef().end());
  if (padding)
    plain.padding.assign(padding.asArrayRef().begin(),
                         padding.asArrayRef().end());
  if (::qtensor::Status status = ::qtensor::verifyLayout(plain); !status)
    return emitError() << status.message();
  return success();
}

LayoutAttr LayoutAttr::getLogical(MLIRContext *context) {
  return LayoutAttr::get(context, "logical", 1, "lsb_first", {}, {});
}
