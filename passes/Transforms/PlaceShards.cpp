//===- PlaceShards.cpp - Tensor-parallel placement of quantized linears ---===//
//
// qtensor-place-shards (seed M8.9 0x06B). The IR keeps global shapes; each
// quantized linear gets a `qtensor.placement` saying which slice of its
// weight (and which qparams) each of `tp` ranks holds. A row-parallel
// linear's result is then each rank's partial sum, so it is followed by a
// `shard.all_reduce` on a module-level `shard.grid`, and its bias moves
// after the reduction so that it is added once.
//
// Placement is a property of a stored weight, not of one use: linears that
// read the same weight (tied weights) share one placement. A column-parallel
// linear whose output reaches a row-parallel linear through elementwise ops
// takes that linear's K bounds as its N bounds, so every rank's activation
// slice is the one its row slice reads.
//
//===----------------------------------------------------------------------===//

#include "PlaceShards.h"

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"
#include "qtensor/Dialect/QTensor/IR/QTensorPlacement.h"
#include "qtensor/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::qt {
#define GEN_PASS_DEF_QTENSORPLACESHARDSPASS
#include "qtensor/Transforms/Passes.h.inc"
} // namespace mlir::qt

using namespace mlir;
using namespace mlir::qt;
using namespace mlir::qt::place_shards;

namespace {

/// The stored weight a linear reads: follows code-preserving views
/// (`qtensor.repack`, `qtensor.transpose`) back to `qtensor.weight`. Empty
/// for a weight that is not named (a block argument, an assemble).
StringRef findWeightName(Value weight) {
  while (Operation *def = weight.getDefiningOp()) {
    if (auto named = dyn_cast<WeightOp>(def))
      return named.getName();
    if (!isa<QTensorDialect>(def->getDialect()) || def->getNumOperands() != 1 ||
        def->getNumResults() != 1 ||
        !isa<QuantizedTensorType>(def->getOperand(0).getType()))
      break;
    weight = def->getOperand(0);
  }
  return {};
}

/// Linears whose result reaches `input` through elementwise ops only.
SmallVector<LinearOp> findProducingLinears(Value input) {
  SmallVector<LinearOp> producers;
  int64_t width = cast<RankedTensorType>(input.getType()).getShape().back();
  SmallVector<Value> worklist{input};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    Operation *def = value.getDefiningOp();
    if (!def)
      continue;
    if (auto linear = dyn_cast<LinearOp>(def)) {
      producers.push_back(linear);
      continue;
    }
    if (!def->hasTrait<OpTrait::Elementwise>())
      continue;
    for (Value operand : def->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (type && type.getRank() > 0 && type.getShape().back() == width)
        worklist.push_back(operand);
    }
  }
  return producers;
}

std::string formatList(ArrayRef<int64_t> values) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os);
  os << "]";
  return s;
}

/// One stored weight and the linears that read it.
struct WeightPlan {
  std::string name; // empty when unnamed
  QuantizedTensorType type;
  StrategyChoice choice;
  SmallVector<LinearOp> users;
  SmallVector<int64_t> bounds;
  /// The row-parallel linear whose K bounds a column slice follows.
  LinearOp boundsFrom;

  StringRef displayName() const {
    return name.empty() ? StringRef("<unnamed>") : StringRef(name);
  }
  int64_t dim() const {
    switch (choice.strategy) {
    case ShardStrategy::Column:
      return 0;
    case ShardStrategy::Row:
      return 1;
    case ShardStrategy::Replicated:
      return -1;
    }
    return -1;
  }
};

struct PlaceShardsPass
    : public qt::impl::QTensorPlaceShardsPassBase<PlaceShardsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult parseOptions();
  LogicalResult collectPlans(ArrayRef<LinearOp> linears);
  LogicalResult chooseAllBounds();
  LogicalResult followRowConsumers();
  LogicalResult attachPlacements();
  void insertCollectives();
  void reduceRowLinear(RewriterBase &rewriter, LinearOp linear, StringRef grid);

  GroupPolicy policy = GroupPolicy::Error;
  SmallVector<StrategyRule> rules;
  SmallVector<WeightPlan> plans;
  DenseMap<Operation *, unsigned> planOfLinear;
};

LogicalResult PlaceShardsPass::parseOptions() {
  // Reported at the module's location without printing the whole module.
  auto emitError = [&] {
    return mlir::emitError(getOperation().getLoc()) << "qtensor-place-shards: ";
  };
  bool ok = true;
  if (tp < 1 || tp > kMaxRanks) {
    emitError() << "tp must be between 1 and " << kMaxRanks << ", got "
                << static_cast<int64_t>(tp);
    ok = false;
  }
  policy = groupPolicy; // an enum option: checked by the option parser
  FailureOr<SmallVector<StrategyRule>> parsedRules =
      parseStrategyRules(strategies, emitError);
  if (failed(parsedRules))
    ok = false;
  else
    rules = std::move(*parsedRules);
  return success(ok);
}

LogicalResult PlaceShardsPass::collectPlans(ArrayRef<LinearOp> linears) {
  llvm::StringMap<unsigned> byName;
  DenseMap<Value, unsigned> byValue;
  bool ok = true;
  for (LinearOp linear : linears) {
    QuantizedTensorType type = linear.getWeight().getType();
    StringRef name = findWeightName(linear.getWeight());
    unsigned *existing = nullptr;
    if (!name.empty()) {
      auto it = byName.find(name);
      existing = it == byName.end() ? nullptr : &it->second;
    } else {
      auto it = byValue.find(linear.getWeight());
      existing = it == byValue.end() ? nullptr : &it->second;
    }
    if (existing) {
      WeightPlan &plan = plans[*existing];
      if (plan.type != type) {
        InFlightDiagnostic diag =
            linear.emitOpError()
            << "reads weight \"" << name << "\" as " << type
            << ", but another linear reads it as " << plan.type
            << "; tied users of a weight need one type to share one "
               "placement";
        diag.attachNote(plan.users.front().getLoc()) << "the other reader";
        ok = false;
        continue;
      }
      plan.users.push_back(linear);
      planOfLinear[linear] = *existing;
      continue;
    }

    WeightPlan plan;
    plan.name = name.str();
    plan.type = type;
    plan.choice = chooseStrategy(name, rules);
    if (plan.choice.strategy != ShardStrategy::Replicated &&
        type.getRank() != 2) {
      // A batched weight [B, N, K] has no single N or K to slice.
      linear.emitWarning() << "weight \"" << plan.displayName()
                           << "\" has rank " << type.getRank() << ", so "
                           << plan.choice.reason << " cannot make it "
                           << stringifyShardStrategy(plan.choice.strategy)
                           << "-parallel; every rank holds all of it";
      plan.choice = {ShardStrategy::Replicated,
                     "a batched weight (rank " +
                         std::to_string(type.getRank()) + ")"};
    }
    plan.users.push_back(linear);
    unsigned index = plans.size();
    if (!name.empty())
      byName[name] = index;
    else
      byValue[linear.getWeight()] = index;
    planOfLinear[linear] = index;
    plans.push_back(std::move(plan));
  }
  return success(ok);
}

/// Row slices first: a column slice may have to follow one.
LogicalResult PlaceShardsPass::chooseAllBounds() {
  bool ok = true;
  for (WeightPlan &plan : plans) {
    if (plan.choice.strategy != ShardStrategy::Row)
      continue;
    auto emitError = [&] { return plan.users.front().emitOpError(); };
    FailureOr<QParamAxis> qaxis = getQParamAxis(plan.type, emitError);
    if (failed(qaxis)) {
      ok = false;
      continue;
    }
    // Nested qparams own their second level per super-group: a K slice
    // holds whole super-groups, so the unit along K is the super-group.
    int64_t unit = qaxis->axis == 1 ? qaxis->groupSize : 1;
    auto affine = dyn_cast<AffineDescriptorAttr>(plan.type.getDescriptor());
    if (qaxis->axis == 1 && affine && affine.getNested())
      unit = affine.getNested().getSuperGroupSize();
    SliceRequest request{plan.displayName(),
                         ShardStrategy::Row,
                         plan.type.getShape()[1],
                         unit,
                         tp,
                         policy};
    FailureOr<SmallVector<int64_t>> bounds = chooseBounds(request, emitError);
    if (failed(bounds)) {
      ok = false;
      continue;
    }
    plan.bounds = std::move(*bounds);
  }
  if (!ok || failed(followRowConsumers()))
    return failure();

  for (WeightPlan &plan : plans) {
    if (plan.choice.strategy == ShardStrategy::Replicated) {
      plan.bounds.assign(tp + 1, getPlacedExtent(plan.type, -1));
      plan.bounds.front() = 0;
      continue;
    }
    if (plan.choice.strategy != ShardStrategy::Column || plan.boundsFrom)
      continue;
    auto emitError = [&] { return plan.users.front().emitOpError(); };
    // Groups run along K, so an N slice never cuts one.
    SliceRequest request{plan.displayName(),
                         ShardStrategy::Column,
                         plan.type.getShape()[0],
                         1,
                         tp,
                         policy};
    FailureOr<SmallVector<int64_t>> bounds = chooseBounds(request, emitError);
    if (failed(bounds)) {
      ok = false;
      continue;
    }
    plan.bounds = std::move(*bounds);
  }
  return success(ok);
}

LogicalResult PlaceShardsPass::followRowConsumers() {
  bool ok = true;
  for (WeightPlan &row : plans) {
    if (row.choice.strategy != ShardStrategy::Row || row.bounds.empty())
      continue;
    for (LinearOp consumer : row.users) {
      for (LinearOp producer : findProducingLinears(consumer.getInput())) {
        WeightPlan &column = plans[planOfLinear.lookup(producer)];
        if (column.choice.strategy != ShardStrategy::Column)
          continue;
        if (!column.boundsFrom) {
          column.bounds = row.bounds;
          column.boundsFrom = consumer;
          continue;
        }
        if (column.bounds == row.bounds)
          continue;
        InFlightDiagnostic diag =
            producer.emitOpError()
            << "column-parallel weight \"" << column.displayName()
            << "\" feeds row-parallel linears that slice K differently: "
            << formatList(column.bounds) << " and " << formatList(row.bounds)
            << "; its output slices cannot match both";
        diag.attachNote(column.boundsFrom.getLoc())
            << "slices K as " << formatList(column.bounds);
        diag.attachNote(consumer.getLoc())
            << "slices K as " << formatList(row.bounds);
        ok = false;
      }
    }
  }
  return success(ok);
}

LogicalResult PlaceShardsPass::attachPlacements() {
  MLIRContext *context = &getContext();
  auto *dialect = context->getLoadedDialect<QTensorDialect>();
  bool ok = true;
  for (WeightPlan &plan : plans) {
    int64_t dim = plan.dim();
    auto emitError = [&] {
      return plan.users.front().emitOpError()
             << "cannot place weight \"" << plan.displayName() << "\": ";
    };
    FailureOr<SmallVector<int64_t>> qparams =
        computePlacementQParams(plan.type, dim, plan.bounds, policy, emitError);
    if (failed(qparams)) {
      ok = false;
      continue;
    }
    auto placement =
        PlacementAttr::get(context, plan.choice.strategy, tp, dim,
                           DenseI64ArrayAttr::get(context, plan.bounds), policy,
                           DenseI64ArrayAttr::get(context, *qparams));
    bool regroups = placementRegroups(placement, plan.type);
    for (LinearOp user : plan.users) {
      dialect->getPlacementAttrHelper().setAttr(user, placement);
      if (!regroups)
        continue;
      dialect->getReverifyAttrHelper().setAttr(user, UnitAttr::get(context));
      auto affine = cast<AffineDescriptorAttr>(plan.type.getDescriptor());
      int64_t g = affine.getGroupSize();
      auto cut = llvm::find_if(ArrayRef<int64_t>(plan.bounds).drop_front(),
                               [&](int64_t b) { return b % g != 0; });
      user.emitWarning() << "weight \"" << plan.displayName()
                         << "\" is re-grouped per rank (group-policy=repack): "
                         << "rank " << cut - plan.bounds.begin()
                         << " starts at K = " << *cut << ", inside group "
                         << *cut / g << " of G = " << g
                         << ", so each rank's groups and qparams are rebuilt "
                            "from its own offset; reconstruction changes and "
                            "the op is marked 'qtensor.reverify' for parity "
                            "re-validation";
    }
  }
  return success(ok);
}

/// Sums the row-parallel partial results on every rank, then adds the bias
/// once (kept on the linear, every rank would add it: tp times in all).
void PlaceShardsPass::reduceRowLinear(RewriterBase &rewriter, LinearOp linear,
                                      StringRef grid) {
  Location loc = linear.getLoc();
  Value partial = linear.getResult();
  auto type = cast<RankedTensorType>(partial.getType());
  rewriter.setInsertionPointAfter(linear);
  // The reduction runs in the output type, as the kernels write partials.
  auto reduce = shard::AllReduceOp::create(rewriter, loc, type, grid,
                                           ArrayRef<int16_t>{0}, partial,
                                           shard::ReductionKind::Sum);
  Value result = reduce.getResult();
  if (Value bias = linear.getBias()) {
    rewriter.modifyOpInPlace(linear, [&] {
      linear.getBiasMutable().clear();
      linear->getContext()
          ->getLoadedDialect<QTensorDialect>()
          ->getBiasAfterReduceAttrHelper()
          .setAttr(linear, rewriter.getUnitAttr());
    });
    Value broadcast = bias;
    if (type.getRank() > 1) {
      Value init = tensor::EmptyOp::create(
          rewriter, loc, tensor::getMixedSizes(rewriter, loc, result),
          type.getElementType());
      SmallVector<int64_t> added =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank() - 1));
      broadcast = linalg::BroadcastOp::create(rewriter, loc, bias, init, added)
                      .getResult()[0];
    }
    result = arith::AddFOp::create(rewriter, loc, result, broadcast);
  }
  rewriter.replaceAllUsesExcept(partial, result, reduce);
}

void PlaceShardsPass::insertCollectives() {
  ModuleOp module = getOperation();
  OpBuilder detached(&getContext());
  auto grid = shard::GridOp::create(detached, module.getLoc(), "tp",
                                    ArrayRef<int64_t>{tp});
  // Renames the grid if the module already has a symbol called `tp`.
  SymbolTable(module).insert(grid, module.getBody()->begin());
  IRRewriter rewriter(&getContext());
  for (WeightPlan &plan : plans)
    if (plan.choice.strategy == ShardStrategy::Row)
      for (LinearOp linear : plan.users)
        reduceRowLinear(rewriter, linear, grid.getSymName());
}

void PlaceShardsPass::runOnOperation() {
  // A pass instance may run again (on another module): start afresh.
  rules.clear();
  plans.clear();
  planOfLinear.clear();
  if (failed(parseOptions()))
    return signalPassFailure();

  auto *dialect = getContext().getLoadedDialect<QTensorDialect>();
  SmallVector<LinearOp> linears;
  WalkResult walk = getOperation().walk([&](LinearOp linear) {
    if (dialect->getPlacementAttrHelper().isAttrPresent(linear)) {
      linear.emitOpError() << "is already placed (it carries '"
                           << QTensorDialect::PlacementAttrHelper::getNameStr()
                           << "'); qtensor-place-shards runs once per module";
      return WalkResult::interrupt();
    }
    linears.push_back(linear);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();
  // One rank holds every weight whole: no attribute says exactly that.
  if (tp == 1 || linears.empty())
    return;

  if (failed(collectPlans(linears)) || failed(chooseAllBounds()) ||
      failed(attachPlacements()))
    return signalPassFailure();
  insertCollectives();
}

} // namespace
