//===- Groupwise.cpp - Row-bounded group-wise weight quantization ---------===//
//
// The offline conversion loop of seed M8.1 0x06A with explicit constant-group
// and nonfinite policies (M8.1 0x02E) and row-bounded tail groups (0x04).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/Groupwise.h"

#include "qtensor/Numerics/Affine.h"

#include "NumericsDetail.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>

namespace qtensor {

using numerics_detail::formatDouble;
using numerics_detail::mulOverflow;

namespace {

/// Checks N, K, G and that N * K elements (and N * Ng metadata entries) can be
/// indexed and allocated.
Status validateShape(int64_t rows, int64_t cols, int64_t groupSize) {
  if (rows <= 0)
    return makeError("row count N must be positive, got ", rows);
  if (cols <= 0)
    return makeError("column count K must be positive, got ", cols);
  if (groupSize <= 0)
    return makeError("group size G must be positive, got ", groupSize);
  int64_t elements;
  if (mulOverflow(rows, cols, elements) ||
      static_cast<uint64_t>(elements) >
          std::numeric_limits<size_t>::max() / sizeof(int32_t))
    return makeError("tensor shape [", rows, ", ", cols,
                     "] has too many elements: N * K overflows");
  return Status::ok();
}

std::string groupText(int64_t row, int64_t group, int64_t lo, int64_t hi) {
  return "row " + std::to_string(row) + ", group " + std::to_string(group) +
         " (columns " + std::to_string(lo) + ".." + std::to_string(hi - 1) +
         ")";
}

/// The finite values' minimum and maximum of one group, and how many of
/// its values are not finite. The minimum and maximum are exact, whatever
/// the order the lanes meet them in (only a zero's sign may differ, which
/// no parameter depends on).
struct FiniteRange {
  float lo = 0, hi = 0;
  int64_t nonfinite = 0;
};

typedef float Floats8 __attribute__((ext_vector_type(8), aligned(4)));
typedef int Ints8 __attribute__((ext_vector_type(8)));

FiniteRange finiteRange(const float *v, int64_t n) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  // Eight lanes at a time: x - x is 0 exactly when x is finite; a value
  // that is not stands in as the identity of the min and the max.
  Floats8 lo = inf, hi = -inf;
  Ints8 bad = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Floats8 x;
    std::memcpy(&x, v + i, sizeof x);
    const Ints8 finite = (x - x) == 0.0f; // -1 where finite
    lo = __builtin_elementwise_min(lo, finite ? x : inf);
    hi = __builtin_elementwise_max(hi, finite ? x : -inf);
    bad += finite + 1;
  }
  FiniteRange r;
  float l = inf, h = -inf;
  for (int j = 0; j < 8; ++j) {
    l = std::min(l, lo[j]);
    h = std::max(h, hi[j]);
    r.nonfinite += bad[j];
  }
  for (; i < n; ++i) {
    if (!std::isfinite(v[i])) {
      ++r.nonfinite;
      continue;
    }
    l = std::min(l, v[i]);
    h = std::max(h, v[i]);
  }
  if (r.nonfinite < n) { // else no finite value: both stay 0
    r.lo = l;
    r.hi = h;
  }
  return r;
}

/// One group's affine map under NearestEven rounding, as quantizeClamped
/// applies it, with its endpoints precomputed.
struct GroupCoding {
  double scale, zeroPoint, lower, upper, qmin, qmax;
};

/// out[i] = quantizeClamped(v[i], NearestEven) for a finite v[i], qmax for
/// +inf, qmin for -inf and the zero-point for NaN: quantizeGroupwise's
/// per-value rule, the same operations in the same order, with selects
/// for its branches so the loop vectorizes.
template <bool Builtin>
inline __attribute__((always_inline)) void
codeValues(const float *v, int64_t n, const GroupCoding &g, int32_t *out) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = v[i];
    const double step = x / g.scale;
    double r = (Builtin ? __builtin_roundeven(step) : roundHalfToEven(step)) +
               g.zeroPoint;
    r = r < g.qmin ? g.qmin : r;
    r = r > g.qmax ? g.qmax : r;
    // quantizeClamped's early saturation (the lower end first), which also
    // places the infinities.
    r = x >= g.upper ? g.qmax : r;
    r = x <= g.lower ? g.qmin : r;
    r = x != x ? g.zeroPoint : r;
    out[i] = static_cast<int32_t>(r);
  }
}

#if defined(__x86_64__)
// AVX2's vroundpd rounds half to even by its immediate, whatever the
// floating-point environment: roundeven is one instruction there.
__attribute__((target("avx2"))) void
codeValuesAvx2(const float *v, int64_t n, const GroupCoding &g, int32_t *out) {
  codeValues<true>(v, n, g, out);
}
#endif

void codeValuesNearestEven(const float *v, int64_t n, const GroupCoding &g,
                           int32_t *out) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2)
    return codeValuesAvx2(v, n, g, out);
#endif
  codeValues<false>(v, n, g, out);
}

} // namespace

Expected<GroupwiseQuantized> prepareGroupwise(int64_t rows, int64_t cols,
                                              const GroupwiseConfig &config) {
  if (Status status = validateShape(rows, cols, config.groupSize); !status)
    return status.error();
  if (config.narrow && !config.symmetric)
    return makeError("narrow [-Q, Q] codes are only valid for symmetric "
                     "quantization");
  // The seed's code_range(bits, symmetric): signed codes for symmetric
  // groups, unsigned codes plus a zero-point for asymmetric ones.
  Expected<CodeRange> range =
      codeRange(config.bits, config.symmetric, config.narrow);
  if (!range)
    return range.error();
  if (range->qmin < std::numeric_limits<int32_t>::min() ||
      range->qmax > std::numeric_limits<int32_t>::max())
    return makeError("unsigned ", config.bits,
                     "-bit codes do not fit the int32 code storage");
  if (config.symmetric && range->qmax <= 0)
    return makeError("symmetric quantization needs qmax > 0; signed ",
                     config.bits, "-bit codes span ", "[", range->qmin, ", ",
                     range->qmax, "]");

  const int64_t numGroups = groupsPerRow(cols, config.groupSize);
  GroupwiseQuantized result;
  result.rows = rows;
  result.cols = cols;
  result.groupSize = config.groupSize;
  result.numGroupsPerRow = numGroups;
  result.range = *range;
  result.codes.resize(static_cast<size_t>(rows * cols));
  result.scales.resize(static_cast<size_t>(rows * numGroups));
  if (!config.symmetric)
    result.zeroPoints.resize(static_cast<size_t>(rows * numGroups));
  return result;
}

Status quantizeGroupwiseRows(const float *weights, int64_t rowBegin,
                             int64_t rowEnd, const GroupwiseConfig &config,
                             GroupwiseQuantized &result) {
  const int64_t rows = result.rows, cols = result.cols;
  if (!weights)
    return makeError("weight pointer is null for a [", rows, ", ", cols,
                     "] tensor");
  if (rowBegin < 0 || rowBegin > rowEnd || rowEnd > rows ||
      result.groupSize != config.groupSize ||
      result.codes.size() != size_t(rows * cols) ||
      result.zeroPoints.empty() != config.symmetric)
    return makeError("rows [", rowBegin, ", ", rowEnd,
                     ") of a tensor prepared for [", rows, ", ", cols,
                     "] under another configuration");
  const int64_t numGroups = result.numGroupsPerRow;
  const CodeRange *range = &result.range;
  for (int64_t n = rowBegin; n < rowEnd; ++n) {
    const float *row = weights + n * cols;
    for (int64_t g = 0; g < numGroups; ++g) {
      // Groups restart at each row; the last one may be short (M8.1 0x04).
      const int64_t lo = g * config.groupSize;
      const int64_t hi =
          cols - lo > config.groupSize ? lo + config.groupSize : cols;

      // Range reduction over finite values only; a nonfinite value must not
      // set the scale of the whole group (M8.1 0x02E).
      const FiniteRange finite = finiteRange(row + lo, hi - lo);
      if (finite.nonfinite && config.nonfinitePolicy == NonfinitePolicy::Reject)
        for (int64_t k = lo; k < hi; ++k)
          if (!std::isfinite(row[k]))
            return makeError(groupText(n, g, lo, hi), ", column ", k,
                             ": value ", formatDouble(row[k]),
                             " is not finite (NonfinitePolicy::Reject)");
      const double minValue = finite.lo, maxValue = finite.hi;
      const bool anyFinite = finite.nonfinite < hi - lo;

      // Asymmetric ranges always include 0: exact zero stays representable
      // and a nonzero constant group gets a non-degenerate range. The only
      // degenerate group left is all zeros (or no finite values at all).
      double rangeLo = std::min(minValue, 0.0);
      double rangeHi = std::max(maxValue, 0.0);
      double absMax = std::max(std::fabs(minValue), std::fabs(maxValue));
      bool degenerate = config.symmetric ? absMax == 0.0 : rangeLo == rangeHi;

      AffineParams params;
      if (degenerate) {
        if (config.constantPolicy == ConstantGroupPolicy::Reject)
          return makeError(groupText(n, g, lo, hi), ", column ", lo, ": ",
                           anyFinite ? "all-zero group" : "no finite values",
                           " gives a degenerate range "
                           "(ConstantGroupPolicy::Reject)");
        // A conventional nonzero scale; zero-point 0 is a valid code for
        // both signed and unsigned ranges, so zeros reconstruct exactly.
        params = AffineParams{1.0, 0};
      } else {
        Expected<AffineParams> chosen =
            config.symmetric ? symmetricParams(absMax, *range)
                             : affineParamsFromRange(rangeLo, rangeHi, *range);
        if (!chosen)
          return makeError(groupText(n, g, lo, hi), ": ", chosen.message());
        params = *chosen;
        if (config.scaleFormat) {
          double stored = roundToFormat(params.scale, *config.scaleFormat);
          if (!std::isfinite(stored) || stored <= 0.0)
            return makeError(groupText(n, g, lo, hi), ": scale ",
                             formatDouble(params.scale),
                             " is not representable in the scale format "
                             "(rounds to ",
                             formatDouble(stored), ")");
          if (!config.symmetric && stored != params.scale) {
            // The zero-point of the seed's formula, from the stored scale.
            double z = roundToInteger(static_cast<double>(range->qmin) -
                                          rangeLo / stored,
                                      RoundingMode::NearestEven);
            params.zeroPoint = static_cast<int64_t>(
                std::clamp(z, static_cast<double>(range->qmin),
                           static_cast<double>(range->qmax)));
          }
          params.scale = stored;
        }
      }

      const size_t metaIndex = static_cast<size_t>(n * numGroups + g);
      result.scales[metaIndex] = params.scale;
      if (!config.symmetric)
        result.zeroPoints[metaIndex] = static_cast<int32_t>(params.zeroPoint);

      // The group's params are checked once; each value then takes
      // quantizeValue's Clamp path without repeating the checks.
      if (Status s = validateQuantizeParams(params, *range); !s)
        return makeError(groupText(n, g, lo, hi), ": ", s.message());
      int32_t *codes = result.codes.data() + size_t(n * cols);
      if (config.rounding == RoundingMode::NearestEven) {
        const double qmin = double(range->qmin), qmax = double(range->qmax);
        const GroupCoding coding{
            params.scale,
            double(params.zeroPoint),
            params.scale * double(range->qmin - params.zeroPoint),
            params.scale * double(range->qmax - params.zeroPoint),
            qmin,
            qmax};
        codeValuesNearestEven(row + lo, hi - lo, coding, codes + lo);
        continue;
      }
      for (int64_t k = lo; k < hi; ++k) {
        double v = row[k];
        int64_t code;
        if (std::isnan(v))
          code = params.zeroPoint;
        else if (std::isinf(v))
          code = v > 0 ? range->qmax : range->qmin;
        else
          code = quantizeClamped(v, params, *range, config.rounding);
        result.codes[static_cast<size_t>(n * cols + k)] =
            static_cast<int32_t>(code);
      }
    }
  }
  return Status::ok();
}

Expected<GroupwiseQuantized> quantizeGroupwise(const float *weights,
                                               int64_t rows, int64_t cols,
                                               const GroupwiseConfig &config) {
  QTENSOR_ASSIGN_OR_RETURN(GroupwiseQuantized result,
                           prepareGroupwise(rows, cols, config));
  QTENSOR_TRY(quantizeGroupwiseRows(weights, 0, rows, config, result));
  return result;
}

Status validateGroupwise(const GroupwiseQuantized &q) {
  if (Status status = validateShape(q.rows, q.cols, q.groupSize); !status)
    return status;
  const int64_t numGroups = groupsPerRow(q.cols, q.groupSize);
  if (q.numGroupsPerRow != numGroups)
    return makeError("numGroupsPerRow is ", q.numGroupsPerRow,
                     " but ceil(K / G) = ceil(", q.cols, " / ", q.groupSize,
                     ") = ", numGroups);
  int64_t metaCount;
  if (mulOverflow(q.rows, numGroups, metaCount))
    return makeError("metadata count N * ceil(K / G) overflows");
  if (q.codes.size() != static_cast<uint64_t>(q.rows * q.cols))
    return makeError("codes hold ", q.codes.size(),
                     " values, expected N * K = ", q.rows * q.cols);
  if (q.scales.size() != static_cast<uint64_t>(metaCount))
    return makeError("scales hold ", q.scales.size(),
                     " values, expected N * ceil(K / G) = ", metaCount);
  if (!q.zeroPoints.empty() &&
      q.zeroPoints.size() != static_cast<uint64_t>(metaCount))
    return makeError(
        "zeroPoints hold ", q.zeroPoints.size(),
        " values, expected 0 (symmetric) or N * ceil(K / G) = ", metaCount);
  if (Status status = validateCodeRange(q.range); !status)
    return status;
  for (size_t i = 0; i < q.scales.size(); ++i) {
    if (!std::isfinite(q.scales[i]) || q.scales[i] <= 0.0)
      return makeError("scale of row ", int64_t(i) / numGroups, ", group ",
                       int64_t(i) % numGroups,
                       " must be positive and finite, got ",
                       formatDouble(q.scales[i]));
    if (!q.zeroPoints.empty() && !q.range.contains(q.zeroPoints[i]))
      return makeError("zero-point of row ", int64_t(i) / numGroups, ", group ",
                       int64_t(i) % numGroups, " is ", q.zeroPoints[i],
                       ", outside the code range [", q.range.qmin, ", ",
                       q.range.qmax, "]");
  }
  for (size_t i = 0; i < q.codes.size(); ++i)
    if (!q.range.contains(q.codes[i]))
      return makeError("code at row ", int64_t(i) / q.cols, ", column ",
                       int64_t(i) % q.cols, " is ", q.codes[i],
                       ", outside the code range [", q.range.qmin, ", ",
                       q.range.qmax, "]");
  return Status::ok();
}

std::vector<float> dequantizeGroupwise(const GroupwiseQuantized &q) {
  if (q.rows <= 0 || q.cols <= 0 || q.groupSize <= 0)
    return {};
  const int64_t numGroups = groupsPerRow(q.cols, q.groupSize);
  int64_t elements, metaCount;
  if (mulOverflow(q.rows, q.cols, elements) ||
      mulOverflow(q.rows, numGroups, metaCount) ||
      q.codes.size() != static_cast<uint64_t>(elements) ||
      q.scales.size() != static_cast<uint64_t>(metaCount) ||
      (!q.zeroPoints.empty() &&
       q.zeroPoints.size() != static_cast<uint64_t>(metaCount)))
    return {};

  std::vector<float> out(static_cast<size_t>(elements));
  for (int64_t n = 0; n < q.rows; ++n) {
    for (int64_t k = 0; k < q.cols; ++k) {
      const size_t meta = static_cast<size_t>(n * numGroups + k / q.groupSize);
      const int64_t zero = q.zeroPoints.empty() ? 0 : q.zeroPoints[meta];
      const size_t index = static_cast<size_t>(n * q.cols + k);
      out[index] = static_cast<float>(
          q.scales[meta] * static_cast<double>(q.codes[index] - zero));
    }
  }
  return out;
}

} // namespace qtensor
