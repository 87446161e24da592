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
::qtensor::AffineDescriptor makeAffineDescriptor(
    IntegerType code, QuantScheme scheme, ZeroPointKind zeroPoint,
    Granularity granularity, int64_t axis, int64_t groupSize, TailRule tail,
    FloatType scale, RoundingMode rounding, SaturationMode saturation,
    bool narrowRange, SignedEncoding encoding, DenseI64ArrayAttr permutation,
    uint32_t decoderVersion, NestedQParamsAttr nested, Codebook codebook,
    ScaleFormat scaleFormat);
bool isScaleType(Type type);
::qtensor::Mixed2416Descriptor makeMixed2416Descriptor(
    int64_t firstGroupSize, int64_t secondGroupSize, IntegerType firstScaleCode,
    FloatType secondScale, SparseSemantics sparse, FloatType sparseValue,
    StringRef requiredKernel, int64_t firstGroupAxis, int64_t secondGroupAxis,
    PrecisionMapGranularity mapGranularity, QParamPacking qparamPacking,
    uint32_t decoderVersion);
::qtensor::Mixed2416Descriptor
makeMixed2416Descriptor(Mixed2416DescriptorAttr attr);
} // namespace mlir::qt::detail

//===----------------------------------------------------------------------===//
// NestedQParamsAttr
//===----------------------------------------------------------------------===//

LogicalResult
NestedQParamsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          IntegerType scaleCode, IntegerType minCode,
                          int64_t superGroupSize, FloatType superScale) {
  for (IntegerType code : {scaleCode, minCode})
    if (code && code.isSignless())
      return emitError() << "nested codes must be signed (si" << code.getWidth()
                         << ") or unsigned (ui" << code.getWidth()
                         << "), got signless " << code;
  if (!detail::isScaleType(superScale))
    return emitError() << "second-level scale type must be f16 or bf16, got "
                       << superScale;
  if (superGroupSize <= 0)
    return emitError() << "super_group_size must be positive, got "
                       << superGroupSize;
  // The rest (widths, f16 or bf16, the group size it must be a multiple
  // of, zero-point pairing) is verifyDescriptor's, with the enclosing
  // descriptor, so the IR and the manifest give the same words.
  return success();
}

LogicalResult AffineDescriptorAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, IntegerType code,
    QuantScheme scheme, ZeroPointKind zeroPoint, Granularity granularity,
    int64_t axis, int64_t groupSize, TailRule tail, FloatType scale,
    RoundingMode rounding, SaturationMode saturation, bool narrowRange,
    SignedEncoding encoding, DenseI64ArrayAttr permutation,
    uint32_t decoderVersion, NestedQParamsAttr nested, Codebook codebook,
    ScaleFormat scaleFormat) {
  if (code.isSignless())
    return emitError() << "code type must be signed (si" << code.getWidth()
                       << ") or unsigned (ui" << code.getWidth()
                       << "), got signless " << code;
  if (!detail::isScaleType(scale))
    return emitError() << "scale type must be f16, bf16 or f32, got " << scale;
  ::qtensor::Status status =
      ::qtensor::verifyDescriptor(detail::makeAffineDescriptor(
          code, scheme, zeroPoint, granularity, axis, groupSize, tail, scale,
          rounding, saturation, narrowRange, encoding, permutation,
          decoderVersion, nested, codebook, scaleFormat));
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
// Mixed2416DescriptorAttr
//===----------------------------------------------------------------------===//

LogicalResult Mixed2416DescriptorAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t firstGroupSize,
    int64_t secondGroupSize, IntegerType firstScaleCode, FloatType secondScale,
    SparseSemantics sparse, FloatType sparseValue, StringRef requiredKernel,
    int64_t firstGroupAxis, int64_t secondGroupAxis,
    PrecisionMapGranularity mapGranularity, QParamPacking qparamPacking,
    uint32_t decoderVersion) {
  if (!firstScaleCode.isUnsigned())
    return emitError() << "first_scale_code must be unsigned (ui"
                       << firstScaleCode.getWidth() << "), got "
                       << firstScaleCode;
  for (FloatType t : {secondScale, sparseValue})
    if (!detail::isScaleType(t))
      return emitError() << "mixed_2416 float types are f16, bf16 or f32, got "
                         << t;
  ::qtensor::Status status =
      ::qtensor::verifyMixed2416Fields(detail::makeMixed2416Descriptor(
          firstGroupSize, secondGroupSize, firstScaleCode, secondScale, sparse,
          sparseValue, requiredKernel, firstGroupAxis, secondGroupAxis,
          mapGranularity, qparamPacking, decoderVersion));
  if (!status)
    return emitError() << status.message();
  return success();
}

StringRef Mixed2416DescriptorAttr::getFamilyName() const {
  return "mixed_2416";
}

LogicalResult Mixed2416DescriptorAttr::verifyForTensor(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
    Type elementType) const {
  ::qtensor::Mixed2416Descriptor d = detail::makeMixed2416Descriptor(*this);
  d.shape.assign(shape.begin(), shape.end());
  if (::qtensor::Status status = ::qtensor::verifyMixed2416(d); !status)
    return emitError() << status.message();
  return success();
}

LogicalResult Mixed2416DescriptorAttr::verifyLayout(
    function_ref<InFlightDiagnostic()> emitError, Attribute layout) const {
  const ::qtensor::Mixed2416Descriptor d;
  auto l = dyn_cast_or_null<LayoutAttr>(layout);
  if (!l || l.getFamily() != d.layoutFamily ||
      l.getVersion() != d.layoutVersion ||
      l.getEncoding() != d.layoutEncoding || l.getTile() || l.getPadding())
    return emitError() << "a mixed_2416 tensor is stored in layout "
                          "#qtensor.layout<family = \"mixed_2416\", version = "
                          "1, encoding = \"group_major_lsb_first\">, got "
                       << layout;
  return success();
}

Type Mixed2416DescriptorAttr::getCodeElementType() const {
  return IntegerType::get(getContext(), 4, IntegerType::Unsigned);
}

Type Mixed2416DescriptorAttr::getScaleElementType() const {
  return Float32Type::get(getContext());
}

Type Mixed2416DescriptorAttr::getZeroPointElementType() const {
  return IntegerType::get(getContext(), 4, IntegerType::Unsigned);
}

SmallVector<int64_t>
Mixed2416DescriptorAttr::getQParamShape(ArrayRef<int64_t> shape) const {
  if (shape.size() != 2 || getFirstGroupSize() <= 0)
    return SmallVector<int64_t>(shape.begin(), shape.end());
  return {shape[0], shape[1] / getFirstGroupSize()};
}

std::pair<int64_t, int64_t> Mixed2416DescriptorAttr::getCodeBounds() const {
  return {0, 15};
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

LogicalResult
PlacementAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ShardStrategy strategy, int64_t ranks, int64_t dim,
                      DenseI64ArrayAttr bounds, GroupPolicy groupPolicy,
                      DenseI64ArrayAttr qparams) {
  if (ranks < 1)
    return emitError() << "placement needs at least 1 rank, got " << ranks;
  int64_t expectedDim = strategy == ShardStrategy::Column ? 0
                        : strategy == ShardStrategy::Row  ? 1
                                                          : -1;
  if (dim != expectedDim)
    return emitError() << "a " << stringifyShardStrategy(strategy)
                       << " placement slices dim " << expectedDim << ", got "
                       << dim;
  // Sizes are compared without computing ranks + 1 or 2 * ranks, which
  // overflow for a hostile `ranks`.
  if (bounds.empty() || bounds.size() - 1 != ranks)
    return emitError() << "bounds needs ranks + 1 entries for " << ranks
                       << " ranks, got " << bounds.size();
  if (bounds[0] != 0)
    return emitError() << "bounds must start at 0, got " << bounds[0];
  bool replicated = strategy == ShardStrategy::Replicated;
  if (replicated && bounds[1] <= 0)
    return emitError() << "a replicated placement needs bounds [0, N, N, ...] "
                          "with N > 0, got bounds[1] = "
                       << bounds[1];
  for (int64_t r = 0; r < ranks; ++r) {
    if (replicated && bounds[r + 1] != bounds[1])
      return emitError() << "a replicated placement gives every rank [0, "
                         << bounds[1] << "), but bounds[" << r + 1
                         << "] = " << bounds[r + 1];
    if (!replicated && bounds[r + 1] <= bounds[r])
      return emitError() << "rank " << r << " has the empty or decreasing "
                         << "slice [" << bounds[r] << ", " << bounds[r + 1]
                         << ")";
  }
  if (qparams.size() % 2 != 0 || qparams.size() / 2 != ranks)
    return emitError() << "qparams needs 2 * ranks entries for " << ranks
                       << " ranks, got " << qparams.size();
  for (int64_t r = 0; r < ranks; ++r)
    if (qparams[2 * r] < 0 || qparams[2 * r + 1] <= qparams[2 * r])
      return emitError() << "rank " << r << " has the empty qparam range ["
                         << qparams[2 * r] << ", " << qparams[2 * r + 1] << ")";
  return success();
}
