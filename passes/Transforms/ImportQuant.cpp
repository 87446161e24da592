//===- ImportQuant.cpp - qtensor-import of upstream quant ops -------------===//
//
// A `!quant.uniform` value made from integer codes (`quant.scast`) becomes
// `qtensor.assemble`, one made from floats (`quant.qcast`) becomes
// `qtensor.quantize`; its `quant.dcast` uses become `qtensor.dequantize` and
// its `quant.scast` uses back to integers get the codes. A value of any
// other origin (a block argument, an `ml_program.global_load_const` of a
// quantized global, a front end's constant op) is read as its codes with a
// `quant.scast` to its storage type, a reinterpretation of the same bits,
// and assembled the same way; the value itself stays for any other use.
// The qparams come from the type and are written out as constants in the
// qparam shape the qtensor verifier expects.
//
// Semantics (QuantOps.td): x = (q - zp) * scale computed in the expressed
// type, which is therefore both the reconstructed type and the scale type:
// the scales are rounded to it exactly as `lower-quant-ops` materializes
// them. `quant.qcast` leaves rounding to the pipeline; the descriptor keeps
// its default (nearest_even) and saturation `clamp` to the storage range,
// which is what qcast's clamp to [storageMin, storageMax] says.
//
//===----------------------------------------------------------------------===//

#include "ImportCommon.h"

#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Support/DebugStringHelper.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::qt;
using namespace mlir::qt::import;

namespace {

/// Everything needed to import one quantized value.
struct QuantPlan {
  CodeSpec code;
  unsigned storageBits = 8;
  QParamSource scales;
  std::optional<QParamSource> zeroPoints;
  QuantizedTensorType type;
};

std::string storageName(quant::QuantizedType qtype) {
  return (qtype.isSigned() ? "i" : "u") +
         std::to_string(qtype.getStorageTypeIntegralWidth());
}

/// The qtensor code type for the storage type and its declared range: the
/// full range of a 2/3/4/8-bit code, or (signed) its restricted range. A
/// range narrower than the storage type selects a smaller code, e.g.
/// `i8<-8:7>` holds si4 codes.
Expected<CodeSpec> recoverCodeSpec(quant::QuantizedType qtype) {
  if (!isa<IntegerType>(qtype.getStorageType()))
    return makeError("its storage type ", debugString(qtype.getStorageType()),
                     " is not an integer type");
  unsigned width = qtype.getStorageTypeIntegralWidth();
  bool isSigned = qtype.isSigned();
  std::pair<int64_t, int64_t> range{qtype.getStorageTypeMin(),
                                    qtype.getStorageTypeMax()};
  for (unsigned bits : {2u, 3u, 4u, 5u, 6u, 8u}) {
    if (bits > width)
      break;
    CodeSpec full{bits, isSigned, false};
    if (codeBounds(full) == range)
      return full;
    CodeSpec narrow{bits, isSigned, true};
    if (isSigned && codeBounds(narrow) == range)
      return narrow;
  }
  if (!qtype.hasStorageTypeBounds())
    return makeError("its storage type ", storageName(qtype), " has ", width,
                     " bits; qtensor codes have 2, 3, 4, 5, 6 or 8");
  return makeError("its storage range [", range.first, ", ", range.second,
                   "] of ", storageName(qtype),
                   " is neither the full nor the narrow range of a 2-, 3-, 4-, "
                   "5-, 6- or 8-bit code");
}

/// A scale rounded to the expressed type, which must keep it finite and
/// non-zero.
Expected<APFloat> convertScale(const APFloat &scale, FloatType type) {
  APFloat converted = scale;
  bool losesInfo = false;
  converted.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
  if (!converted.isFiniteNonZero())
    return makeError("scale ", formatDouble(scale.convertToDouble()),
                     " is not a finite non-zero ", debugString(type));
  return converted;
}

/// A zero-point as a code, which must lie in the code range.
Expected<APInt> convertZeroPoint(int64_t zeroPoint, const CodeSpec &code) {
  auto [lo, hi] = codeBounds(code);
  if (zeroPoint < lo || zeroPoint > hi)
    return makeError("zero-point ", zeroPoint, " is outside the code range [",
                     lo, ", ", hi, "]");
  return APInt(code.bits, static_cast<uint64_t>(zeroPoint), code.isSigned);
}

/// Scales and zero-points of a per-tensor or per-axis type.
Status collectListedQParams(ArrayRef<double> scales,
                            ArrayRef<int64_t> zeroPoints, int64_t axis,
                            FloatType expressed, QuantPlan &plan,
                            SmallVectorImpl<APInt> &zeroValues) {
  MLIRContext *context = expressed.getContext();
  SmallVector<APFloat> scaleValues;
  for (double scale : scales) {
    auto converted = convertScale(APFloat(scale), expressed);
    if (!converted)
      return converted.error();
    scaleValues.push_back(*converted);
  }
  for (int64_t zeroPoint : zeroPoints) {
    auto converted = convertZeroPoint(zeroPoint, plan.code);
    if (!converted)
      return converted.error();
    zeroValues.push_back(*converted);
  }
  IntegerType codeType = getCodeType(context, plan.code);
  if (axis < 0) {
    plan.scales.splat = FloatAttr::get(expressed, scaleValues.front());
    plan.zeroPoints = QParamSource{};
    plan.zeroPoints->splat = IntegerAttr::get(codeType, zeroValues.front());
    return Status::ok();
  }
  int64_t count = static_cast<int64_t>(scales.size());
  plan.scales.constant = DenseElementsAttr::get(
      RankedTensorType::get({count}, expressed), scaleValues);
  plan.scales.dims = {DimAccess::block(axis, 1)};
  plan.zeroPoints = QParamSource{};
  plan.zeroPoints->constant = DenseElementsAttr::get(
      RankedTensorType::get({count}, codeType), zeroValues);
  plan.zeroPoints->dims = {DimAccess::block(axis, 1)};
  return Status::ok();
}

/// Scales and zero-points of a sub-channel type: a tensor with one entry per
/// block, blocks of `blockSize` along the listed axes and whole axes
/// elsewhere.
Status collectSubChannelQParams(quant::UniformQuantizedSubChannelType qtype,
                                ArrayRef<int64_t> shape, FloatType expressed,
                                QuantPlan &plan,
                                SmallVectorImpl<APInt> &zeroValues) {
  MLIRContext *context = expressed.getContext();
  DenseElementsAttr scales = qtype.getScales();
  DenseElementsAttr zeroPoints = qtype.getZeroPoints();
  ArrayRef<int64_t> qshape = scales.getType().getShape();
  if (qshape.size() != shape.size() ||
      zeroPoints.getType().getShape() != qshape)
    return makeError("its scale and zero-point tensors do not have the "
                     "tensor's rank ",
                     shape.size());
  SmallVector<int64_t> blockSizes(shape.begin(), shape.end());
  for (auto [axis, blockSize] : qtype.getBlockSizeInfo()) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
        blockSize <= 0)
      return makeError("its block size ", blockSize, " along axis ", axis,
                       " does not fit a rank-", shape.size(), " tensor");
    blockSizes[axis] = blockSize;
  }

  SmallVector<APFloat> scaleValues;
  for (APFloat scale : scales.getValues<APFloat>()) {
    auto converted = convertScale(scale, expressed);
    if (!converted)
      return converted.error();
    scaleValues.push_back(*converted);
  }
  for (const APInt &zeroPoint : zeroPoints.getValues<APInt>()) {
    int64_t value = qtype.isSigned()
                        ? zeroPoint.getSExtValue()
                        : static_cast<int64_t>(zeroPoint.getZExtValue());
    auto converted = convertZeroPoint(value, plan.code);
    if (!converted)
      return converted.error();
    zeroValues.push_back(*converted);
  }
  SmallVector<DimAccess> dims;
  for (auto [axis, size] : llvm::enumerate(qshape))
    dims.push_back(size == 1 ? DimAccess::unit()
                             : DimAccess::block(axis, blockSizes[axis]));
  plan.scales.constant = DenseElementsAttr::get(
      RankedTensorType::get(qshape, expressed), scaleValues);
  plan.scales.dims = dims;
  plan.zeroPoints = QParamSource{};
  plan.zeroPoints->constant = DenseElementsAttr::get(
      RankedTensorType::get(qshape, getCodeType(context, plan.code)),
      zeroValues);
  plan.zeroPoints->dims = dims;
  return Status::ok();
}

/// Recovers the qtensor type and qparams of the quantized tensor `type`.
Expected<QuantPlan> planImport(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return makeError("it is not a ranked tensor; qtensor quantizes ranked "
                     "tensors");
  if (!tensorType.hasStaticShape())
    return makeError("its shape ", debugString(type),
                     " is dynamic; qtensor tensors have static shapes");
  auto qtype = cast<quant::QuantizedType>(tensorType.getElementType());
  auto expressed = dyn_cast_or_null<FloatType>(qtype.getExpressedType());
  if (!expressed || !isQTensorFloat(expressed))
    return makeError("its expressed type ",
                     debugString(qtype.getExpressedType()),
                     " is not f16, bf16 or f32, the types qtensor "
                     "reconstructs");

  QuantPlan plan;
  plan.storageBits = qtype.getStorageTypeIntegralWidth();
  auto code = recoverCodeSpec(qtype);
  if (!code)
    return code.error();
  plan.code = *code;

  ArrayRef<int64_t> shape = tensorType.getShape();
  SmallVector<APInt> zeroValues;
  Status collected = Status::ok();
  if (auto perTensor = dyn_cast<quant::UniformQuantizedType>(qtype)) {
    double scale = perTensor.getScale();
    int64_t zeroPoint = perTensor.getZeroPoint();
    collected =
        collectListedQParams(scale, zeroPoint, -1, expressed, plan, zeroValues);
  } else if (auto perAxis =
                 dyn_cast<quant::UniformQuantizedPerAxisType>(qtype)) {
    int64_t axis = perAxis.getQuantizedDimension();
    if (axis < 0 || axis >= tensorType.getRank() ||
        shape[axis] != static_cast<int64_t>(perAxis.getScales().size()))
      return makeError("its ", perAxis.getScales().size(),
                       " scales do not match axis ", axis, " of ",
                       debugString(type));
    collected =
        collectListedQParams(perAxis.getScales(), perAxis.getZeroPoints(), axis,
                             expressed, plan, zeroValues);
  } else if (auto subChannel =
                 dyn_cast<quant::UniformQuantizedSubChannelType>(qtype)) {
    collected = collectSubChannelQParams(subChannel, shape, expressed, plan,
                                         zeroValues);
  } else {
    return makeError("its element type ", debugString(qtype),
                     " is not a !quant.uniform type");
  }
  if (!collected)
    return collected.error();

  auto layout = inferLayout(plan.scales, shape);
  if (!layout)
    return layout.error();
  bool hasZeroPoints =
      llvm::any_of(zeroValues, [](const APInt &z) { return !z.isZero(); });
  if (!hasZeroPoints) {
    plan.zeroPoints.reset();
  } else if (plan.code.narrowRange) {
    return makeError("its narrow storage range comes with non-zero "
                     "zero-points; qtensor's narrow_range is symmetric only");
  } else if (Status fit = checkZeroPointsFit(*plan.zeroPoints, *layout, shape);
             !fit) {
    return fit.error();
  }
  auto qtensorType = buildQuantizedType(
      shape, expressed, plan.code, *layout,
      hasZeroPoints ? ZeroPointKind::Integer : ZeroPointKind::None, expressed);
  if (!qtensorType)
    return qtensorType.error();
  plan.type = *qtensorType;
  return plan;
}

/// Constant storage codes must lie in the code range the type declares:
/// narrowing them to a smaller code or a restricted range must not change
/// any of them.
Status checkConstantCodes(Value storage, const CodeSpec &code) {
  DenseIntElementsAttr constant;
  if (!matchPattern(storage, m_Constant(&constant)))
    return Status::ok();
  std::pair<int64_t, int64_t> bounds = codeBounds(code);
  int64_t lo = bounds.first, hi = bounds.second;
  auto check = [&](const APInt &raw, int64_t index) -> Status {
    int64_t value = code.isSigned ? raw.getSExtValue()
                                  : static_cast<int64_t>(raw.getZExtValue());
    if (value >= lo && value <= hi)
      return Status::ok();
    return makeError("constant code ", value, " at flat index ", index,
                     " is outside the storage range [", lo, ", ", hi, "]");
  };
  if (constant.isSplat())
    return check(constant.getSplatValue<APInt>(), 0);
  int64_t index = 0;
  for (const APInt &raw : constant.getValues<APInt>())
    if (Status s = check(raw, index++); !s)
      return s;
  return Status::ok();
}

/// The storage codes as signless integers of the code width: a truncation,
/// computed here for a constant.
Value narrowCodes(OpBuilder &builder, Location loc, Value storage,
                  RankedTensorType narrowType) {
  DenseIntElementsAttr constant;
  if (!matchPattern(storage, m_Constant(&constant)))
    return arith::TruncIOp::create(builder, loc, narrowType, storage);
  unsigned bits = narrowType.getElementTypeBitWidth();
  auto narrowed =
      constant.mapValues(narrowType.getElementType(),
                         [&](const APInt &value) { return value.trunc(bits); });
  return arith::ConstantOp::create(builder, loc, narrowType, narrowed);
}

/// The quantized value's uses, by what the import does with them.
struct QuantUses {
  SmallVector<quant::DequantizeCastOp> dequantizes;
  SmallVector<quant::StorageCastOp> toStorage;
  SmallVector<Operation *> others;
};

QuantUses classifyUses(Value quantized) {
  QuantUses uses;
  for (Operation *user : quantized.getUsers()) {
    if (auto dcast = dyn_cast<quant::DequantizeCastOp>(user))
      uses.dequantizes.push_back(dcast);
    else if (auto scast = dyn_cast<quant::StorageCastOp>(user))
      uses.toStorage.push_back(scast);
    else
      uses.others.push_back(user);
  }
  return uses;
}

/// The origin of a quantized value, as remarks name it.
std::string originOf(Value value) {
  if (Operation *op = value.getDefiningOp())
    return "'" + op->getName().getStringRef().str() + "'";
  return "block argument #" +
         std::to_string(cast<BlockArgument>(value).getArgNumber());
}

/// Imports `quantized`; fails with the reason it stays.
Status importValue(Value quantized, RemarkFn remark) {
  Operation *producer = quantized.getDefiningOp();
  auto fromCodes = dyn_cast_or_null<quant::StorageCastOp>(producer);
  auto qcast = dyn_cast_or_null<quant::QuantizeCastOp>(producer);
  QuantUses uses = classifyUses(quantized);
  if (uses.dequantizes.empty() && uses.toStorage.empty())
    return makeError("its result has no quant.dcast or quant.scast use to "
                     "rewrite");
  auto plan = planImport(quantized.getType());
  if (!plan)
    return plan.error();
  if (fromCodes)
    if (Status s = checkConstantCodes(fromCodes.getInput(), plan->code); !s)
      return s;

  // Build the qparams first: a failure takes them back and leaves the IR
  // as it was.
  Location loc = producer ? producer->getLoc() : quantized.getLoc();
  CreatedOps created;
  OpBuilder builder(quantized.getContext(), &created);
  if (producer)
    builder.setInsertionPointAfter(producer);
  else
    builder.setInsertionPointToStart(quantized.getParentBlock());
  QuantizedTensorType type = plan->type;
  auto scales = materializeQParam(builder, loc, plan->scales, type,
                                  type.getDescriptor().getScaleElementType());
  if (!scales) {
    created.rollback();
    return scales.error();
  }
  Value zeroPoints;
  if (plan->zeroPoints) {
    auto materialized =
        materializeQParam(builder, loc, *plan->zeroPoints, type,
                          type.getDescriptor().getZeroPointElementType());
    if (!materialized) {
      created.rollback();
      return materialized.error();
    }
    zeroPoints = *materialized;
  }

  MLIRContext *context = quantized.getContext();
  IntegerType codeType = getCodeType(context, plan->code);
  auto narrowType = RankedTensorType::get(
      type.getShape(), IntegerType::get(context, plan->code.bits));
  // The integer codes: what a quant.scast started from, or, for a value of
  // any other origin, its bits read as the storage type.
  Value storage;
  if (fromCodes) {
    storage = fromCodes.getInput();
  } else if (!qcast) {
    auto qtype = cast<quant::QuantizedType>(getElementTypeOrSelf(quantized));
    storage = quant::StorageCastOp::create(
        builder, loc,
        RankedTensorType::get(type.getShape(), qtype.getStorageType()),
        quantized);
  }
  Value result;
  if (storage) {
    Value codes = storage;
    if (plan->code.bits < plan->storageBits)
      codes = narrowCodes(builder, loc, codes, narrowType);
    codes = castCodes(builder, loc, codes, codeType);
    result = AssembleOp::create(builder, loc, type, codes, *scales, zeroPoints);
  } else {
    result = QuantizeOp::create(builder, loc, type, qcast.getInput(), *scales,
                                zeroPoints);
  }

  for (quant::DequantizeCastOp dcast : uses.dequantizes) {
    builder.setInsertionPoint(dcast);
    Value dequantized = DequantizeOp::create(
        builder, dcast.getLoc(), type.getReconstructedType(), result);
    dcast.getResult().replaceAllUsesWith(dequantized);
    dcast.erase();
  }
  for (quant::StorageCastOp scast : uses.toStorage) {
    Value codes = storage;
    if (!codes) {
      builder.setInsertionPoint(scast);
      SmallVector<Type> resultTypes{type.getCodesType(), type.getScalesType()};
      if (zeroPoints)
        resultTypes.push_back(type.getZeroPointsType());
      auto parts =
          DisassembleOp::create(builder, scast.getLoc(), resultTypes, result);
      codes = castCodes(builder, scast.getLoc(), parts.getCodes(),
                        cast<IntegerType>(narrowType.getElementType()));
      auto storageType = cast<RankedTensorType>(scast.getType());
      if (plan->code.bits < plan->storageBits)
        codes = plan->code.isSigned
                    ? Value(arith::ExtSIOp::create(builder, scast.getLoc(),
                                                   storageType, codes))
                    : Value(arith::ExtUIOp::create(builder, scast.getLoc(),
                                                   storageType, codes));
    }
    scast.getResult().replaceAllUsesWith(codes);
    scast.erase();
  }
  if (!fromCodes && !qcast)
    return Status::ok(); // the value stays; its dcasts read the codes now
  if (!uses.others.empty())
    remark(producer,
           originOf(quantized) + " result keeps its quant type for " +
               Twine(uses.others.size()) +
               " use(s) that cannot take a !qtensor.tensor (first: '" +
               uses.others.front()->getName().getStringRef() +
               "'); its quant.dcast and quant.scast uses were "
               "imported");
  else
    producer->erase();
  return Status::ok();
}
} // namespace

void import::importQuantOps(Operation *root, RemarkFn remark) {
  // Every quantized value a quant.dcast or quant.scast reads, and every one
  // made by quant.scast or quant.qcast, once, producers before their uses.
  SmallVector<Value> values;
  DenseSet<Value> seen;
  auto add = [&](Value v) {
    if (seen.insert(v).second)
      values.push_back(v);
  };
  root->walk([&](Operation *op) {
    if (auto scast = dyn_cast<quant::StorageCastOp>(op)) {
      if (isa<quant::QuantizedType>(
              getElementTypeOrSelf(scast.getResult().getType())))
        add(scast.getResult());
    } else if (isa<quant::QuantizeCastOp>(op)) {
      add(op->getResult(0));
    } else if (auto dcast = dyn_cast<quant::DequantizeCastOp>(op)) {
      add(dcast.getInput());
    }
  });
  for (Value value : values) {
    Operation *producer = value.getDefiningOp();
    bool ours =
        isa_and_nonnull<quant::StorageCastOp, quant::QuantizeCastOp>(producer);
    // A remark on a value of another origin goes on its first dcast.
    Operation *at = producer;
    if (!ours)
      for (Operation *user : value.getUsers())
        if (isa<quant::DequantizeCastOp>(user)) {
          at = user;
          break;
        }
    if (Status status = importValue(value, remark); !status)
      remark(at, ours ? "'" + producer->getName().getStringRef() +
                            "' not imported: " + status.message()
                      : "'quant.dcast' of " + originOf(value) +
                            " not imported: " + status.message());
  }
}
