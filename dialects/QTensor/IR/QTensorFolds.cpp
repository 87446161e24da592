//===- QTensorFolds.cpp - Folders of qtensor operations -------------------===//
//
// Folds that are exact by construction: assemble and disassemble are inverse
// and code-preserving; a repack to the same layout is the identity; two
// transposes cancel. quantize(dequantize(q)) folds only where the types (or
// constant scales) prove the round trip exact; dequantize(quantize(x)) never
// folds, since it is x plus the quantization error.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::qt;

/// assemble(disassemble(%q)) -> %q
OpFoldResult AssembleOp::fold(FoldAdaptor) {
  auto source = getCodes().getDefiningOp<DisassembleOp>();
  // All three operands must be the matching results of one disassemble
  // (codes and zero-points can have the same type).
  if (!source || getCodes() != source.getCodes() ||
      getScales() != source.getScales() ||
      getZeroPoints() != source.getZeroPoints() ||
      source.getInput().getType() != getType())
    return {};
  return source.getInput();
}

/// disassemble(assemble(%c, %s, %z)) -> %c, %s, %z
LogicalResult DisassembleOp::fold(FoldAdaptor,
                                  SmallVectorImpl<OpFoldResult> &results) {
  auto source = getInput().getDefiningOp<AssembleOp>();
  if (!source)
    return failure();
  results.push_back(source.getCodes());
  results.push_back(source.getScales());
  if (Value zeros = source.getZeroPoints())
    results.push_back(zeros);
  return success();
}

/// repack(%q) to its own type -> %q; repack(repack(%q)) -> one repack.
OpFoldResult RepackOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<RepackOp>()) {
    if (inner.getInput().getType() == getType())
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

/// transpose(transpose(%w)) -> %w
OpFoldResult TransposeOp::fold(FoldAdaptor) {
  auto inner = getInput().getDefiningOp<TransposeOp>();
  if (inner && inner.getInput().getType() == getType())
    return inner.getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// quantize(dequantize(%q), <qparams of %q>) -> %q
//===----------------------------------------------------------------------===//

namespace {
/// Whether `scales` and `zeroPoints` are the qparams `q` holds: results of
/// one disassemble of `q`, or the operands `q` was assembled from. A repack
/// keeps every qparam, so the repacks above `q` stand for `q`.
bool areQParamsOf(Value q, Value scales, Value zeroPoints) {
  SmallVector<Value> sameQParams = {q};
  while (auto repack = sameQParams.back().getDefiningOp<RepackOp>())
    sameQParams.push_back(repack.getInput());
  if (auto split = scales.getDefiningOp<DisassembleOp>())
    if (split.getScales() == scales && split.getZeroPoints() == zeroPoints &&
        llvm::is_contained(sameQParams, split.getInput()))
      return true;
  auto built = sameQParams.back().getDefiningOp<AssembleOp>();
  return built && built.getScales() == scales &&
         built.getZeroPoints() == zeroPoints;
}

/// Exponent of the smallest subnormal of `sem` (f16: -24, f32: -149).
int smallestSubnormalExponent(const llvm::fltSemantics &sem) {
  return llvm::APFloat::semanticsMinExponent(sem) -
         static_cast<int>(llvm::APFloat::semanticsPrecision(sem)) + 1;
}

/// Whether quantize(dequantize(q)) == q for every q of `type`, given q's own
/// scales (`scales`: their constant value, or null). The argument, for the
/// integer n = q - z and a scale s in the scale type S (positive and finite:
/// QuantizeOp's contract, checked where the scales are constant):
///
/// - dequantize gives x = s*n*(1 + d1) with |d1| <= u = 2^-p, p being the
///   precision of the element type E (f16 11, bf16 8, f32 24), provided s*n
///   neither overflows E nor is subnormal in E;
/// - quantize forms x/s with at most one more rounding, in E or wider:
///   n*(1 + d1)*(1 + d2), which is within |n|*(2u + u^2) of n; round to
///   nearest returns n when that is below 1/2, which |n| < 2^(p-2) ensures.
///   |n| is at most qmax - qmin (integer zero-point) or max(-qmin, qmax)
///   (none): 255 for 8-bit codes, below f16's 512 and f32's 2^22 but not
///   bf16's 64. A real bf16 counterexample: s = 1 + 2^-7, n = 255:
///   s*n = 256.99 rounds to 256 in bf16, 256/s = 254.02 rounds to 254;
/// - a subnormal s*n is exact when every value of S is a multiple of E's
///   smallest subnormal (S = E; f16 scales under bf16 or f32 elements), and
///   s*n cannot overflow when largest(S)*|n| <= largest(E) (only f16 scales
///   under bf16 or f32). Otherwise (e.g. f16 scales of f16 elements: s =
///   4096, n = 16 overflows) constant scales are checked value by value.
///
/// Never exact: toward_zero rounding (n - eps truncates to n - 1), and real
/// zero-points (`float`, `min`), whose offset z or m/s is unbounded next to n.
bool isExactRoundTrip(QuantizedTensorType type, Attribute scales) {
  auto affine = dyn_cast<AffineDescriptorAttr>(type.getDescriptor());
  // A codebook's quantize picks the nearest table entry, not a rounding of
  // x / s: the bound below does not describe it.
  if (!affine || affine.getDecoderVersion() != 1 ||
      affine.getRounding() == RoundingMode::TowardZero ||
      affine.getCodebook() != Codebook::None)
    return false;
  ZeroPointKind zeroPoint = affine.getZeroPoint();
  if (zeroPoint != ZeroPointKind::None && zeroPoint != ZeroPointKind::Integer)
    return false;
  auto [lo, hi] = affine.getCodeBounds();
  int64_t maxOffset = zeroPoint == ZeroPointKind::Integer
                          ? hi - lo
                          : std::max<int64_t>(-lo, hi);

  const llvm::fltSemantics &element = type.getElementType().getFloatSemantics();
  const llvm::fltSemantics &scale = affine.getScale().getFloatSemantics();
  unsigned precision = llvm::APFloat::semanticsPrecision(element);
  if (maxOffset >= (int64_t{1} << (precision - 2)))
    return false;

  bool subnormalsExact =
      smallestSubnormalExponent(scale) >= smallestSubnormalExponent(element);
  double largest = llvm::APFloat::getLargest(element).convertToDouble();
  if (subnormalsExact &&
      llvm::APFloat::getLargest(scale).convertToDouble() * maxOffset <= largest)
    return true;

  // Value by value; each product is exact in double (<= 24 + 8 bits).
  auto constant = dyn_cast_if_present<DenseFPElementsAttr>(scales);
  if (!constant)
    return false;
  double smallestNormal =
      llvm::APFloat::getSmallestNormalized(element).convertToDouble();
  return llvm::all_of(constant.getValues<APFloat>(), [&](const APFloat &v) {
    double s = v.convertToDouble();
    return std::isfinite(s) && s > 0 && s * maxOffset <= largest &&
           (subnormalsExact || s >= smallestNormal);
  });
}
} // namespace

OpFoldResult QuantizeOp::fold(FoldAdaptor adaptor) {
  auto dequantize = getInput().getDefiningOp<DequantizeOp>();
  if (!dequantize)
    return {};
  Value q = dequantize.getInput();
  // Same descriptor and layout; own qparams; provably exact.
  if (q.getType() != getType() ||
      !areQParamsOf(q, getScales(), getZeroPoints()) ||
      !isExactRoundTrip(getType(), adaptor.getScales()))
    return {};
  return q;
}
