//===- QTensorPlacement.h - Placements checked against weights --*- C++ -*-===//
//
// What a `#qtensor.placement` means for the weight it slices (seed M8.9
// 0x06B): which qparams each rank holds, and whether a K-slice cuts a
// quantization group. Shared by the dialect's attribute verifier, by
// qtensor-place-shards, which writes placements, and by the passes that read
// them, so every side derives qparam ownership the same way.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORPLACEMENT_H
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORPLACEMENT_H

#include "qtensor/Dialect/QTensor/IR/QTensorTypes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

namespace mlir::qt {

/// How a weight's qparams are indexed: one index per `groupSize` elements
/// along weight dimension `axis` (1 for per-axis scales), `extent` indices in
/// all; `axis = -1` is a single per-tensor qparam (`extent = 1`).
struct QParamAxis {
  int64_t axis = -1;
  int64_t groupSize = 1;
  int64_t extent = 1;
  /// Whether the descriptor permutes `axis` (act-order): its groups are then
  /// not contiguous ranges of the axis.
  bool permuted = false;
  /// Whether a short final group is forbidden (`tail = exact`).
  bool exactTail = false;
};

/// The qparam indexing of `weight`'s descriptor; fails for a descriptor
/// family whose qparams placement does not know how to follow.
FailureOr<QParamAxis>
getQParamAxis(QuantizedTensorType weight,
              function_ref<InFlightDiagnostic()> emitError);

/// The size of the dimension a placement of `weight` with `dim` covers:
/// `shape[dim]`, or N (the output channels) for a replicated placement.
int64_t getPlacedExtent(QuantizedTensorType weight, int64_t dim);

/// The qparam ranges (two entries per rank) that the slices `bounds` along
/// `dim` (-1: replicated) imply. Qparams are indexed along the descriptor's
/// scale axis: a slice along another dimension (or none) holds all of them;
/// a slice along it holds the groups it touches, so a cut group belongs to
/// both neighbours, except under `repack`, where each rank re-groups from
/// its own offset and the ranges number the new groups rank after rank.
FailureOr<SmallVector<int64_t>>
computePlacementQParams(QuantizedTensorType weight, int64_t dim,
                        ArrayRef<int64_t> bounds, GroupPolicy policy,
                        function_ref<InFlightDiagnostic()> emitError);

/// Whether some rank boundary of `placement` falls inside a qparam group of
/// `weight` (only possible for a row placement of a grouped weight).
bool placementCutsGroups(PlacementAttr placement, QuantizedTensorType weight);

/// Whether `placement` makes ranks re-group `weight` (a `repack` placement
/// that cuts a group): reconstruction changes, so parity must be
/// re-validated (seed M8.9 0x06B).
bool placementRegroups(PlacementAttr placement, QuantizedTensorType weight);

/// Checks `placement` against the weight it slices: the sliced dimension
/// exists, the bounds end at its size, cuts only where the group policy
/// allows them, and the qparam ranges are the ones the bounds imply.
LogicalResult
verifyPlacementForWeight(PlacementAttr placement, QuantizedTensorType weight,
                         function_ref<InFlightDiagnostic()> emitError);

/// The dialect's check of the discardable attributes `qtensor.placement`
/// (a `#qtensor.placement` that fits the linear's weight) and
/// `qtensor.reverify` (a unit mark that a repack placement requires); other
/// attributes pass.
LogicalResult verifyPlacementOpAttribute(Operation *op, NamedAttribute attr);

} // namespace mlir::qt

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORPLACEMENT_H
