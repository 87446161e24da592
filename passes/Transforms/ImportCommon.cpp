//===- ImportCommon.cpp - Shared pieces of qtensor-import -----------------===//
//
// Granularity recovery and qparam materialization for both import paths.
//
//===----------------------------------------------------------------------===//

#include "ImportCommon.h"

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Support/DebugStringHelper.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallString.h"

using namespace mlir;
using namespace mlir::qt;
using namespace mlir::qt::import;

ArrayRef<int64_t> QParamSource::getShape() const {
  if (constant)
    return constant.getType().getShape();
  if (value)
    return cast<RankedTensorType>(value.getType()).getShape();
  return {};
}

Type QParamSource::getElementType() const {
  if (splat)
    return splat.getType();
  if (constant)
    return constant.getElementType();
  return cast<RankedTensorType>(value.getType()).getElementType();
}

std::string import::describe(const QParamLayout &layout) {
  switch (layout.granularity) {
  case Granularity::PerTensor:
    return "per_tensor";
  case Granularity::PerAxis:
    return "per_axis along axis " + std::to_string(layout.axis);
  case Granularity::Group:
    return "groups of " + std::to_string(layout.groupSize) + " along axis " +
           std::to_string(layout.axis);
  }
  return "?";
}

namespace {
/// A non-unit dimension of a qparam tensor: its index, size and access.
struct UsedDim {
  int64_t index;
  int64_t size;
  DimAccess access;
};

/// The dimensions of `source` that vary, in order; fails on a dimension
/// that varies within a block.
Expected<SmallVector<UsedDim>> usedDims(const QParamSource &source,
                                        ArrayRef<int64_t> codesShape,
                                        StringRef role) {
  SmallVector<UsedDim> used;
  ArrayRef<int64_t> shape = source.getShape();
  for (auto [i, access] : llvm::enumerate(source.dims)) {
    if (shape[i] == 1)
      continue;
    if (access.kind == DimAccess::Kind::Unit || access.codesDim < 0 ||
        access.codesDim >= static_cast<int64_t>(codesShape.size()))
      return makeError(role.str(), " dimension ", i,
                       " follows no axis of the codes");
    if (access.kind == DimAccess::Kind::Periodic)
      return makeError(role.str(), " dimension ", i,
                       " cycles within a block of axis ", access.codesDim,
                       ": entries repeat periodically along it, which is no "
                       "quantization granularity");
    if (!used.empty() && access.codesDim <= used.back().access.codesDim)
      return makeError(role.str(), " dimensions ", used.back().index, " and ",
                       i, " follow axes ", used.back().access.codesDim, " and ",
                       access.codesDim,
                       " of the codes out of order; transposed qparams are "
                       "not imported");
    used.push_back({static_cast<int64_t>(i), shape[i], access});
  }
  return used;
}

/// Checks a used dimension's size against the codes it indexes.
Status checkDimSize(const UsedDim &dim, ArrayRef<int64_t> codesShape,
                    StringRef role) {
  int64_t axis = dim.access.codesDim, size = codesShape[axis];
  int64_t block = dim.access.blockSize;
  int64_t expected = static_cast<int64_t>(::qtensor::ceilDiv(size, block));
  if (dim.size == expected)
    return Status::ok();
  if (block == 1)
    return makeError(role.str(), " have ", dim.size, " entries along axis ",
                     axis, " but it has ", size, " elements");
  return makeError(role.str(), " have ", dim.size, " entries along axis ", axis,
                   " but groups of ", block, " over its ", size,
                   " elements need ceil(", size, " / ", block,
                   ") = ", expected);
}

/// The codes axis each qparam dimension follows, in qparam order.
SmallVector<int64_t> qparamAxes(AffineDescriptorAttr descriptor, int64_t rank) {
  switch (descriptor.getGranularity()) {
  case Granularity::PerTensor:
    return {};
  case Granularity::PerAxis:
    return {descriptor.getAxis()};
  case Granularity::Group:
    return llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  return {};
}

::qtensor::FloatType toPlainFloat(FloatType type) {
  if (type.isF16())
    return ::qtensor::FloatType::F16;
  if (type.isBF16())
    return ::qtensor::FloatType::BF16;
  return ::qtensor::FloatType::F32;
}

::qtensor::Granularity toPlain(Granularity g) {
  switch (g) {
  case Granularity::PerTensor:
    return ::qtensor::Granularity::PerTensor;
  case Granularity::PerAxis:
    return ::qtensor::Granularity::PerAxis;
  case Granularity::Group:
    return ::qtensor::Granularity::Group;
  }
  return ::qtensor::Granularity::PerTensor;
}

::qtensor::ZeroPointKind toPlain(ZeroPointKind k) {
  switch (k) {
  case ZeroPointKind::None:
    return ::qtensor::ZeroPointKind::None;
  case ZeroPointKind::Integer:
    return ::qtensor::ZeroPointKind::Integer;
  case ZeroPointKind::Float:
    return ::qtensor::ZeroPointKind::Float;
  case ZeroPointKind::Min:
    return ::qtensor::ZeroPointKind::Min;
  }
  return ::qtensor::ZeroPointKind::None;
}

/// Reinterprets or checks a scalar attribute as `elementType`.
Expected<Attribute> convertScalar(TypedAttr attr, Type elementType) {
  if (attr.getType() == elementType)
    return Attribute(attr);
  auto intAttr = dyn_cast<IntegerAttr>(attr);
  auto intType = dyn_cast<IntegerType>(elementType);
  if (intAttr && intType &&
      intAttr.getValue().getBitWidth() == intType.getWidth())
    return Attribute(IntegerAttr::get(intType, intAttr.getValue()));
  return makeError("a qparam of type ", debugString(attr.getType()),
                   " cannot become ", debugString(elementType));
}
} // namespace

Expected<QParamLayout> import::inferLayout(const QParamSource &scales,
                                           ArrayRef<int64_t> codesShape) {
  QParamLayout layout;
  if (scales.isSplat())
    return layout;
  auto used = usedDims(scales, codesShape, "scale");
  if (!used)
    return used.error();
  if (used->empty())
    return layout;

  SmallVector<UsedDim> blocked;
  for (const UsedDim &dim : *used) {
    if (Status s = checkDimSize(dim, codesShape, "scales"); !s)
      return s.error();
    if (dim.access.blockSize > 1)
      blocked.push_back(dim);
  }
  if (blocked.size() > 1)
    return makeError("scales form 2-D blocks (", blocked[0].access.blockSize,
                     " along axis ", blocked[0].access.codesDim, ", ",
                     blocked[1].access.blockSize, " along axis ",
                     blocked[1].access.codesDim,
                     "); #qtensor.affine groups run along one axis");
  if (blocked.size() == 1) {
    layout.granularity = Granularity::Group;
    layout.axis = blocked[0].access.codesDim;
    layout.groupSize = blocked[0].access.blockSize;
    return layout;
  }
  if (used->size() > 1)
    return makeError("scales have one entry per element along axes ",
                     (*used)[0].access.codesDim, " and ",
                     (*used)[1].access.codesDim,
                     "; per_axis scales vary along one axis and groups "
                     "along one axis in blocks of more than one");
  layout.granularity = Granularity::PerAxis;
  layout.axis = (*used)[0].access.codesDim;
  return layout;
}

Status import::checkZeroPointsFit(const QParamSource &zeroPoints,
                                  const QParamLayout &layout,
                                  ArrayRef<int64_t> codesShape) {
  if (zeroPoints.isSplat())
    return Status::ok();
  auto used = usedDims(zeroPoints, codesShape, "zero-point");
  if (!used)
    return used.error();
  for (const UsedDim &dim : *used) {
    if (Status s = checkDimSize(dim, codesShape, "zero-points"); !s)
      return s;
    int64_t axis = dim.access.codesDim, block = dim.access.blockSize;
    bool fits = false;
    switch (layout.granularity) {
    case Granularity::PerTensor:
      break;
    case Granularity::PerAxis:
      fits = axis == layout.axis && block == 1;
      break;
    case Granularity::Group:
      fits = block == (axis == layout.axis ? layout.groupSize : 1);
      break;
    }
    if (!fits)
      return makeError("zero-points vary along axis ", axis,
                       block == 1 ? std::string()
                                  : " in blocks of " + std::to_string(block),
                       " but the scales are ", describe(layout),
                       "; zero-points must share the scales' qparam shape");
  }
  return Status::ok();
}

std::pair<int64_t, int64_t> import::codeBounds(const CodeSpec &code) {
  if (!code.isSigned)
    return {0, (int64_t(1) << code.bits) - 1};
  int64_t q = (int64_t(1) << (code.bits - 1)) - 1;
  return {code.narrowRange ? -q : -q - 1, q};
}

IntegerType import::getCodeType(MLIRContext *context, const CodeSpec &code) {
  return IntegerType::get(context, code.bits,
                          code.isSigned ? IntegerType::Signed
                                        : IntegerType::Unsigned);
}

bool import::isQTensorFloat(Type type) {
  return type.isF16() || type.isBF16() || type.isF32();
}

Expected<QuantizedTensorType>
import::buildQuantizedType(ArrayRef<int64_t> shape, FloatType elementType,
                           const CodeSpec &code, const QParamLayout &layout,
                           ZeroPointKind zeroPoint, FloatType scaleType) {
  if (!isQTensorFloat(elementType))
    return makeError("the dequantized element type is ",
                     debugString(elementType),
                     "; qtensor reconstructs f16, bf16 or f32");
  if (!isQTensorFloat(scaleType))
    return makeError("the scale type is ", debugString(scaleType),
                     "; qtensor stores scales as f16, bf16 or f32");
  ::qtensor::QuantizedTensorDescriptor t;
  t.shape.assign(shape.begin(), shape.end());
  t.elementType = toPlainFloat(elementType);
  ::qtensor::AffineDescriptor &d = t.descriptor;
  d.code = {code.bits, code.isSigned};
  d.scheme = zeroPoint == ZeroPointKind::None
                 ? ::qtensor::QuantScheme::Symmetric
                 : ::qtensor::QuantScheme::Asymmetric;
  d.zeroPoint = toPlain(zeroPoint);
  d.granularity = toPlain(layout.granularity);
  d.axis = layout.axis;
  d.groupSize = layout.groupSize;
  d.scaleType = toPlainFloat(scaleType);
  d.narrowRange = code.narrowRange;
  auto type = toType(elementType.getContext(), t);
  if (!type)
    return makeError("qtensor rejects the descriptor: ", type.message());
  return *type;
}

Value import::castCodes(OpBuilder &builder, Location loc, Value codes,
                        IntegerType codeType) {
  auto type = cast<RankedTensorType>(codes.getType());
  if (type.getElementType() == codeType)
    return codes;
  RankedTensorType target = type.clone(codeType);
  DenseElementsAttr constant;
  if (matchPattern(codes, m_Constant(&constant)))
    return arith::ConstantOp::create(builder, loc, target,
                                     constant.bitcast(codeType));
  return tensor::BitcastOp::create(builder, loc, target, codes);
}

Expected<Value> import::materializeQParam(OpBuilder &builder, Location loc,
                                          const QParamSource &source,
                                          QuantizedTensorType type,
                                          Type elementType) {
  auto descriptor = dyn_cast<AffineDescriptorAttr>(type.getDescriptor());
  if (!descriptor)
    return makeError("the import builds #qtensor.affine descriptors only");
  SmallVector<int64_t> qshape = descriptor.getQParamShape(type.getShape());
  auto target = RankedTensorType::get(qshape, elementType);

  if (source.isSplat()) {
    auto scalar = convertScalar(source.splat, elementType);
    if (!scalar)
      return scalar.error();
    return Value(arith::ConstantOp::create(
        builder, loc, target, DenseElementsAttr::get(target, *scalar)));
  }

  // Which source dimension feeds each qparam dimension (-1: replicated).
  SmallVector<int64_t> axes = qparamAxes(descriptor, type.getRank());
  SmallVector<int64_t> sourceDimOf(qshape.size(), -1);
  ArrayRef<int64_t> shape = source.getShape();
  SmallVector<int64_t> kept;
  for (auto [i, access] : llvm::enumerate(source.dims)) {
    if (shape[i] == 1)
      continue;
    auto it = llvm::find(axes, access.codesDim);
    if (access.kind != DimAccess::Kind::Block || it == axes.end())
      return makeError("qparam dimension ", i,
                       " has no place in the qparam shape");
    sourceDimOf[it - axes.begin()] = static_cast<int64_t>(i);
    kept.push_back(static_cast<int64_t>(i));
  }

  if (source.constant) {
    DenseElementsAttr constant = source.constant;
    Type from = constant.getElementType();
    bool sameInts =
        isa<IntegerType>(from) && isa<IntegerType>(elementType) &&
        from.getIntOrFloatBitWidth() == elementType.getIntOrFloatBitWidth();
    if (from != elementType && !sameInts)
      return makeError("a qparam constant of type ", debugString(from),
                       " cannot become ", debugString(elementType));
    if (constant.isSplat()) {
      auto scalar =
          convertScalar(constant.getSplatValue<TypedAttr>(), elementType);
      if (!scalar)
        return scalar.error();
      return Value(arith::ConstantOp::create(
          builder, loc, target, DenseElementsAttr::get(target, *scalar)));
    }
    auto count = ::qtensor::checkedElementCount(
        qshape, static_cast<uint64_t>(kMaxMaterializedQParams));
    if (!count)
      return makeError("the qparam tensor would hold more than ",
                       kMaxMaterializedQParams, " entries");
    // Strides of the source, to read entry [i0, i1, ...] of the qparams.
    SmallVector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * shape[i + 1];
    SmallVector<int64_t> sourceIndex(*count);
    SmallVector<int64_t> index(qshape.size(), 0);
    for (uint64_t linear = 0; linear < *count; ++linear) {
      int64_t at = 0;
      for (auto [q, dim] : llvm::enumerate(sourceDimOf))
        if (dim >= 0)
          at += index[q] * strides[dim];
      sourceIndex[linear] = at;
      for (int64_t q = static_cast<int64_t>(qshape.size()) - 1; q >= 0; --q) {
        if (++index[q] < qshape[q])
          break;
        index[q] = 0;
      }
    }
    DenseElementsAttr result;
    if (isa<FloatType>(from)) {
      auto values = llvm::to_vector(constant.getValues<APFloat>());
      SmallVector<APFloat> picked;
      picked.reserve(*count);
      for (int64_t at : sourceIndex)
        picked.push_back(values[at]);
      result = DenseElementsAttr::get(target, picked);
    } else {
      auto values = llvm::to_vector(constant.getValues<APInt>());
      SmallVector<APInt> picked;
      picked.reserve(*count);
      for (int64_t at : sourceIndex)
        picked.push_back(values[at]);
      result = DenseElementsAttr::get(target, picked);
    }
    return Value(arith::ConstantOp::create(builder, loc, target, result));
  }

  // A run-time tensor: reinterpret, drop unit dimensions, replicate.
  Value value = source.value;
  auto valueType = cast<RankedTensorType>(value.getType());
  if (valueType.getElementType() != elementType) {
    Type from = valueType.getElementType();
    if (!isa<IntegerType>(from) || !isa<IntegerType>(elementType) ||
        from.getIntOrFloatBitWidth() != elementType.getIntOrFloatBitWidth())
      return makeError("a qparam tensor of type ", debugString(from),
                       " cannot become ", debugString(elementType));
    valueType = valueType.clone(elementType);
    value = tensor::BitcastOp::create(builder, loc, valueType, value);
  }
  if (kept.size() != shape.size()) {
    // One group per kept dimension; unit dimensions join a neighbour (none
    // kept: a rank-0 result, which takes no groups).
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices leading;
    for (int64_t i = 0, e = static_cast<int64_t>(shape.size()); i < e; ++i) {
      if (shape[i] != 1) {
        groups.push_back(leading);
        groups.back().push_back(i);
        leading.clear();
      } else if (groups.empty()) {
        leading.push_back(i);
      } else {
        groups.back().push_back(i);
      }
    }
    SmallVector<int64_t> collapsed;
    for (int64_t i : kept)
      collapsed.push_back(shape[i]);
    auto collapsedType = RankedTensorType::get(collapsed, elementType);
    value = tensor::CollapseShapeOp::create(builder, loc, collapsedType, value,
                                            groups);
  }
  if (kept.size() != qshape.size()) {
    SmallVector<int64_t> added;
    for (auto [q, dim] : llvm::enumerate(sourceDimOf))
      if (dim < 0)
        added.push_back(static_cast<int64_t>(q));
    Value init = tensor::EmptyOp::create(builder, loc, qshape, elementType);
    value = linalg::BroadcastOp::create(builder, loc, value, init, added)
                ->getResult(0);
  }
  return value;
}

void import::eraseWithDeadProducers(Operation *op) {
  SmallVector<Operation *> worklist{op};
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!worklist.empty()) {
    Operation *next = worklist.pop_back_val();
    if (erased.contains(next) || !next->use_empty() ||
        (next != op && !isOpTriviallyDead(next)))
      continue;
    llvm::SetVector<Operation *> producers;
    for (Value operand : next->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        producers.insert(producer);
    erased.insert(next);
    next->erase();
    worklist.append(producers.begin(), producers.end());
  }
}

std::string import::formatDouble(double value) {
  SmallString<24> text;
  APFloat(value).toString(text);
  return std::string(text);
}
