//===- FuseLinear.cpp - Fuse dequantize + matmul into qtensor.linear ------===//
//
// A contraction C = init + A * B whose B is a dequantized weight (seen through
// ops that only move data) becomes qtensor.linear(A, W): the kernel reads the
// codes, and the full-precision weight never exists. The match is on linalg's
// contraction structure (indexing maps, iterator types, body), not op names,
// so linalg.matmul with or without transposed maps, linalg.batch_matmul over a
// broadcast weight and the equivalent linalg.generic all take the same path.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Transforms/Passes.h"

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::qt {
#define GEN_PASS_DEF_QTENSORFUSELINEARPASS
#include "qtensor/Transforms/Passes.h.inc"
} // namespace mlir::qt

using namespace mlir;
using namespace mlir::qt;

namespace {

//===----------------------------------------------------------------------===//
// Seeing through data movement
//===----------------------------------------------------------------------===//

/// The input of `op` if `op` only moves data: out[i] = in[map(i)] with an
/// identity output map, a projected-permutation input map and a body that
/// yields its input (linalg.transpose, linalg.broadcast, linalg.copy, or a
/// linalg.generic doing the same); null otherwise.
OpOperand *getMovedInput(Operation *op) {
  auto mover = dyn_cast_if_present<linalg::LinalgOp>(op);
  if (!mover || !mover.hasPureTensorSemantics() ||
      mover.getNumDpsInputs() != 1 || mover.getNumDpsInits() != 1 ||
      mover.getNumLoops() != mover.getNumParallelLoops())
    return nullptr;
  OpOperand *input = mover.getDpsInputOperand(0);
  if (!isa<RankedTensorType>(input->get().getType()) ||
      !mover.getMatchingIndexingMap(mover.getDpsInitOperand(0)).isIdentity() ||
      !mover.getMatchingIndexingMap(input).isProjectedPermutation())
    return nullptr;
  Block *body = mover.getBlock();
  Operation *terminator = body->getTerminator();
  if (&body->front() != terminator || terminator->getNumOperands() != 1 ||
      terminator->getOperand(0) != body->getArgument(0))
    return nullptr;
  return input;
}

/// A tensor before any data movement, and the map from the contraction's
/// loops to its indices.
struct Traced {
  Value source;
  AffineMap map;
};

/// Follows `value`, indexed by `map` in the contraction, up through ops that
/// only move data: element map(d) of `value` is element result.map(d) of
/// result.source.
Traced traceDataMovement(Value value, AffineMap map) {
  while (OpOperand *input = getMovedInput(value.getDefiningOp())) {
    auto mover = cast<linalg::LinalgOp>(input->getOwner());
    map = mover.getMatchingIndexingMap(input).compose(map);
    value = input->get();
  }
  return {value, map};
}

/// Whether `value` is all zeros: a zero linalg.fill (named or generic) or a
/// zero splat constant. What a fill writes into does not matter.
bool isZeroTensor(Value value) {
  if (matchPattern(value, m_AnyZeroFloat()))
    return true;
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.value(), m_AnyZeroFloat());
  if (auto generic = value.getDefiningOp<linalg::GenericOp>())
    if (std::optional<Value> scalar = linalg::isaFillOpInterface(generic))
      return matchPattern(*scalar, m_AnyZeroFloat());
  return false;
}

/// `operand`, or the input of the arith.extf that widens it to `accumulator`.
Value stripWidening(Value operand, Type accumulator) {
  if (operand.getType() != accumulator)
    return {};
  if (auto extf = operand.getDefiningOp<arith::ExtFOp>())
    return extf.getIn();
  return operand;
}

/// Whether the body is exactly `out + widen(a) * widen(b)` (either operand
/// order: IEEE addition and multiplication commute) in the accumulator type.
/// linalg's contraction matcher lets any unary op sit between the block
/// arguments and the multiply; qtensor.linear only admits widening.
bool isMultiplyAddBody(linalg::LinalgOp op, Type accumulator) {
  Block *body = op.getBlock();
  BlockArgument a = body->getArgument(0), b = body->getArgument(1),
                out = body->getArgument(2);
  Operation *terminator = body->getTerminator();
  if (terminator->getNumOperands() != 1)
    return false;
  auto add = terminator->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add.getType() != accumulator)
    return false;
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getBlock() != body)
    return false;
  Value lhs = stripWidening(mul.getLhs(), accumulator);
  Value rhs = stripWidening(mul.getRhs(), accumulator);
  return (lhs == a && rhs == b) || (lhs == b && rhs == a);
}

/// The lone reduction loop, or nullopt.
std::optional<unsigned> getReductionLoop(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() != 1)
    return std::nullopt;
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if (type == utils::IteratorType::reduction)
      return i;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The fusion pattern
//===----------------------------------------------------------------------===//

/// init + A * dequantize(W) -> qtensor.linear(A, W) [+ init]. Failures on a
/// matmul fed by a dequantize carry a reason (the pass turns them into
/// remarks); anything else fails silently.
struct FuseDequantizedMatmul
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    // Candidates: contractions (linalg's own matcher: two inputs, one init,
    // projected-permutation maps, an m/n/k split and a multiply-add pair in
    // the body) on tensors with a dequantized operand.
    if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
        !linalg::isaContractionOpInterface(op))
      return failure();
    OpOperand *lhs = op.getDpsInputOperand(0);
    OpOperand *rhs = op.getDpsInputOperand(1);
    OpOperand *init = op.getDpsInitOperand(0);
    Traced weight =
        traceDataMovement(rhs->get(), op.getMatchingIndexingMap(rhs));
    auto dequantize = weight.source.getDefiningOp<DequantizeOp>();
    if (!dequantize) {
      if (traceDataMovement(lhs->get(), op.getMatchingIndexingMap(lhs))
              .source.getDefiningOp<DequantizeOp>())
        return rewriter.notifyMatchFailure(
            op, "the dequantized tensor is the left operand; qtensor.linear "
                "computes X * W^T with the weight on the right");
      return failure();
    }

    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Type accumulator = resultType.getElementType();
    if (!isMultiplyAddBody(op, accumulator))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "the body is not out + a * b in the accumulator type "
             << accumulator << " (inputs may only be widened by arith.extf)";
      });

    // Loops: A is [L..., K], C is [L..., N], the weight is [N, K] or [K, N];
    // L covers every batch and row loop, K is the only reduction.
    std::optional<unsigned> k = getReductionLoop(op);
    if (!k)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "has " << op.getNumReductionLoops()
             << " reduction loops; qtensor.linear reduces over one (K)";
      });
    AffineMap lhsMap = op.getMatchingIndexingMap(lhs);
    AffineMap initMap = op.getMatchingIndexingMap(init);
    AffineExpr kExpr = rewriter.getAffineDimExpr(*k);
    if (lhsMap.getNumResults() == 0 || lhsMap.getResults().back() != kExpr)
      return rewriter.notifyMatchFailure(
          op, "the left operand does not have the reduction (K) innermost");
    ArrayRef<AffineExpr> rows = lhsMap.getResults().drop_back();
    if (initMap.getNumResults() != rows.size() + 1 ||
        initMap.getResults().drop_back() != rows ||
        op.getNumLoops() != rows.size() + 2)
      return rewriter.notifyMatchFailure(
          op, "the result is not indexed [leading dims of the left operand, "
              "N]");
    AffineExpr nExpr = initMap.getResults().back();
    bool transposed;
    if (weight.map.getResults() == ArrayRef<AffineExpr>{nExpr, kExpr})
      transposed = false;
    else if (weight.map.getResults() == ArrayRef<AffineExpr>{kExpr, nExpr})
      transposed = true;
    else
      return rewriter.notifyMatchFailure(
          op, "the dequantized weight is not indexed [N, K] or [K, N] (a "
              "weight that differs per batch is not a qtensor.linear)");

    // The weight in [N, K]; a [K, N] weight goes through qtensor.transpose.
    QuantizedTensorType weightType = dequantize.getInput().getType();
    if (transposed) {
      std::string reason;
      llvm::raw_string_ostream os(reason);
      FailureOr<QuantizedTensorType> type =
          TransposeOp::inferResultType(weightType, os);
      if (failed(type))
        return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
          diag << "the [K, N] weight has no [N, K] view: " << reason;
        });
      weightType = *type;
    }

    // Init: zeros add nothing; a broadcast [N] vector is the bias; anything
    // else is added to the linear's result.
    Value initValue = init->get();
    Value bias;
    bool addInit = false;
    if (!isZeroTensor(initValue)) {
      Traced traced = traceDataMovement(initValue, initMap);
      auto vectorType = dyn_cast<RankedTensorType>(traced.source.getType());
      if (vectorType && vectorType.getRank() == 1 &&
          traced.map.getResults() == ArrayRef<AffineExpr>{nExpr})
        bias = traced.source;
      else
        addInit = true;
    }

    auto inputType = cast<RankedTensorType>(lhs->get().getType());
    auto biasType =
        bias ? cast<RankedTensorType>(bias.getType()) : RankedTensorType();
    std::string reason;
    llvm::raw_string_ostream os(reason);
    if (failed(LinearOp::checkTypes(inputType, weightType, biasType, resultType,
                                    accumulator, os)))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "qtensor.linear would not verify: " << reason;
      });

    Location loc = op.getLoc();
    Value weightValue = dequantize.getInput();
    if (transposed)
      weightValue = TransposeOp::create(rewriter, loc, weightType, weightValue);
    Value result =
        LinearOp::create(rewriter, loc, resultType, lhs->get(), weightValue,
                         bias, TypeAttr::get(accumulator));
    if (addInit)
      result = arith::AddFOp::create(rewriter, loc, result, initValue);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Turns match-failure reasons into remarks (when asked) and remembers the
/// producers of each fused op, which the fusion may have left dead.
struct FusionListener : public RewriterBase::Listener {
  explicit FusionListener(bool remarks) : remarks(remarks) {}

  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    if (!remarks)
      return;
    InFlightDiagnostic remark = emitRemark(loc);
    remark << "not fused into qtensor.linear: ";
    reasonCallback(*remark.getUnderlyingDiagnostic());
  }

  void notifyOperationReplaced(Operation *op, ValueRange) override {
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        maybeDead.insert(producer);
  }

  /// Erases the producers, and theirs, that no longer have a use: the
  /// dequantize, the transposes and broadcasts, the zero fill.
  void eraseDeadProducers() {
    while (!maybeDead.empty()) {
      Operation *op = maybeDead.pop_back_val();
      if (!isOpTriviallyDead(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          maybeDead.insert(producer);
      op->erase();
    }
  }

  bool remarks;
  llvm::SetVector<Operation *> maybeDead;
};

struct FuseLinearPass
    : public mlir::qt::impl::QTensorFuseLinearPassBase<FuseLinearPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    set.add<FuseDequantizedMatmul>(context);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    // One visit per op: each candidate gets at most one remark, and nothing
    // but the matmuls and what they leave dead is touched (no folding).
    FusionListener listener(remarks);
    walkAndApplyPatterns(getOperation(), patterns, &listener);
    listener.eraseDeadProducers();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
