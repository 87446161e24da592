//===- PlaceShards.h - qtensor-place-shards internals -----------*- C++ -*-===//
//
// The pieces of qtensor-place-shards that need no IR walk: parsing its
// options, choosing a weight's strategy from its name, and choosing the
// slice bounds of one dimension under a group policy (seed M8.9 0x06B).
// Private to passes/Transforms.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_TRANSFORMS_PLACESHARDS_H
#define QTENSOR_PASSES_TRANSFORMS_PLACESHARDS_H

#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/GlobPattern.h"

#include <optional>
#include <string>

namespace mlir::qt::place_shards {

/// Placements store O(tp) integers per linear; beyond this a `tp` is a
/// typo, not a machine.
constexpr int64_t kMaxRanks = 1024;

/// One `strategy=PATTERN:column|row|replicate` entry. A pattern with a glob
/// metacharacter (`*`, `?`, `[`) must match the whole weight name; any other
/// pattern matches where it occurs in the name.
struct StrategyRule {
  std::string pattern;
  std::optional<llvm::GlobPattern> glob;
  ShardStrategy strategy;

  bool matches(StringRef weightName) const;
};

/// Parses the `strategy` entries, reporting every malformed one; fails if
/// any was.
FailureOr<SmallVector<StrategyRule>>
parseStrategyRules(ArrayRef<std::string> entries,
                   function_ref<InFlightDiagnostic()> emitError);

/// A weight's strategy and why it was chosen (for diagnostics).
struct StrategyChoice {
  ShardStrategy strategy;
  std::string reason;
};

/// The first rule matching `weightName`, else the transformer default for
/// its last name component (docs/passes.md lists them), else replicated.
/// An unnamed weight (empty name) matches nothing and is replicated.
StrategyChoice chooseStrategy(StringRef weightName,
                              ArrayRef<StrategyRule> rules);

/// What is known about the dimension a weight is sliced along.
struct SliceRequest {
  StringRef weightName;
  ShardStrategy strategy; // column or row
  int64_t extent;         // N or K
  int64_t groupSize;      // > 1 where qparam groups run along this dim
  int64_t tp;
  GroupPolicy policy;
};

/// `extent` split over `tp` ranks in whole `unit`s, as evenly as possible
/// (the first ranks take one unit more); the last bound is `extent`.
/// Requires ceil(extent / unit) >= tp.
SmallVector<int64_t> splitBalanced(int64_t extent, int64_t tp, int64_t unit);

/// The bounds of `request`'s dimension under its group policy: `error`
/// needs tp to divide the extent and, along groups, every bound on a group
/// boundary; `align` puts bounds on group boundaries, as evenly as the
/// groups allow; `replicate-boundary` and `repack` split elements evenly.
/// Failures name the weight, the dimension, its size, G and tp.
FailureOr<SmallVector<int64_t>>
chooseBounds(const SliceRequest &request,
             function_ref<InFlightDiagnostic()> emitError);

} // namespace mlir::qt::place_shards

#endif // QTENSOR_PASSES_TRANSFORMS_PLACESHARDS_H
