//===- ImportArithChain.cpp - Matching a raw arith dequantization ---------===//
//
// The elementwise chain (on tensors, or in an elementwise linalg.generic):
//
//   D = mulf(shifted, scale)                      (either operand order)
//   shifted = conv(codes)                         symmetric
//           | subf(conv(codes), z)                float or integer z
//           | sitofp(subi(ext(codes), ext(z)|c))  integer z
//   conv = uitofp | sitofp, after optional extui / extsi
//
// Signedness comes from the conversion; a difference taken in the codes'
// own width (it wraps) or read back unsigned is refused.
//
//===----------------------------------------------------------------------===//

#include "ImportArith.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Support/DebugStringHelper.h"

using namespace mlir;
using namespace mlir::qt;
using namespace mlir::qt::import;

namespace {
/// Integers and how they were converted to float.
struct ConvertedInts {
  Value ints;
  unsigned bits = 0;
  bool isSigned = false;
};

bool isIntToFloat(Value value) {
  return isa_and_nonnull<arith::UIToFPOp, arith::SIToFPOp>(
      value.getDefiningOp());
}

/// Strips `arith.extui` / `arith.extsi`; `extSigned` says which (unset: none).
Expected<Value> stripExtensions(Value value, std::optional<bool> &extSigned) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<arith::ExtUIOp, arith::ExtSIOp>(op))
      break;
    bool isSigned = isa<arith::ExtSIOp>(op);
    if (extSigned && *extSigned != isSigned)
      return makeError("integers are extended by both arith.extsi and "
                       "arith.extui on the way to their conversion");
    extSigned = isSigned;
    value = op->getOperand(0);
  }
  return value;
}

unsigned intWidth(Value value) {
  auto type = dyn_cast<IntegerType>(getElementTypeOrSelf(value.getType()));
  return type ? type.getWidth() : 0;
}

/// Matches the elementwise chain rooted at a `arith.mulf` result; leaves are
/// resolved on tensors (tensor form) or through a generic's operands.
class ChainMatcher {
public:
  ChainMatcher(linalg::GenericOp generic, ArrayRef<DimAccess> resultDims)
      : generic(generic), resultDims(resultDims) {}

  Expected<DequantChain> match(arith::MulFOp mul) {
    DequantChain chain;
    chain.floatType = cast<FloatType>(getElementTypeOrSelf(mul.getType()));
    bool lhsCodes = convertsInts(mul.getLhs());
    bool rhsCodes = convertsInts(mul.getRhs());
    if (lhsCodes == rhsCodes)
      return makeError(lhsCodes ? "both factors of the arith.mulf convert "
                                  "integers"
                                : "no factor of the arith.mulf converts "
                                  "integer codes");
    Value shifted = lhsCodes ? mul.getLhs() : mul.getRhs();
    auto scales =
        resolveQParam(lhsCodes ? mul.getRhs() : mul.getLhs(), "scales");
    if (!scales)
      return scales.error();
    chain.scales = *scales;
    if (Status s = matchShifted(shifted, chain); !s)
      return s.error();
    return chain;
  }

private:
  /// shifted = conv(codes) | subf(conv(codes), z) | sitofp(subi(...)).
  Status matchShifted(Value shifted, DequantChain &chain) {
    if (auto sub = shifted.getDefiningOp<arith::SubFOp>()) {
      auto codes = matchConverted(sub.getLhs(), "codes");
      if (!codes)
        return codes.error();
      if (Status s = setCodes(*codes, chain); !s)
        return s;
      Value zero = sub.getRhs();
      if (isIntToFloat(zero)) {
        auto ints = matchConverted(zero, "zero-points");
        if (!ints)
          return ints.error();
        if (ints->bits != chain.bits || ints->isSigned != chain.isSigned)
          return makeError("the zero-points are ", describeInts(*ints),
                           " but the codes are ", describeInts(*codes),
                           "; integer zero-points are codes");
        return setZeroPoints(ints->ints, ZeroPointKind::Integer, chain);
      }
      auto source = resolveQParam(zero, "zero-points");
      if (!source)
        return source.error();
      return setFloatZeroPoints(*source, chain);
    }
    if (isIntToFloat(shifted)) {
      Operation *conv = shifted.getDefiningOp();
      if (auto subi = conv->getOperand(0).getDefiningOp<arith::SubIOp>())
        return matchSubi(conv, subi, chain);
    }
    auto codes = matchConverted(shifted, "codes");
    if (!codes)
      return codes.error();
    return setCodes(*codes, chain);
  }

  /// conv(ext*(ints)), with the signedness the conversion implies.
  Expected<ConvertedInts> matchConverted(Value value, StringRef what) {
    Operation *conv = value.getDefiningOp();
    if (!isa_and_nonnull<arith::UIToFPOp, arith::SIToFPOp>(conv))
      return makeError("the ", what.str(),
                       " are not converted from integers by arith.uitofp or "
                       "arith.sitofp");
    bool signedConversion = isa<arith::SIToFPOp>(conv);
    std::optional<bool> extSigned;
    auto ints = stripExtensions(conv->getOperand(0), extSigned);
    if (!ints)
      return ints.error();
    ConvertedInts result{*ints, intWidth(*ints), signedConversion};
    if (extSigned) {
      if (*extSigned && !signedConversion)
        return makeError("the ", what.str(),
                         " are sign-extended and then converted by "
                         "arith.uitofp, which turns negative values into "
                         "large ones");
      // A zero-extended value is non-negative, so sitofp reads it unsigned.
      result.isSigned = *extSigned;
    }
    return result;
  }

  /// sitofp(subi(ext(codes), ext(zi) | constant)): the difference is taken
  /// in a wider type, where it cannot wrap.
  Status matchSubi(Operation *conv, arith::SubIOp subi, DequantChain &chain) {
    if (!isa<arith::SIToFPOp>(conv))
      return makeError("the integer difference q - z is converted by "
                       "arith.uitofp, which turns negative differences into "
                       "large values");
    std::optional<bool> extSigned;
    auto codes = stripExtensions(subi.getLhs(), extSigned);
    if (!codes)
      return codes.error();
    if (!extSigned)
      return makeError("arith.subi runs in the codes' own width, where q - z "
                       "wraps; the import needs the codes extended first");
    if (Status s = setCodes({*codes, intWidth(*codes), *extSigned}, chain); !s)
      return s;

    std::optional<bool> zeroExtSigned;
    auto zero = stripExtensions(subi.getRhs(), zeroExtSigned);
    if (!zero)
      return zero.error();
    if (zeroExtSigned) {
      if (*zeroExtSigned != *extSigned || intWidth(*zero) != chain.bits)
        return makeError("the zero-points are extended from i", intWidth(*zero),
                         " by ", *zeroExtSigned ? "arith.extsi" : "arith.extui",
                         " but the codes from i", chain.bits, " by ",
                         *extSigned ? "arith.extsi" : "arith.extui",
                         "; integer zero-points are codes");
      return setZeroPoints(*zero, ZeroPointKind::Integer, chain);
    }
    // A wide constant: each zero-point must be a code.
    auto source = resolveQParam(*zero, "zero-points");
    if (!source)
      return source.error();
    if (!source->isSplat() && !source->constant)
      return makeError("the zero-points are subtracted as wide integers that "
                       "are neither constants nor extended codes");
    if (Status s = narrowZeroPoints(*source, chain); !s)
      return s;
    return setZeroPoints(*source, ZeroPointKind::Integer, chain);
  }

  /// Rewrites wide constant zero-points as code-width integers.
  Status narrowZeroPoints(QParamSource &source, const DequantChain &chain) {
    CodeSpec code{chain.bits, chain.isSigned, false};
    std::pair<int64_t, int64_t> bounds = codeBounds(code);
    int64_t lo = bounds.first, hi = bounds.second;
    MLIRContext *context = chain.floatType.getContext();
    auto narrowType = IntegerType::get(context, chain.bits);
    auto narrow = [&](const APInt &value) -> Expected<APInt> {
      int64_t v = value.getSExtValue();
      if (v < lo || v > hi)
        return makeError("zero-point ", v, " is outside the code range [", lo,
                         ", ", hi, "]");
      return APInt(chain.bits, static_cast<uint64_t>(v), chain.isSigned);
    };
    if (source.isSplat()) {
      auto attr = dyn_cast<IntegerAttr>(source.splat);
      if (!attr)
        return makeError("the zero-points are not integers");
      auto value = narrow(attr.getValue());
      if (!value)
        return value.error();
      source.splat = IntegerAttr::get(narrowType, *value);
      return Status::ok();
    }
    SmallVector<APInt> values;
    for (const APInt &value : source.constant.getValues<APInt>()) {
      auto converted = narrow(value);
      if (!converted)
        return converted.error();
      values.push_back(*converted);
    }
    source.constant = DenseElementsAttr::get(
        source.constant.getType().clone(narrowType), values);
    return Status::ok();
  }

  /// Float zero-points that are codes converted before their broadcast, or
  /// constants that are all exact codes, are integer zero-points: the same
  /// x = s * (q - z), stored as codes.
  Status setFloatZeroPoints(QParamSource source, DequantChain &chain) {
    if (source.value && isIntToFloat(source.value)) {
      auto ints = matchConverted(source.value, "zero-points");
      if (ints && ints->bits == chain.bits &&
          ints->isSigned == chain.isSigned) {
        source.value = ints->ints;
        return setZeroPoints(source, ZeroPointKind::Integer, chain);
      }
    }
    if (source.isSplat() || source.constant) {
      QParamSource codes = source;
      if (succeeded(floatsToCodes(codes, chain)))
        return setZeroPoints(codes, ZeroPointKind::Integer, chain);
    }
    return setZeroPoints(source, ZeroPointKind::Float, chain);
  }

  /// Rewrites float constants as code-width integers when every value is an
  /// exact code.
  LogicalResult floatsToCodes(QParamSource &source, const DequantChain &chain) {
    CodeSpec code{chain.bits, chain.isSigned, false};
    std::pair<int64_t, int64_t> bounds = codeBounds(code);
    auto narrowType =
        IntegerType::get(chain.floatType.getContext(), chain.bits);
    auto toCode = [&](const APFloat &value) -> std::optional<APInt> {
      if (!value.isInteger())
        return std::nullopt;
      double v = value.convertToDouble();
      if (v < static_cast<double>(bounds.first) ||
          v > static_cast<double>(bounds.second))
        return std::nullopt;
      return APInt(chain.bits, static_cast<uint64_t>(static_cast<int64_t>(v)),
                   chain.isSigned);
    };
    if (source.isSplat()) {
      auto attr = dyn_cast<FloatAttr>(source.splat);
      std::optional<APInt> value;
      if (!attr || !(value = toCode(attr.getValue())))
        return failure();
      source.splat = IntegerAttr::get(narrowType, *value);
      return success();
    }
    if (!isa<FloatType>(source.constant.getElementType()))
      return failure();
    SmallVector<APInt> values;
    for (const APFloat &value : source.constant.getValues<APFloat>()) {
      std::optional<APInt> converted = toCode(value);
      if (!converted)
        return failure();
      values.push_back(*converted);
    }
    source.constant = DenseElementsAttr::get(
        source.constant.getType().clone(narrowType), values);
    return success();
  }

  Status setCodes(const ConvertedInts &ints, DequantChain &chain) {
    auto codes = resolveCodes(ints.ints);
    if (!codes)
      return codes.error();
    chain.codes = *codes;
    chain.bits = ints.bits;
    chain.isSigned = ints.isSigned;
    if (!chain.bits)
      return makeError("the codes are not integers");
    return Status::ok();
  }

  Status setZeroPoints(Value value, ZeroPointKind kind, DequantChain &chain) {
    auto source = resolveQParam(value, "zero-points");
    if (!source)
      return source.error();
    return setZeroPoints(*source, kind, chain);
  }

  Status setZeroPoints(const QParamSource &source, ZeroPointKind kind,
                       DequantChain &chain) {
    // Subtracting a constant zero is no zero-point at all.
    if (auto floatSplat = dyn_cast_or_null<FloatAttr>(source.splat);
        floatSplat && floatSplat.getValue().isZero())
      return Status::ok();
    if (auto intSplat = dyn_cast_or_null<IntegerAttr>(source.splat);
        intSplat && intSplat.getValue().isZero())
      return Status::ok();
    chain.zeroPoints = source;
    chain.zeroPointKind = kind;
    return Status::ok();
  }

  static std::string describeInts(const ConvertedInts &ints) {
    return std::string(ints.isSigned ? "signed" : "unsigned") + " i" +
           std::to_string(ints.bits);
  }

  /// The codes: a tensor in the tensor form, a generic input read with the
  /// identity map in the generic form.
  Expected<Value> resolveCodes(Value value) {
    if (!generic)
      return value;
    OpOperand *input = genericInput(value);
    if (!input)
      return makeError("the codes are not an input of the linalg.generic");
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!map.isIdentity())
      return makeError("the linalg.generic reads the codes through ",
                       debugString(map),
                       "; the import needs them indexed like its result");
    return input->get();
  }

  /// A scale or zero-point operand of the chain.
  Expected<QParamSource> resolveQParam(Value value, StringRef what) {
    if (!generic)
      return traceQParam(value, SmallVector<DimAccess>(resultDims), what);
    Attribute constant;
    if (matchPattern(value, m_Constant(&constant)) &&
        isa<FloatAttr, IntegerAttr>(constant)) {
      QParamSource source;
      source.splat = cast<TypedAttr>(constant);
      return source;
    }
    OpOperand *input = genericInput(value);
    if (!input)
      return makeError("the ", what.str(),
                       " are neither constants nor inputs of the "
                       "linalg.generic");
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || !type.hasStaticShape())
      return makeError("the ", what.str(), " have the dynamic type ",
                       debugString(input->get().getType()));
    auto dims =
        accessThroughMap(generic.getMatchingIndexingMap(input), resultDims,
                         type.getShape(), "the " + what.str());
    if (!dims)
      return dims.error();
    return traceQParam(input->get(), std::move(*dims), what);
  }

  /// The generic input a body argument stands for, or null.
  OpOperand *genericInput(Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &generic.getRegion().front() ||
        arg.getArgNumber() >= generic.getNumDpsInputs())
      return nullptr;
    return generic.getDpsInputOperand(arg.getArgNumber());
  }

  linalg::GenericOp generic;
  ArrayRef<DimAccess> resultDims;
};
} // namespace

bool import::convertsInts(Value value) {
  if (isIntToFloat(value))
    return true;
  auto sub = value.getDefiningOp<arith::SubFOp>();
  return sub && isIntToFloat(sub.getLhs());
}

Expected<DequantChain>
import::matchDequantChain(arith::MulFOp mul, linalg::GenericOp generic,
                          ArrayRef<DimAccess> resultDims) {
  return ChainMatcher(generic, resultDims).match(mul);
}
