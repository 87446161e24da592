//===- Groupwise.h - Row-bounded group-wise weight quantization -*- C++ -*-===//
//
// Group-wise quantization of a row-major weight W: [N, K] along K (seed
// M8.1 0x04, 0x06A). Groups restart at each row: row n has
// N_g = ceil(K / G) groups, the last one possibly short, and a short tail
// group stores its own scale and zero-point. Groups never span rows, so the
// tensor holds N * ceil(K / G) metadata entries, not ceil(N * K / G).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_GROUPWISE_H
#define QTENSOR_NUMERICS_GROUPWISE_H

#include "qtensor/Numerics/CodeRange.h"
#include "qtensor/Numerics/Enums.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace qtensor {

/// What to do with a group whose range is degenerate (M8.1 0x02E).
///
/// With asymmetric groups the range is always widened to include zero,
/// [min(lo, 0), max(hi, 0)], so exact zero stays representable (M8.1 0x02A)
/// and a nonzero constant group gets a non-degenerate range that reconstructs
/// it (up to rounding). With symmetric groups absMax > 0 for any nonzero
/// constant. The only degenerate group is therefore all zeros (or, under
/// NonfinitePolicy::ExcludeFromRange, a group with no finite nonzero value).
enum class ConstantGroupPolicy : uint8_t {
  Reject,    ///< report the group as an error
  UnitScale, ///< scale 1.0, zero-point 0, every finite code = the zero-point
};

/// What to do with NaN and infinities (M8.1 0x02E).
enum class NonfinitePolicy : uint8_t {
  Reject, ///< report the first nonfinite value as an error
  /// Leave NaN/inf out of the group's min/max so one bad value cannot set
  /// the scale; then store +inf as qmax, -inf as qmin and NaN as the group's
  /// zero-point (so NaN reconstructs as 0). Lossy by design: record the
  /// policy in the artifact.
  ExcludeFromRange,
};

/// How to quantize a weight tensor group-wise.
///   symmetric = false: unsigned codes [0, 2^b - 1] with a per-group
///                      zero-point (the seed's code_range(bits, symmetric)).
///   symmetric = true:  signed codes with zero-point 0, scale = absMax / qmax;
///                      narrow selects [-Q, Q] instead of the full
///                      two's-complement range (only valid when symmetric).
struct GroupwiseConfig {
  unsigned bits = 4;
  bool symmetric = false;
  bool narrow = false;
  int64_t groupSize = 128;
  RoundingMode rounding = RoundingMode::NearestEven;
  ConstantGroupPolicy constantPolicy = ConstantGroupPolicy::Reject;
  NonfinitePolicy nonfinitePolicy = NonfinitePolicy::Reject;
  /// The format scales are stored in. When set, each scale is rounded to it
  /// before any code is computed (and an asymmetric zero-point is recomputed
  /// from the rounded scale), so codes agree with the stored scale; a scale
  /// that rounds to 0 or inf is an error naming the group. Unset: scales
  /// stay exact doubles (the seed's reference quantizer).
  std::optional<FloatFormat> scaleFormat;
};

/// A group-wise quantized [rows, cols] tensor. Codes are row-major; scales and
/// zero-points are [rows, numGroupsPerRow] row-major; zeroPoints is empty for
/// symmetric tensors (zero-point 0 everywhere).
struct GroupwiseQuantized {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t groupSize = 0;
  int64_t numGroupsPerRow = 0;
  CodeRange range;
  std::vector<int32_t> codes;
  std::vector<double> scales;
  std::vector<int32_t> zeroPoints;

  bool isSymmetric() const { return zeroPoints.empty(); }
  int64_t numGroups() const { return rows * numGroupsPerRow; }
};

/// ceil(K / G) for K >= 0, G > 0 (no overflow for any int64 operands).
inline int64_t groupsPerRow(int64_t cols, int64_t groupSize) {
  return cols / groupSize + (cols % groupSize != 0 ? 1 : 0);
}

/// Quantizes W: [N, K] (row-major floats). Errors name the row, group and,
/// where one value is at fault, the column: e.g. a NaN under
/// NonfinitePolicy::Reject, or an all-zero group under
/// ConstantGroupPolicy::Reject. N, K and G must be positive and N * K must
/// not overflow.
Expected<GroupwiseQuantized> quantizeGroupwise(const float *weights,
                                               int64_t rows, int64_t cols,
                                               const GroupwiseConfig &config);

/// quantizeGroupwise in two steps, for callers that split the rows across
/// threads: prepareGroupwise checks the shape and configuration and sizes
/// the result for all of W; quantizeGroupwiseRows then quantizes rows
/// [rowBegin, rowEnd) of W (`weights` points at its row 0) into it. Calls
/// on disjoint rows may run at once; each stops at its range's first
/// error.
Expected<GroupwiseQuantized> prepareGroupwise(int64_t rows, int64_t cols,
                                              const GroupwiseConfig &config);
Status quantizeGroupwiseRows(const float *weights, int64_t rowBegin,
                             int64_t rowEnd, const GroupwiseConfig &config,
                             GroupwiseQuantized &result);

/// Checks that a (possibly hand-built) tensor is self-consistent: positive
/// shapes, numGroupsPerRow == ceil(cols / groupSize), vector sizes, positive
/// finite scales, codes and zero-points inside `range`.
Status validateGroupwise(const GroupwiseQuantized &q);

/// The seed's dequant_weight (M8.1 0x04A):
///   out[n, k] = scales[n, k / G] * (codes[n, k] - zeros[n, k / G]).
/// Precondition: `q` came from quantizeGroupwise or passed validateGroupwise;
/// a tensor whose vector sizes do not match its shape yields an empty vector.
std::vector<float> dequantizeGroupwise(const GroupwiseQuantized &q);

} // namespace qtensor

#endif // QTENSOR_NUMERICS_GROUPWISE_H
