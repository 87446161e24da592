//===- PlaceShardsBounds.cpp - Slice bounds under a group policy ----------===//
//
// Where rank boundaries fall along a sliced dimension (seed M8.9 0x06B): a
// K-slice that cuts a quantization group is an error, is avoided by
// aligning to groups, or is allowed (the cut group is then replicated, or
// each rank re-groups; QTensorPlacement.cpp derives the qparams of each).
//
//===----------------------------------------------------------------------===//

#include "PlaceShards.h"

#include "qtensor/Support/CheckedMath.h"

using namespace mlir;
using namespace mlir::qt;
using namespace mlir::qt::place_shards;

namespace {
StringRef policyOption(GroupPolicy policy) {
  switch (policy) {
  case GroupPolicy::Error:
    return "error";
  case GroupPolicy::Align:
    return "align";
  case GroupPolicy::ReplicateBoundary:
    return "replicate-boundary";
  case GroupPolicy::Repack:
    return "repack";
  }
  return "";
}
} // namespace

SmallVector<int64_t> place_shards::splitBalanced(int64_t extent, int64_t tp,
                                                 int64_t unit) {
  int64_t units = static_cast<int64_t>(::qtensor::ceilDiv(extent, unit));
  int64_t base = units / tp, extra = units % tp;
  SmallVector<int64_t> bounds{0};
  int64_t taken = 0;
  for (int64_t r = 0; r < tp; ++r) {
    taken += base + (r < extra ? 1 : 0);
    // Only the last unit may be short (a partial tail group).
    bounds.push_back(std::min(taken * unit, extent));
  }
  return bounds;
}

FailureOr<SmallVector<int64_t>>
place_shards::chooseBounds(const SliceRequest &request,
                           function_ref<InFlightDiagnostic()> emitError) {
  int64_t extent = request.extent, tp = request.tp, g = request.groupSize;
  StringRef dim = request.strategy == ShardStrategy::Column ? "N" : "K";
  bool grouped = g > 1;
  auto fail = [&]() {
    InFlightDiagnostic diag = emitError();
    diag << "cannot place weight \"" << request.weightName << "\" "
         << stringifyShardStrategy(request.strategy)
         << "-parallel over tp = " << tp
         << " with group-policy=" << policyOption(request.policy) << ": ";
    return diag;
  };
  auto groupNote = [&]() {
    return grouped ? " (groups of G = " + std::to_string(g) + " along " +
                         dim.str() + ")"
                   : std::string();
  };

  if (request.policy == GroupPolicy::Align && grouped) {
    int64_t groups = static_cast<int64_t>(::qtensor::ceilDiv(extent, g));
    if (groups < tp)
      return fail() << dim << " = " << extent << " holds only " << groups
                    << " groups of G = " << g << ", fewer than the " << tp
                    << " ranks that each need a whole group";
    return splitBalanced(extent, tp, g);
  }
  if (extent < tp)
    return fail() << dim << " = " << extent << " has fewer elements than the "
                  << tp << " ranks" << groupNote();
  if (request.policy != GroupPolicy::Error)
    return splitBalanced(extent, tp, 1);

  if (extent % tp != 0)
    return fail() << dim << " = " << extent
                  << " is not divisible by tp = " << tp << groupNote();
  int64_t slice = extent / tp;
  if (grouped && slice % g != 0)
    return fail() << "the even slices of " << dim << " = " << extent << " ("
                  << slice << " per rank) cut groups of G = " << g
                  << ": rank 1 would start at " << dim << " = " << slice
                  << ", inside group " << slice / g
                  << "; use group-policy=align, replicate-boundary or repack";
  return splitBalanced(extent, tp, 1);
}
