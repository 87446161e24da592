//===- QTensorPlacement.cpp - Placements checked against weights ----------===//
//
// Qparam ownership of a tensor-parallel slice (seed M8.9 0x06B) and the
// dialect's check of the discardable `qtensor.placement` and
// `qtensor.reverify` attributes on `qtensor.linear`.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Dialect/QTensor/IR/QTensorPlacement.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "qtensor/Support/CheckedMath.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::qt;

namespace {
std::string formatList(ArrayRef<int64_t> values) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os);
  os << "]";
  return s;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(::qtensor::ceilDiv(a, b));
}

StringRef dimName(int64_t dim) { return dim == 0 ? "N" : "K"; }
} // namespace

FailureOr<QParamAxis>
mlir::qt::getQParamAxis(QuantizedTensorType weight,
                        function_ref<InFlightDiagnostic()> emitError) {
  auto affine = dyn_cast<AffineDescriptorAttr>(weight.getDescriptor());
  if (!affine)
    return emitError() << "placement does not know how the qparams of a '"
                       << weight.getDescriptor().getFamilyName()
                       << "' descriptor follow a slice";
  QParamAxis result;
  if (affine.getGranularity() == Granularity::PerTensor)
    return result;
  int64_t axis = affine.getAxis();
  if (axis < 0 || axis >= weight.getRank())
    return emitError() << "descriptor axis " << axis
                       << " is outside the weight's rank " << weight.getRank();
  result.axis = axis;
  int64_t size = weight.getShape()[axis];
  if (affine.getGranularity() == Granularity::PerAxis) {
    result.extent = size;
    return result;
  }
  result.groupSize = affine.getGroupSize();
  if (result.groupSize < 1)
    return emitError() << "group size " << result.groupSize
                       << " must be positive";
  result.extent = ceilDiv(size, result.groupSize);
  result.permuted = static_cast<bool>(affine.getPermutation());
  result.exactTail = affine.getTail() == TailRule::Exact;
  return result;
}

int64_t mlir::qt::getPlacedExtent(QuantizedTensorType weight, int64_t dim) {
  ArrayRef<int64_t> shape = weight.getShape();
  if (dim >= 0 && dim < static_cast<int64_t>(shape.size()))
    return shape[dim];
  // Replicated: every rank holds all output channels N = shape[rank - 2].
  if (shape.size() >= 2)
    return shape[shape.size() - 2];
  return shape.empty() ? 1 : shape[0];
}

FailureOr<SmallVector<int64_t>> mlir::qt::computePlacementQParams(
    QuantizedTensorType weight, int64_t dim, ArrayRef<int64_t> bounds,
    GroupPolicy policy, function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<QParamAxis> qaxis = getQParamAxis(weight, emitError);
  if (failed(qaxis))
    return failure();
  size_t ranks = bounds.size() - 1;
  SmallVector<int64_t> ranges;
  ranges.reserve(2 * ranks);

  // A slice across the scale axis (or none) leaves every qparam index whole.
  if (dim < 0 || dim != qaxis->axis) {
    for (size_t r = 0; r < ranks; ++r)
      ranges.append({0, qaxis->extent});
    return ranges;
  }
  int64_t g = qaxis->groupSize;
  if (g == 1) { // Per-axis scales follow the sliced channels one to one.
    for (size_t r = 0; r < ranks; ++r)
      ranges.append({bounds[r], bounds[r + 1]});
    return ranges;
  }
  if (qaxis->permuted)
    return emitError() << "the weight permutes axis " << dim
                       << " (act-order), so its groups are not contiguous "
                          "ranges and a slice along it owns no qparam range";
  if (policy != GroupPolicy::Repack) {
    // The groups a slice touches; a cut group is held by both neighbours.
    for (size_t r = 0; r < ranks; ++r)
      ranges.append({bounds[r] / g, ceilDiv(bounds[r + 1], g)});
    return ranges;
  }
  // Repack: each rank re-groups its slice from its own first element; the
  // new groups are numbered rank after rank.
  int64_t next = 0;
  for (size_t r = 0; r < ranks; ++r) {
    int64_t length = bounds[r + 1] - bounds[r];
    if (qaxis->exactTail && length % g != 0)
      return emitError() << "re-grouping rank " << r << "'s slice of " << length
                         << " elements leaves a final group of " << length % g
                         << ", but the weight's tail = exact "
                         << "forbids short groups";
    int64_t groups = ceilDiv(length, g);
    ranges.append({next, next + groups});
    next += groups;
  }
  return ranges;
}

bool mlir::qt::placementCutsGroups(PlacementAttr placement,
                                   QuantizedTensorType weight) {
  int64_t dim = placement.getDim();
  auto affine = dyn_cast<AffineDescriptorAttr>(weight.getDescriptor());
  if (dim < 0 || !affine || affine.getGranularity() != Granularity::Group ||
      affine.getAxis() != dim || affine.getGroupSize() < 1)
    return false;
  ArrayRef<int64_t> bounds = placement.getBounds().asArrayRef();
  return llvm::any_of(bounds.drop_front().drop_back(), [&](int64_t b) {
    return b % affine.getGroupSize() != 0;
  });
}

bool mlir::qt::placementRegroups(PlacementAttr placement,
                                 QuantizedTensorType weight) {
  return placement.getGroupPolicy() == GroupPolicy::Repack &&
         placementCutsGroups(placement, weight);
}

LogicalResult mlir::qt::verifyPlacementForWeight(
    PlacementAttr placement, QuantizedTensorType weight,
    function_ref<InFlightDiagnostic()> emitError) {
  int64_t dim = placement.getDim();
  if (dim >= 0 && weight.getRank() != 2)
    return emitError() << "a "
                       << stringifyShardStrategy(placement.getStrategy())
                       << " placement slices a rank-2 [N, K] weight, got rank "
                       << weight.getRank();
  ArrayRef<int64_t> bounds = placement.getBounds().asArrayRef();
  int64_t extent = getPlacedExtent(weight, dim);
  if (bounds.back() != extent) {
    if (dim < 0)
      return emitError() << "a replicated placement gives every rank all "
                         << extent << " output channels, got bounds "
                         << formatList(bounds);
    return emitError() << "bounds " << formatList(bounds) << " end at "
                       << bounds.back() << ", but the weight's " << dimName(dim)
                       << " (dim " << dim << ") is " << extent;
  }

  GroupPolicy policy = placement.getGroupPolicy();
  if ((policy == GroupPolicy::Error || policy == GroupPolicy::Align) &&
      placementCutsGroups(placement, weight)) {
    auto affine = cast<AffineDescriptorAttr>(weight.getDescriptor());
    int64_t g = affine.getGroupSize();
    for (int64_t r = 1; r < placement.getRanks(); ++r)
      if (bounds[r] % g != 0)
        return emitError() << "rank " << r << " starts at K = " << bounds[r]
                           << ", inside group " << bounds[r] / g
                           << " (G = " << g << "), which group_policy = "
                           << stringifyGroupPolicy(policy) << " does not allow";
  }

  FailureOr<SmallVector<int64_t>> expected =
      computePlacementQParams(weight, dim, bounds, policy, emitError);
  if (failed(expected))
    return failure();
  ArrayRef<int64_t> qparams = placement.getQparams().asArrayRef();
  if (qparams != ArrayRef<int64_t>(*expected))
    return emitError() << "qparams " << formatList(qparams)
                       << " do not follow from the bounds: expected "
                       << formatList(*expected);
  return success();
}

LogicalResult mlir::qt::verifyPlacementOpAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  StringRef placementName = QTensorDialect::PlacementAttrHelper::getNameStr();
  StringRef reverifyName = QTensorDialect::ReverifyAttrHelper::getNameStr();
  if (name != placementName && name != reverifyName)
    return success();
  if (!isa<LinearOp>(op))
    return op->emitError() << "'" << name
                           << "' belongs on a qtensor.linear only";

  if (name == reverifyName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a unit attribute";
    return success();
  }

  auto placement = dyn_cast<PlacementAttr>(attr.getValue());
  if (!placement)
    return op->emitOpError()
           << "'" << name << "' must be a #qtensor.placement, got "
           << attr.getValue();
  // Runs before the op's own verifier: don't trust the operand types yet.
  if (op->getNumOperands() < 2)
    return success();
  auto weight = dyn_cast<QuantizedTensorType>(op->getOperand(1).getType());
  if (!weight)
    return success();
  auto emitError = [&] { return op->emitOpError() << "placement: "; };
  if (failed(verifyPlacementForWeight(placement, weight, emitError)))
    return failure();
  if (placementRegroups(placement, weight) && !op->hasAttr(reverifyName))
    return emitError() << "a repack placement that cuts a group re-groups the "
                          "weight, which changes reconstruction; the op must "
                          "carry '"
                       << reverifyName << "' until parity is re-validated";
  return success();
}
