//===- QTensorTypes.cpp - The quantized tensor type -----------------------===//

#include "qtensor/Dialect/QTensor/IR/QTensorTypes.h"
#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qt;

#define GET_TYPEDEF_CLASSES
#include "qtensor/Dialect/QTensor/IR/QTensorTypes.cpp.inc"

void QTensorDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "qtensor/Dialect/QTensor/IR/QTensorTypes.cpp.inc"
      >();
}

namespace mlir::qt::detail {
bool isScaleType(Type type);
} // namespace mlir::qt::detail

QuantizedTensorType QuantizedTensorType::get(ArrayRef<int64_t> shape,
                                             FloatType elementType,
                                             DescriptorAttrInterface descriptor,
                                             LayoutAttr layout) {
  MLIRContext *context = elementType.getContext();
  if (!layout)
    layout = LayoutAttr::getLogical(context);
  return Base::get(context, shape, elementType, descriptor, layout);
}

QuantizedTensorType
QuantizedTensorType::getChecked(function_ref<InFlightDiagnostic()> emitError,
                                ArrayRef<int64_t> shape, FloatType elementType,
                                DescriptorAttrInterface descriptor,
                                LayoutAttr layout) {
  MLIRContext *context = elementType.getContext();
  if (!layout)
    layout = LayoutAttr::getLogical(context);
  return Base::getChecked(emitError, context, shape, elementType, descriptor,
                          layout);
}

LogicalResult
QuantizedTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                            ArrayRef<int64_t> shape, FloatType elementType,
                            DescriptorAttrInterface descriptor,
                            LayoutAttr layout) {
  if (!detail::isScaleType(elementType))
    return emitError() << "element type must be f16, bf16 or f32, got "
                       << elementType;
  for (auto [i, dim] : llvm::enumerate(shape))
    if (dim < 0)
      return emitError() << "dimension " << i
                         << " must be static and non-negative";
  if (!descriptor)
    return emitError() << "descriptor must implement the descriptor interface";
  if (failed(descriptor.verifyForTensor(emitError, shape, elementType)))
    return failure();
  if (!layout)
    return emitError() << "missing layout";
  if (failed(descriptor.verifyLayout(emitError, layout)))
    return failure();
  ::qtensor::Status status = ::qtensor::verifyLayoutForShape(
      toDescriptor(layout), std::vector<int64_t>(shape.begin(), shape.end()));
  if (!status)
    return emitError() << "layout: " << status.message();
  return success();
}

/// `<` dims `x` element `,` descriptor (`,` layout)? `>`
Type QuantizedTensorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute descriptor;
  LayoutAttr layout;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseAttribute(descriptor))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      parser.parseAttribute<LayoutAttr>(layout))
    return {};
  if (parser.parseGreater())
    return {};
  auto floatType = dyn_cast<FloatType>(elementType);
  if (!floatType) {
    parser.emitError(loc) << "element type must be f16, bf16 or f32, got "
                          << elementType;
    return {};
  }
  auto iface = dyn_cast<DescriptorAttrInterface>(descriptor);
  if (!iface) {
    parser.emitError(loc) << "expected a descriptor attribute (e.g. "
                             "#qtensor.affine<...>), got "
                          << descriptor;
    return {};
  }
  if (!layout)
    layout = LayoutAttr::getLogical(parser.getContext());
  return getChecked([&] { return parser.emitError(loc); }, shape, floatType,
                    iface, layout);
}

void QuantizedTensorType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t dim : getShape())
    printer << dim << 'x';
  printer << getElementType() << ", " << getDescriptor();
  if (getLayout() != LayoutAttr::getLogical(getContext()))
    printer << ", " << getLayout();
  printer << '>';
}

RankedTensorType QuantizedTensorType::getCodesType() const {
  return RankedTensorType::get(getShape(),
                               getDescriptor().getCodeElementType());
}

RankedTensorType QuantizedTensorType::getScalesType() const {
  return RankedTensorType::get(getDescriptor().getQParamShape(getShape()),
                               getDescriptor().getScaleElementType());
}

RankedTensorType QuantizedTensorType::getZeroPointsType() const {
  Type zeroType = getDescriptor().getZeroPointElementType();
  if (!zeroType)
    return {};
  return RankedTensorType::get(getDescriptor().getQParamShape(getShape()),
                               zeroType);
}

RankedTensorType QuantizedTensorType::getReconstructedType() const {
  return RankedTensorType::get(getShape(), getElementType());
}
