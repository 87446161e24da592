//===- QuantizeMixed2416.cpp - Float weights to mixed 2/4/16 --------------===//

#include "QuantizeMixed2416.h"

#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>

namespace qtensor::compiler {
namespace {

/// A group's asymmetric range with zero included: [lo, hi].
struct Range {
  double lo = 0, hi = 0;
};

/// Weighted squared error of quantizing x[0, g) to `levels` + 1 codes over
/// the group's range with an unquantized scale (the sensitivity measure);
/// elements marked in `excluded` are left out.
double rangeError(const float *x, const double *importance,
                  const char *excluded, int64_t g, unsigned levels) {
  Range r;
  for (int64_t i = 0; i < g; ++i)
    if (!excluded[i]) {
      r.lo = std::min(r.lo, double(x[i]));
      r.hi = std::max(r.hi, double(x[i]));
    }
  if (r.hi == r.lo)
    return 0;
  const double s = (r.hi - r.lo) / levels, z = std::round(-r.lo / s);
  double error = 0;
  for (int64_t i = 0; i < g; ++i) {
    if (excluded[i])
      continue;
    const double q = std::clamp(std::round(x[i] / s + z), 0.0, double(levels));
    const double e = s * (q - z) - x[i];
    error += (importance ? importance[i] : 1.0) * e * e;
  }
  return error;
}

/// The `count` elements of `row` farthest from their group's mean
/// (weighted by importance), among the groups `eligible` accepts; marked
/// in `mark` (cleared first) and returned in column order.
template <typename Eligible>
std::vector<int32_t> farthestFromGroupMean(const float *row, int64_t k,
                                           int64_t g1, const double *importance,
                                           int64_t count, Eligible eligible,
                                           std::vector<char> &mark) {
  std::vector<std::pair<double, int32_t>> scored;
  for (int64_t g = 0; g < k / g1; ++g) {
    if (!eligible(g))
      continue;
    double mean = 0;
    for (int64_t i = 0; i < g1; ++i)
      mean += row[g * g1 + i];
    mean /= double(g1);
    for (int64_t i = 0; i < g1; ++i) {
      const int64_t c = g * g1 + i;
      const double e = row[c] - mean;
      scored.push_back(
          {(importance ? importance[c] : 1.0) * e * e, int32_t(c)});
    }
  }
  const size_t take = std::min(scored.size(), static_cast<size_t>(count));
  std::partial_sort(scored.begin(), scored.begin() + take, scored.end(),
                    [](const auto &a, const auto &b) {
                      return a.first != b.first ? a.first > b.first
                                                : a.second < b.second;
                    });
  std::fill(mark.begin(), mark.end(), 0);
  std::vector<int32_t> columns;
  for (size_t i = 0; i < take; ++i) {
    mark[scored[i].second] = 1;
    columns.push_back(scored[i].second);
  }
  std::sort(columns.begin(), columns.end());
  return columns;
}

/// Second level of one column of G2 first-level scales: s2, z2 (values of
/// `type`) and each scale's code, so that s2 * (qs - z2) is >= 0 and near s1.
void quantizeScales(const double *s1, int64_t count, int64_t stride,
                    unsigned levels, FloatType type, double &s2, double &z2,
                    uint8_t *qs) {
  double smin = INFINITY, smax = 0;
  for (int64_t i = 0; i < count; ++i) {
    smin = std::min(smin, s1[i * stride]);
    smax = std::max(smax, s1[i * stride]);
  }
  const FloatFormat f = floatFormatOf(type);
  // One value, or a spread below the type's smallest step: qs = 1 (0 when
  // every group is zero).
  if (smax == smin || roundToFormat((smax - smin) / levels, f) == 0) {
    s2 = roundToFormat(smax, f);
    z2 = 0;
    for (int64_t i = 0; i < count; ++i)
      qs[i * stride] = smax > 0;
    return;
  }
  s2 = roundToFormat((smax - smin) / levels, f);
  z2 = roundToFormat(-smin / s2, f); // <= 0: every decoded scale is >= 0
  for (int64_t i = 0; i < count; ++i)
    qs[i * stride] = uint8_t(
        std::clamp(std::round(s1[i * stride] / s2 + z2), 0.0, double(levels)));
}

int64_t outliersPerRow(const Mixed2416Options &o, int64_t k) {
  return static_cast<int64_t>(std::floor(o.outlierFraction * double(k)));
}

} // namespace

double mixed2416MinimumRate(const Mixed2416Descriptor &d,
                            const Mixed2416Options &o) {
  const double weights = double(d.rows()) * double(d.cols());
  return double(mixed2416StreamBytes(d, 0,
                                     outliersPerRow(o, d.cols()) * d.rows())) *
         8.0 / weights;
}

Expected<Mixed2416Quantized> quantizeMixed2416(const float *values, int64_t n,
                                               int64_t k,
                                               const Mixed2416Options &o) {
  Mixed2416Quantized out;
  Mixed2416Descriptor &d = out.descriptor;
  d.shape = {n, k};
  d.elementType = o.elementType;
  d.firstGroupSize = o.firstGroupSize;
  d.secondGroupSize = o.secondGroupSize;
  d.secondType = o.secondType;
  d.sparseType = o.sparseType;
  QTENSOR_TRY(verifyMixed2416(d));
  if (!o.columnImportance.empty() &&
      o.columnImportance.size() != static_cast<size_t>(k))
    return makeError("mixed2416: ", o.columnImportance.size(),
                     " column importances for K = ", k);
  for (size_t c = 0; c < o.columnImportance.size(); ++c)
    if (!std::isfinite(o.columnImportance[c]) || o.columnImportance[c] < 0)
      return makeError("mixed2416: column importance ", c, " is ",
                       o.columnImportance[c], "; expected finite and >= 0");
  if (!(o.outlierFraction >= 0 && o.outlierFraction < 1))
    return makeError("mixed2416: the outlier fraction must be in [0, 1), "
                     "got ",
                     o.outlierFraction);
  const int64_t g1 = d.firstGroupSize, perRow = d.groupsPerRow();
  const int64_t groups = n * perRow;
  const double *importance =
      o.columnImportance.empty() ? nullptr : o.columnImportance.data();

  // How many groups the budget pays 4 bits for, after everything else.
  const int64_t perRowOutliers = outliersPerRow(o, k);
  const double budgetBytes = o.budget * double(n) * double(k) / 8.0;
  const double minimumBytes =
      double(mixed2416StreamBytes(d, 0, perRowOutliers * n));
  // What promoting one group from W2 to W4 costs.
  const int64_t promotionBytes =
      mixed2416StreamBytes(d, 1, 0) - mixed2416StreamBytes(d, 0, 0);
  if (!(budgetBytes >= minimumBytes))
    return makeError("mixed2416: a budget of ", o.budget,
                     " bits per weight is below this tensor's smallest rate, ",
                     minimumBytes * 8.0 / (double(n) * double(k)),
                     " (every group W2, ", perRowOutliers,
                     " outliers per row)");
  const int64_t w4Groups = std::min<int64_t>(
      groups, static_cast<int64_t>((budgetBytes - minimumBytes) /
                                   double(promotionBytes)));

  // 1. Sensitivity of every group, and the finite check. The row's likely
  // outliers are left out: they will not cost their group its range, so
  // they must not win it 4 bits either.
  std::vector<double> benefit(static_cast<size_t>(groups));
  std::mutex failureMutex;
  int64_t failedAt = n * k;
  defaultThreadPool().parallelRanges(
      n, n * k, int64_t(1) << 16, [&](int64_t r0, int64_t r1) {
        std::vector<char> excluded(static_cast<size_t>(k));
        for (int64_t r = r0; r < r1; ++r) {
          const float *row = values + r * k;
          for (int64_t c = 0; c < k; ++c)
            if (!std::isfinite(row[c])) {
              std::lock_guard<std::mutex> lock(failureMutex);
              failedAt = std::min(failedAt, r * k + c);
              return;
            }
          farthestFromGroupMean(
              row, k, g1, importance, perRowOutliers,
              [](int64_t) { return true; }, excluded);
          for (int64_t g = 0; g < perRow; ++g) {
            const double *imp = importance ? importance + g * g1 : nullptr;
            const float *x = row + g * g1;
            const char *skip = excluded.data() + g * g1;
            benefit[r * perRow + g] = rangeError(x, imp, skip, g1, 3) -
                                      rangeError(x, imp, skip, g1, 15);
          }
        }
      });
  if (failedAt < n * k)
    return makeError("mixed2416: weight (", failedAt / k, ", ", failedAt % k,
                     ") is ", values[failedAt], "; expected a finite value");

  // 2. The precision map: the w4Groups largest benefits (ties: lower index).
  std::vector<int64_t> order(static_cast<size_t>(groups));
  std::iota(order.begin(), order.end(), 0);
  std::nth_element(order.begin(), order.begin() + w4Groups, order.end(),
                   [&](int64_t a, int64_t b) {
                     return benefit[a] != benefit[b] ? benefit[a] > benefit[b]
                                                     : a < b;
                   });
  Mixed2416Streams &s = out.streams;
  s.precisionMap.assign(static_cast<size_t>((groups + 7) / 8), 0);
  for (int64_t i = 0; i < w4Groups; ++i)
    s.precisionMap[order[i] / 8] |= uint8_t(1u << (order[i] % 8));
  benefit = {};
  order = {};

  // 3. Per block of G2 rows: outliers, first-level ranges, the second
  // level, then z1 and the codes with the decoded scales.
  const int64_t g2 = d.secondGroupSize, blocks = d.secondGroupsPerColumn();
  const unsigned scaleLevels = (1u << d.firstScaleCode.bits) - 1;
  std::vector<uint8_t> codes(static_cast<size_t>(n * k));
  s.firstScaleCodes.resize(static_cast<size_t>(groups));
  s.firstZeroPoints.resize(static_cast<size_t>(groups));
  s.secondScales.resize(static_cast<size_t>(blocks * perRow));
  s.secondZeroPoints.resize(static_cast<size_t>(blocks * perRow));
  std::vector<std::vector<int32_t>> outlierColumns(static_cast<size_t>(n));
  int64_t overflowAt = n * k;
  defaultThreadPool().parallelRanges(
      blocks, n * k, int64_t(1) << 16, [&](int64_t b0, int64_t b1) {
        std::vector<double> s1(static_cast<size_t>(g2 * perRow));
        std::vector<Range> ranges(static_cast<size_t>(g2 * perRow));
        std::vector<char> isOutlier(static_cast<size_t>(k));
        for (int64_t b = b0; b < b1; ++b) {
          for (int64_t rr = 0; rr < g2; ++rr) {
            const int64_t r = b * g2 + rr;
            const float *row = values + r * k;
            // Outliers: the W2 elements farthest from their group's mean.
            std::vector<int32_t> &mine = outlierColumns[r];
            mine = farthestFromGroupMean(
                row, k, g1, importance, perRowOutliers,
                [&](int64_t g) {
                  return !isW4Group(s.precisionMap, r * perRow + g);
                },
                isOutlier);
            // First-level ranges and scales.
            for (int64_t g = 0; g < perRow; ++g) {
              const unsigned levels =
                  isW4Group(s.precisionMap, r * perRow + g) ? 15 : 3;
              Range &range = ranges[rr * perRow + g];
              range = Range();
              for (int64_t i = 0; i < g1; ++i)
                if (!isOutlier[g * g1 + i]) {
                  range.lo = std::min(range.lo, double(row[g * g1 + i]));
                  range.hi = std::max(range.hi, double(row[g * g1 + i]));
                }
              s1[rr * perRow + g] = (range.hi - range.lo) / levels;
            }
            for (int32_t c : mine) // checked here, reported after
              if (!std::isfinite(
                      roundToFormat(row[c], floatFormatOf(d.sparseType)))) {
                std::lock_guard<std::mutex> lock(failureMutex);
                overflowAt = std::min(overflowAt, r * k + c);
              }
          }
          // The second level, one column of G2 scales at a time.
          for (int64_t g = 0; g < perRow; ++g) {
            const int64_t second = b * perRow + g;
            quantizeScales(&s1[g], g2, perRow, scaleLevels, d.secondType,
                           s.secondScales[second], s.secondZeroPoints[second],
                           &s.firstScaleCodes[(b * g2) * perRow + g]);
          }
          // z1 and the codes, with the scales as the decoder will see them.
          for (int64_t rr = 0; rr < g2; ++rr) {
            const int64_t r = b * g2 + rr;
            for (int64_t g = 0; g < perRow; ++g) {
              const int64_t group = r * perRow + g, second = b * perRow + g;
              const double levels =
                  isW4Group(s.precisionMap, group) ? 15.0 : 3.0;
              const double scale =
                  s.secondScales[second] * (double(s.firstScaleCodes[group]) -
                                            s.secondZeroPoints[second]);
              const Range &range = ranges[rr * perRow + g];
              double z1 = 0;
              if (scale > 0) // centred: a scale decoded short clips both ends
                z1 = std::clamp(std::round(levels / 2 -
                                           (range.lo + range.hi) / (2 * scale)),
                                0.0, levels);
              s.firstZeroPoints[group] = uint8_t(z1);
              uint8_t *q = codes.data() + r * k + g * g1;
              const float *x = values + r * k + g * g1;
              for (int64_t i = 0; i < g1; ++i)
                q[i] = scale > 0
                           ? uint8_t(std::clamp(std::round(x[i] / scale + z1),
                                                0.0, levels))
                           : uint8_t(z1);
            }
          }
        }
      });
  if (overflowAt < n * k)
    return makeError("mixed2416: outlier (", overflowAt / k, ", ",
                     overflowAt % k, ") = ", values[overflowAt],
                     " is beyond the ", toString(d.sparseType), " range");

  // 4. Streams in group order, and the CSR of the outliers.
  const int64_t w2Groups = groups - w4Groups;
  s.w2Codes.assign(static_cast<size_t>(w2Groups * g1 / 4), 0);
  s.w4Codes.assign(static_cast<size_t>(w4Groups * g1 / 2), 0);
  int64_t w2At = 0, w4At = 0; // code index within each stream
  for (int64_t group = 0; group < groups; ++group) {
    const bool w4 = isW4Group(s.precisionMap, group);
    const unsigned bits = w4 ? 4 : 2;
    std::vector<uint8_t> &stream = w4 ? s.w4Codes : s.w2Codes;
    int64_t &at = w4 ? w4At : w2At;
    const uint8_t *q =
        codes.data() + (group / perRow) * k + (group % perRow) * g1;
    for (int64_t i = 0; i < g1; ++i, ++at)
      stream[(at * bits) / 8] |= uint8_t(q[i] << ((at * bits) % 8));
  }
  s.sparseRowPointers.assign(static_cast<size_t>(n + 1), 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int32_t c : outlierColumns[r]) {
      s.sparseColumns.push_back(c);
      s.sparseValues.push_back(
          roundToFormat(values[r * k + c], floatFormatOf(d.sparseType)));
    }
    s.sparseRowPointers[r + 1] = static_cast<int32_t>(s.sparseColumns.size());
  }
  QTENSOR_TRY(verifyMixed2416Streams(d, s));
  out.rates = mixed2416Rates(d, s);
  return out;
}

} // namespace qtensor::compiler
