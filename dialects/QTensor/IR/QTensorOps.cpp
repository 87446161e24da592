//===- QTensorOps.cpp - qtensor operation verifiers -----------------------===//
//
// The semantic gates of seed M8.9 0x05C that need more than one value:
// qparam shapes and dtypes against the descriptor's granularity, code ranges
// of constant codes, code-preserving repacks and matching linear shapes.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "qtensor/Support/CheckedMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::qt;

#define GET_OP_CLASSES
#include "qtensor/Dialect/QTensor/IR/QTensorOps.cpp.inc"

namespace {
/// Prints a shape as [a, b, c], a dynamic size as `?`.
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t dim) {
    if (ShapedType::isDynamic(dim))
      os << "?";
    else
      os << dim;
  });
  os << "]";
  return s;
}

/// Prints a type in quotes, as a Diagnostic does, for messages built in a
/// plain stream.
struct Quoted {
  Type type;
};
Quoted quoted(Type type) { return {type}; }
raw_ostream &operator<<(raw_ostream &os, Quoted q) {
  return os << '\'' << q.type << '\'';
}

/// Describes why the qparam shape is what it is, for diagnostics.
std::string explainQParamShape(QuantizedTensorType type) {
  auto affine = dyn_cast<AffineDescriptorAttr>(type.getDescriptor());
  if (!affine)
    return "";
  ArrayRef<int64_t> shape = type.getShape();
  switch (affine.getGranularity()) {
  case Granularity::PerTensor:
    return " (per_tensor: one scale)";
  case Granularity::PerAxis:
    return " (per_axis along axis " + std::to_string(affine.getAxis()) + ")";
  case Granularity::Group: {
    int64_t axis = affine.getAxis(), g = affine.getGroupSize();
    int64_t dim = shape[axis];
    return " (ceil(" + std::to_string(dim) + " / " + std::to_string(g) +
           ") = " + std::to_string(::qtensor::ceilDiv(dim, g)) +
           " groups along axis " + std::to_string(axis) + ")";
  }
  }
  return "";
}

/// Checks one qparam tensor (`role` is "scales" or "zero-points").
LogicalResult verifyQParamTensor(Operation *op, StringRef role, Type actual,
                                 QuantizedTensorType type, Type elementType) {
  auto ranked = dyn_cast<RankedTensorType>(actual);
  if (!ranked)
    return op->emitOpError() << role << " must be a ranked tensor";
  SmallVector<int64_t> expected =
      type.getDescriptor().getQParamShape(type.getShape());
  if (ranked.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError()
           << role << " have shape " << formatShape(ranked.getShape())
           << " but the descriptor needs " << formatShape(expected)
           << explainQParamShape(type);
  if (ranked.getElementType() != elementType)
    return op->emitOpError()
           << role << " have element type " << ranked.getElementType()
           << " but the descriptor needs " << elementType;
  return success();
}

/// Checks scales and the optional zero-points against the quantized type.
LogicalResult verifyQParams(Operation *op, QuantizedTensorType type,
                            Type scales, Type zeroPoints) {
  if (failed(verifyQParamTensor(op, "scales", scales, type,
                                type.getDescriptor().getScaleElementType())))
    return failure();
  Type zeroType = type.getDescriptor().getZeroPointElementType();
  if (!zeroType && zeroPoints)
    return op->emitOpError()
           << "has zero-points but the descriptor's scheme has none";
  if (zeroType && !zeroPoints)
    return op->emitOpError() << "needs zero-points of element type " << zeroType
                             << ": the descriptor is asymmetric";
  if (zeroPoints)
    return verifyQParamTensor(op, "zero-points", zeroPoints, type, zeroType);
  return success();
}

/// Checks that a tensor type has the quantized type's logical shape.
LogicalResult verifySameShape(Operation *op, StringRef role, Type actual,
                              QuantizedTensorType type) {
  auto ranked = dyn_cast<RankedTensorType>(actual);
  if (!ranked || ranked.getShape() != type.getShape())
    return op->emitOpError()
           << role << " shape must equal the quantized tensor's logical shape "
           << formatShape(type.getShape());
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError() << "needs a non-empty artifact tensor name";
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

namespace {
/// Codes-and-qparams operands describe an affine tensor completely; another
/// family has further streams (mixed_2416: the precision map, the sparse
/// outliers) that these ops do not carry.
LogicalResult requireAffine(Operation *op, QuantizedTensorType type) {
  if (isa<AffineDescriptorAttr>(type.getDescriptor()))
    return success();
  return op->emitOpError()
         << "takes affine tensors (codes and qparams are all of one); a "
         << type.getDescriptor().getFamilyName()
         << " tensor has further streams, read from its weight";
}

} // namespace

LogicalResult QuantizeOp::verify() {
  QuantizedTensorType type = getResult().getType();
  if (failed(requireAffine(*this, type)))
    return failure();
  if (failed(verifySameShape(*this, "input", getInput().getType(), type)))
    return failure();
  if (!isa<FloatType>(getInput().getType().getElementType()))
    return emitOpError() << "input must have a float element type, got "
                         << getInput().getType().getElementType();
  return verifyQParams(*this, type, getScales().getType(),
                       getZeroPoints() ? getZeroPoints().getType() : Type());
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  QuantizedTensorType type = getInput().getType();
  if (getResult().getType() != type.getReconstructedType())
    return emitOpError() << "result type must be "
                         << type.getReconstructedType()
                         << " (the logical shape and element type), got "
                         << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// AssembleOp / DisassembleOp
//===----------------------------------------------------------------------===//

namespace {
LogicalResult verifyCodes(Operation *op, Type codes, QuantizedTensorType type) {
  if (failed(verifySameShape(op, "codes", codes, type)))
    return failure();
  Type codeType = type.getDescriptor().getCodeElementType();
  if (cast<RankedTensorType>(codes).getElementType() != codeType)
    return op->emitOpError()
           << "codes have element type "
           << cast<RankedTensorType>(codes).getElementType()
           << " but the descriptor's code type is " << codeType;
  return success();
}
} // namespace

LogicalResult AssembleOp::verify() {
  QuantizedTensorType type = getResult().getType();
  if (failed(requireAffine(*this, type)) ||
      failed(verifyCodes(*this, getCodes().getType(), type)) ||
      failed(
          verifyQParams(*this, type, getScales().getType(),
                        getZeroPoints() ? getZeroPoints().getType() : Type())))
    return failure();
  // Constant codes can be proven inside the code range (e.g. the restricted
  // symmetric range forbids -2^(b-1)).
  DenseIntElementsAttr constant;
  if (matchPattern(getCodes(), m_Constant(&constant))) {
    std::pair<int64_t, int64_t> bounds = type.getDescriptor().getCodeBounds();
    int64_t lo = bounds.first, hi = bounds.second;
    bool isSigned = cast<IntegerType>(constant.getElementType()).isSigned();
    auto check = [&](const APInt &value, int64_t index) -> LogicalResult {
      int64_t code = isSigned ? value.getSExtValue()
                              : static_cast<int64_t>(value.getZExtValue());
      if (code >= lo && code <= hi)
        return success();
      return emitOpError() << "code " << code << " at flat index " << index
                           << " is outside the code range [" << lo << ", " << hi
                           << "]";
    };
    // A splat holds one value however large the tensor is.
    if (constant.isSplat())
      return check(constant.getSplatValue<APInt>(), 0);
    int64_t index = 0;
    for (const APInt &value : constant.getValues<APInt>())
      if (failed(check(value, index++)))
        return failure();
  }
  return success();
}

LogicalResult DisassembleOp::verify() {
  QuantizedTensorType type = getInput().getType();
  if (failed(requireAffine(*this, type)) ||
      failed(verifyCodes(*this, getCodes().getType(), type)))
    return failure();
  return verifyQParams(*this, type, getScales().getType(),
                       getZeroPoints() ? getZeroPoints().getType() : Type());
}

//===----------------------------------------------------------------------===//
// RepackOp
//===----------------------------------------------------------------------===//

LogicalResult RepackOp::verify() {
  QuantizedTensorType from = getInput().getType();
  QuantizedTensorType to = getResult().getType();
  if (from.getShape() != to.getShape())
    return emitOpError() << "must preserve the logical shape: "
                         << formatShape(from.getShape()) << " vs "
                         << formatShape(to.getShape());
  if (from.getElementType() != to.getElementType())
    return emitOpError() << "must preserve the element type";
  if (from.getDescriptor() != to.getDescriptor())
    return emitOpError()
           << "must preserve the descriptor: changing codes, groups or "
              "qparams is a conversion, not a repack";
  return success();
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::checkTypes(RankedTensorType input,
                                   QuantizedTensorType weight,
                                   RankedTensorType bias,
                                   RankedTensorType result, Type accumulator,
                                   raw_ostream &reason) {
  if (weight.getRank() != 2) {
    reason << "weight must be rank 2 [N, K], got rank " << weight.getRank();
    return failure();
  }
  int64_t n = weight.getShape()[0], k = weight.getShape()[1];

  if (auto affine = dyn_cast<AffineDescriptorAttr>(weight.getDescriptor())) {
    if (affine.getGranularity() == Granularity::Group &&
        affine.getAxis() != 1) {
      reason << "weight groups must run along the reduction axis 1 (K), got "
                "axis "
             << affine.getAxis();
      return failure();
    }
    if (affine.getGranularity() == Granularity::PerAxis &&
        affine.getAxis() != 0) {
      reason << "per-axis weight scales must run along the output-channel "
                "axis 0 (N), got axis "
             << affine.getAxis();
      return failure();
    }
  }

  if (input.getRank() < 1) {
    reason << "input must have rank >= 1 ([..., K])";
    return failure();
  }
  int64_t inputK = input.getShape().back();
  if (!ShapedType::isDynamic(inputK) && inputK != k) {
    reason << "input reduction size " << inputK
           << " does not match the weight's K = " << k;
    return failure();
  }
  if (input.getElementType() != weight.getElementType()) {
    reason << "input element type " << quoted(input.getElementType())
           << " must match the weight's reconstructed type "
           << quoted(weight.getElementType());
    return failure();
  }

  SmallVector<int64_t> expected(input.getShape().drop_back());
  expected.push_back(n);
  if (result.getShape() != ArrayRef<int64_t>(expected)) {
    reason << "result shape " << formatShape(result.getShape()) << " must be "
           << formatShape(expected) << " (input batch dims followed by N)";
    return failure();
  }
  auto outType = dyn_cast<FloatType>(result.getElementType());
  if (!outType || !(outType.isF16() || outType.isBF16() || outType.isF32())) {
    reason << "output element type must be f16, bf16 or f32, got "
           << quoted(result.getElementType());
    return failure();
  }

  if (!accumulator.isF32() && accumulator != input.getElementType()) {
    reason << "accumulator must be f32 or the activation type "
           << quoted(input.getElementType()) << ", got " << quoted(accumulator);
    return failure();
  }

  if (bias) {
    if (bias.getShape() != ArrayRef<int64_t>{n}) {
      reason << "bias shape " << formatShape(bias.getShape()) << " must be ["
             << n << "]";
      return failure();
    }
    if (bias.getElementType() != result.getElementType()) {
      reason << "bias element type " << quoted(bias.getElementType())
             << " must match the output type "
             << quoted(result.getElementType());
      return failure();
    }
  }
  return success();
}

LogicalResult LinearOp::verify() {
  std::string reason;
  llvm::raw_string_ostream os(reason);
  RankedTensorType bias =
      getBias() ? cast<RankedTensorType>(getBias().getType()) : nullptr;
  if (failed(checkTypes(getInput().getType(), getWeight().getType(), bias,
                        getResult().getType(), getAccumulator(), os)))
    return emitOpError() << reason;
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

FailureOr<QuantizedTensorType>
TransposeOp::inferResultType(QuantizedTensorType input, raw_ostream &reason) {
  if (input.getRank() != 2) {
    reason << "input must be rank 2, got rank " << input.getRank();
    return failure();
  }
  if (!input.getLayout().isLogical()) {
    reason << "input layout must be logical: rearranging a physical layout "
              "is a qtensor.repack";
    return failure();
  }
  auto affine = dyn_cast<AffineDescriptorAttr>(input.getDescriptor());
  if (!affine) {
    reason << "cannot transpose a descriptor of family '"
           << input.getDescriptor().getFamilyName() << "'";
    return failure();
  }
  // The axis follows its dimension; per-tensor has none (axis = -1).
  int64_t axis = affine.getAxis() < 0 ? affine.getAxis() : 1 - affine.getAxis();
  auto transposed = AffineDescriptorAttr::get(
      affine.getContext(), affine.getCode(), affine.getScheme(),
      affine.getZeroPoint(), affine.getGranularity(), axis,
      affine.getGroupSize(), affine.getTail(), affine.getScale(),
      affine.getRounding(), affine.getSaturation(), affine.getNarrowRange(),
      affine.getEncoding(), affine.getPermutation(), affine.getDecoderVersion(),
      affine.getNested(), affine.getCodebook(), affine.getScaleFormat());
  ArrayRef<int64_t> shape = input.getShape();
  return QuantizedTensorType::get({shape[1], shape[0]}, input.getElementType(),
                                  transposed, input.getLayout());
}

LogicalResult TransposeOp::verify() {
  std::string reason;
  llvm::raw_string_ostream os(reason);
  FailureOr<QuantizedTensorType> expected =
      inferResultType(getInput().getType(), os);
  if (failed(expected))
    return emitOpError() << reason;
  QuantizedTensorType result = getResult().getType();
  if (result.getShape() != expected->getShape())
    return emitOpError() << "result shape " << formatShape(result.getShape())
                         << " must be " << formatShape(expected->getShape())
                         << " (the input's dimensions swapped)";
  if (result.getElementType() != expected->getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " must be the input's "
                         << expected->getElementType();
  if (!result.getLayout().isLogical())
    return emitOpError() << "result layout must be logical: rearranging a "
                            "physical layout is a qtensor.repack";
  if (result.getDescriptor() != expected->getDescriptor())
    return emitOpError() << "result descriptor must be "
                         << expected->getDescriptor()
                         << " (the input's, with the axis moved to its new "
                            "dimension), got "
                         << result.getDescriptor();
  return success();
}
