//===- DescriptorBridge.cpp - Attributes <-> plain descriptors ------------===//

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::qt;

//===----------------------------------------------------------------------===//
// Enum conversions (ODS enums <-> lib enums; same cases, same order)
//===----------------------------------------------------------------------===//

namespace {
template <typename To, typename From> To convertEnum(From value) {
  return static_cast<To>(static_cast<uint32_t>(value));
}
// The casts above rely on both spellings listing cases in the same order.
static_assert(uint32_t(QuantScheme::Asymmetric) ==
              uint32_t(::qtensor::QuantScheme::Asymmetric));
static_assert(uint32_t(ZeroPointKind::Min) ==
              uint32_t(::qtensor::ZeroPointKind::Min));
static_assert(uint32_t(Granularity::Group) ==
              uint32_t(::qtensor::Granularity::Group));
static_assert(uint32_t(TailRule::Exact) ==
              uint32_t(::qtensor::TailRule::Exact));
static_assert(uint32_t(RoundingMode::TowardZero) ==
              uint32_t(::qtensor::RoundingMode::TowardZero));
static_assert(uint32_t(SaturationMode::Reject) ==
              uint32_t(::qtensor::SaturationMode::Reject));
static_assert(uint32_t(SignedEncoding::OffsetBinary) ==
              uint32_t(::qtensor::SignedEncoding::OffsetBinary));
static_assert(uint32_t(Codebook::E4M3) == uint32_t(::qtensor::Codebook::E4M3));
static_assert(uint32_t(ScaleFormat::UE4M3) ==
              uint32_t(::qtensor::ScaleFormat::UE4M3));
static_assert(uint32_t(SparseSemantics::Correction) ==
              uint32_t(::qtensor::SparseSemantics::Correction));
static_assert(uint32_t(PrecisionMapGranularity::Group) ==
              uint32_t(::qtensor::PrecisionMapGranularity::Group));
static_assert(uint32_t(QParamPacking::Bytes) ==
              uint32_t(::qtensor::QParamPacking::Bytes));

::qtensor::FloatType toPlainFloat(Type type) {
  if (type.isF16())
    return ::qtensor::FloatType::F16;
  if (type.isBF16())
    return ::qtensor::FloatType::BF16;
  return ::qtensor::FloatType::F32;
}

mlir::FloatType toMlirFloat(MLIRContext *context, ::qtensor::FloatType type) {
  Builder b(context);
  switch (type) {
  case ::qtensor::FloatType::F16:
    return b.getF16Type();
  case ::qtensor::FloatType::BF16:
    return b.getBF16Type();
  case ::qtensor::FloatType::F32:
    return b.getF32Type();
  }
  return b.getF32Type();
}

/// Collects the first diagnostic emitted by a verifier as an Error.
struct CapturedDiagnostic {
  explicit CapturedDiagnostic(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          if (message.empty())
            message = diag.str();
          return success();
        }) {}
  std::string message;
  ScopedDiagnosticHandler handler;
};
} // namespace

namespace mlir::qt::detail {
bool isScaleType(Type type) {
  return type.isF16() || type.isBF16() || type.isF32();
}

::qtensor::AffineDescriptor makeAffineDescriptor(
    IntegerType code, QuantScheme scheme, ZeroPointKind zeroPoint,
    Granularity granularity, int64_t axis, int64_t groupSize, TailRule tail,
    mlir::FloatType scale, RoundingMode rounding, SaturationMode saturation,
    bool narrowRange, SignedEncoding encoding, DenseI64ArrayAttr permutation,
    uint32_t decoderVersion, NestedQParamsAttr nested, Codebook codebook,
    ScaleFormat scaleFormat) {
  ::qtensor::AffineDescriptor d;
  d.code = {code.getWidth(), code.isSigned()};
  d.scheme = convertEnum<::qtensor::QuantScheme>(scheme);
  d.zeroPoint = convertEnum<::qtensor::ZeroPointKind>(zeroPoint);
  d.granularity = convertEnum<::qtensor::Granularity>(granularity);
  d.axis = axis;
  d.groupSize = groupSize;
  d.tail = convertEnum<::qtensor::TailRule>(tail);
  d.scaleType = toPlainFloat(scale);
  d.rounding = convertEnum<::qtensor::RoundingMode>(rounding);
  d.saturation = convertEnum<::qtensor::SaturationMode>(saturation);
  d.narrowRange = narrowRange;
  d.encoding = convertEnum<::qtensor::SignedEncoding>(encoding);
  if (permutation)
    d.permutation = std::vector<int64_t>(permutation.asArrayRef().begin(),
                                         permutation.asArrayRef().end());
  d.decoderVersion = decoderVersion;
  if (nested) {
    ::qtensor::NestedQParams n;
    IntegerType sc = nested.getScaleCode();
    n.scaleCode = {sc.getWidth(), sc.isSigned()};
    if (IntegerType mc = nested.getMinCode())
      n.minCode = ::qtensor::CodeType{mc.getWidth(), mc.isSigned()};
    n.superGroupSize = nested.getSuperGroupSize();
    n.superType = toPlainFloat(nested.getSuperScale());
    d.nested = n;
  }
  d.codebook = convertEnum<::qtensor::Codebook>(codebook);
  d.scaleFormat = convertEnum<::qtensor::ScaleFormat>(scaleFormat);
  return d;
}

::qtensor::Mixed2416Descriptor
makeMixed2416Descriptor(int64_t firstGroupSize, int64_t secondGroupSize,
                        IntegerType firstScaleCode, mlir::FloatType secondScale,
                        SparseSemantics sparse, mlir::FloatType sparseValue,
                        StringRef requiredKernel, int64_t firstGroupAxis,
                        int64_t secondGroupAxis,
                        PrecisionMapGranularity mapGranularity,
                        QParamPacking qparamPacking, uint32_t decoderVersion) {
  ::qtensor::Mixed2416Descriptor d;
  d.firstGroupSize = firstGroupSize;
  d.secondGroupSize = secondGroupSize;
  d.firstScaleCode = {firstScaleCode.getWidth(), firstScaleCode.isSigned()};
  d.secondType = toPlainFloat(secondScale);
  d.sparse = convertEnum<::qtensor::SparseSemantics>(sparse);
  d.sparseType = toPlainFloat(sparseValue);
  d.requiredKernel = requiredKernel.str();
  d.firstGroupAxis = firstGroupAxis;
  d.secondGroupAxis = secondGroupAxis;
  d.mapGranularity =
      convertEnum<::qtensor::PrecisionMapGranularity>(mapGranularity);
  d.qparamPacking = convertEnum<::qtensor::QParamPacking>(qparamPacking);
  d.decoderVersion = decoderVersion;
  return d;
}

::qtensor::Mixed2416Descriptor
makeMixed2416Descriptor(Mixed2416DescriptorAttr a) {
  return makeMixed2416Descriptor(
      a.getFirstGroupSize(), a.getSecondGroupSize(), a.getFirstScaleCode(),
      a.getSecondScale(), a.getSparse(), a.getSparseValue(),
      a.getRequiredKernel(), a.getFirstGroupAxis(), a.getSecondGroupAxis(),
      a.getMapGranularity(), a.getQparamPacking(), a.getDecoderVersion());
}
} // namespace mlir::qt::detail

//===----------------------------------------------------------------------===//
// Attribute -> plain
//===----------------------------------------------------------------------===//

::qtensor::AffineDescriptor mlir::qt::toDescriptor(AffineDescriptorAttr a) {
  return detail::makeAffineDescriptor(
      a.getCode(), a.getScheme(), a.getZeroPoint(), a.getGranularity(),
      a.getAxis(), a.getGroupSize(), a.getTail(), a.getScale(), a.getRounding(),
      a.getSaturation(), a.getNarrowRange(), a.getEncoding(),
      a.getPermutation(), a.getDecoderVersion(), a.getNested(), a.getCodebook(),
      a.getScaleFormat());
}

::qtensor::LayoutDescriptor mlir::qt::toDescriptor(LayoutAttr a) {
  ::qtensor::LayoutDescriptor l;
  l.family = a.getFamily().str();
  l.version = a.getVersion();
  l.encoding = a.getEncoding().str();
  l.tile.assign(a.getTileSizes().begin(), a.getTileSizes().end());
  l.padding.assign(a.getPaddingSizes().begin(), a.getPaddingSizes().end());
  return l;
}

::qtensor::Expected<::qtensor::Mixed2416Descriptor>
mlir::qt::toMixed2416Descriptor(QuantizedTensorType type) {
  auto mixed = dyn_cast<Mixed2416DescriptorAttr>(type.getDescriptor());
  if (!mixed)
    return ::qtensor::makeError("descriptor family '",
                                type.getDescriptor().getFamilyName().str(),
                                "' is not mixed_2416");
  ::qtensor::Mixed2416Descriptor d = detail::makeMixed2416Descriptor(mixed);
  d.shape.assign(type.getShape().begin(), type.getShape().end());
  d.elementType = toPlainFloat(type.getElementType());
  d.layoutFamily = type.getLayout().getFamily().str();
  d.layoutVersion = type.getLayout().getVersion();
  d.layoutEncoding = type.getLayout().getEncoding().str();
  return d;
}

::qtensor::Expected<::qtensor::QuantizedTensorDescriptor>
mlir::qt::toDescriptor(QuantizedTensorType type) {
  auto affine = dyn_cast<AffineDescriptorAttr>(type.getDescriptor());
  if (!affine)
    return ::qtensor::makeError("descriptor family '",
                                type.getDescriptor().getFamilyName().str(),
                                "' has no JSON spelling in this build");
  ::qtensor::QuantizedTensorDescriptor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.elementType = toPlainFloat(type.getElementType());
  t.descriptor = toDescriptor(affine);
  t.layout = toDescriptor(type.getLayout());
  return t;
}

//===----------------------------------------------------------------------===//
// plain -> Attribute
//===----------------------------------------------------------------------===//

::qtensor::Expected<AffineDescriptorAttr>
mlir::qt::toAttr(MLIRContext *context, const ::qtensor::AffineDescriptor &d) {
  // IntegerType::get asserts on absurd widths: check the plain form first.
  if (::qtensor::Status s = ::qtensor::verifyDescriptor(d); !s)
    return s.error();
  Builder b(context);
  CapturedDiagnostic captured(context);
  auto code = IntegerType::get(context, d.code.bits,
                               d.code.isSigned ? IntegerType::Signed
                                               : IntegerType::Unsigned);
  DenseI64ArrayAttr permutation;
  if (d.permutation)
    permutation = b.getDenseI64ArrayAttr(*d.permutation);
  auto integer = [&](const ::qtensor::CodeType &c) {
    return IntegerType::get(context, c.bits,
                            c.isSigned ? IntegerType::Signed
                                       : IntegerType::Unsigned);
  };
  NestedQParamsAttr nested;
  if (d.nested)
    nested = NestedQParamsAttr::get(
        context, integer(d.nested->scaleCode),
        d.nested->minCode ? integer(*d.nested->minCode) : IntegerType(),
        d.nested->superGroupSize, toMlirFloat(context, d.nested->superType));
  auto attr = AffineDescriptorAttr::getChecked(
      [&] { return emitError(UnknownLoc::get(context)); }, context, code,
      convertEnum<QuantScheme>(d.scheme),
      convertEnum<ZeroPointKind>(d.zeroPoint),
      convertEnum<Granularity>(d.granularity), d.axis, d.groupSize,
      convertEnum<TailRule>(d.tail), toMlirFloat(context, d.scaleType),
      convertEnum<RoundingMode>(d.rounding),
      convertEnum<SaturationMode>(d.saturation), d.narrowRange,
      convertEnum<SignedEncoding>(d.encoding), permutation, d.decoderVersion,
      nested, convertEnum<Codebook>(d.codebook),
      convertEnum<ScaleFormat>(d.scaleFormat));
  if (!attr)
    return ::qtensor::makeError(captured.message);
  return attr;
}

::qtensor::Expected<LayoutAttr>
mlir::qt::toAttr(MLIRContext *context, const ::qtensor::LayoutDescriptor &l) {
  Builder b(context);
  DenseI64ArrayAttr tile, padding;
  if (!l.tile.empty())
    tile = b.getDenseI64ArrayAttr(l.tile);
  if (!l.padding.empty())
    padding = b.getDenseI64ArrayAttr(l.padding);
  return LayoutAttr::get(context, l.family, l.version, l.encoding, tile,
                         padding);
}

::qtensor::Expected<QuantizedTensorType>
mlir::qt::toType(MLIRContext *context,
                 const ::qtensor::QuantizedTensorDescriptor &t) {
  auto descriptor = toAttr(context, t.descriptor);
  if (!descriptor)
    return descriptor.error();
  auto layout = toAttr(context, t.layout);
  if (!layout)
    return layout.error();
  CapturedDiagnostic captured(context);
  auto type = QuantizedTensorType::getChecked(
      [&] { return emitError(UnknownLoc::get(context)); }, t.shape,
      toMlirFloat(context, t.elementType),
      cast<DescriptorAttrInterface>(*descriptor), *layout);
  if (!type)
    return ::qtensor::makeError(captured.message);
  return type;
}

::qtensor::Expected<QuantizedTensorType>
mlir::qt::toType(MLIRContext *context,
                 const ::qtensor::Mixed2416Descriptor &d) {
  // IntegerType::get asserts on absurd widths: check the plain form first.
  if (::qtensor::Status s = ::qtensor::verifyMixed2416(d); !s)
    return s.error();
  CapturedDiagnostic captured(context);
  auto emit = [&] { return emitError(UnknownLoc::get(context)); };
  auto descriptor = Mixed2416DescriptorAttr::getChecked(
      emit, context, d.firstGroupSize, d.secondGroupSize,
      IntegerType::get(context, d.firstScaleCode.bits, IntegerType::Unsigned),
      toMlirFloat(context, d.secondType),
      convertEnum<SparseSemantics>(d.sparse),
      toMlirFloat(context, d.sparseType), StringRef(d.requiredKernel),
      d.firstGroupAxis, d.secondGroupAxis,
      convertEnum<PrecisionMapGranularity>(d.mapGranularity),
      convertEnum<QParamPacking>(d.qparamPacking), d.decoderVersion);
  if (!descriptor)
    return ::qtensor::makeError(captured.message);
  auto layout = LayoutAttr::get(context, d.layoutFamily, d.layoutVersion,
                                d.layoutEncoding, {}, {});
  auto type = QuantizedTensorType::getChecked(
      emit, d.shape, toMlirFloat(context, d.elementType),
      cast<DescriptorAttrInterface>(descriptor), layout);
  if (!type)
    return ::qtensor::makeError(captured.message);
  return type;
}
