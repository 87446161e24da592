//===- ReferenceGemm.cpp - Slow reference quantized linear ----------------===//
//
// Seed M8.1 0x05, 0x05A (group-wise partial accumulators, activation
// zero-point retained) and 0x05C (integer path equals the dequantized path).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/ReferenceGemm.h"

#include "NumericsDetail.h"

#include <cmath>

namespace qtensor {

using numerics_detail::addOverflow;
using numerics_detail::formatDouble;
using numerics_detail::mulOverflow;

namespace {

Status validateActivations(const QuantizedActivations &x) {
  if (x.rows <= 0 || x.cols <= 0)
    return makeError("activation shape [", x.rows, ", ", x.cols,
                     "] must be positive");
  int64_t elements;
  if (mulOverflow(x.rows, x.cols, elements))
    return makeError("activation shape [", x.rows, ", ", x.cols, "] overflows");
  if (x.codes.size() != static_cast<uint64_t>(elements))
    return makeError("activation codes hold ", x.codes.size(),
                     " values, expected M * K = ", elements);
  if (x.scales.size() != static_cast<uint64_t>(x.rows))
    return makeError("activation scales hold ", x.scales.size(),
                     " values, expected one per row (", x.rows, ")");
  if (!x.zeroPoints.empty() &&
      x.zeroPoints.size() != static_cast<uint64_t>(x.rows))
    return makeError("activation zero-points hold ", x.zeroPoints.size(),
                     " values, expected 0 (symmetric) or one per row (", x.rows,
                     ")");
  for (size_t m = 0; m < x.scales.size(); ++m)
    if (!std::isfinite(x.scales[m]))
      return makeError("activation scale of row ", m,
                       " is not finite: ", formatDouble(x.scales[m]));
  return Status::ok();
}

Status validateWeights(const GroupwiseQuantizedWeights &w, int64_t cols) {
  if (w.rows <= 0 || w.cols <= 0 || w.groupSize <= 0)
    return makeError("weight shape [", w.rows, ", ", w.cols,
                     "] with G=", w.groupSize, " must be positive");
  if (w.cols != cols)
    return makeError("weight K = ", w.cols,
                     " does not match activation K = ", cols);
  const int64_t numGroups = groupsPerRow(w.cols, w.groupSize);
  if (w.numGroupsPerRow != numGroups)
    return makeError("weight numGroupsPerRow is ", w.numGroupsPerRow,
                     " but ceil(K / G) = ", numGroups);
  int64_t elements, metaCount;
  if (mulOverflow(w.rows, w.cols, elements) ||
      mulOverflow(w.rows, numGroups, metaCount))
    return makeError("weight shape [", w.rows, ", ", w.cols, "] overflows");
  if (w.codes.size() != static_cast<uint64_t>(elements))
    return makeError("weight codes hold ", w.codes.size(),
                     " values, expected N * K = ", elements);
  if (w.scales.size() != static_cast<uint64_t>(metaCount))
    return makeError("weight scales hold ", w.scales.size(),
                     " values, expected N * ceil(K / G) = ", metaCount);
  if (!w.zeroPoints.empty() &&
      w.zeroPoints.size() != static_cast<uint64_t>(metaCount))
    return makeError(
        "weight zero-points hold ", w.zeroPoints.size(),
        " values, expected 0 (symmetric) or N * ceil(K / G) = ", metaCount);
  for (size_t i = 0; i < w.scales.size(); ++i)
    if (!std::isfinite(w.scales[i]))
      return makeError("weight scale of row ", int64_t(i) / numGroups,
                       ", group ", int64_t(i) % numGroups,
                       " is not finite: ", formatDouble(w.scales[i]));
  return Status::ok();
}

Status validateOperands(const QuantizedActivations &x,
                        const GroupwiseQuantizedWeights &w) {
  if (Status status = validateActivations(x); !status)
    return status;
  return validateWeights(w, x.cols);
}

} // namespace

Expected<std::vector<double>>
referenceQuantizedLinear(const QuantizedActivations &x,
                         const GroupwiseQuantizedWeights &w) {
  if (Status status = validateOperands(x, w); !status)
    return status.error();
  const int64_t M = x.rows, N = w.rows, K = x.cols, G = w.groupSize;
  const int64_t numGroups = w.numGroupsPerRow;

  std::vector<double> y(static_cast<size_t>(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m) {
    const int64_t zx = x.zeroPoints.empty() ? 0 : x.zeroPoints[m];
    const int32_t *qx = x.codes.data() + m * K;
    for (int64_t n = 0; n < N; ++n) {
      const int32_t *qw = w.codes.data() + n * K;
      double sum = 0.0;
      for (int64_t g = 0; g < numGroups; ++g) {
        const size_t meta = static_cast<size_t>(n * numGroups + g);
        const int64_t zw = w.zeroPoints.empty() ? 0 : w.zeroPoints[meta];
        const int64_t lo = g * G;
        const int64_t hi = K - lo > G ? lo + G : K; // short tail group
        // Exact partial accumulator for this group only: the weight scale
        // changes at the group boundary, so it cannot leave the reduction
        // (M8.1 0x05A). The activation zero-point stays in every term.
        int64_t acc = 0;
        for (int64_t k = lo; k < hi; ++k) {
          int64_t product;
          if (mulOverflow(int64_t(qx[k]) - zx, int64_t(qw[k]) - zw, product) ||
              addOverflow(acc, product, acc))
            return makeError("INT64 accumulator overflows at row m=", m,
                             ", output n=", n, ", group ", g, ", column ", k);
        }
        sum += x.scales[m] * w.scales[meta] * static_cast<double>(acc);
      }
      y[static_cast<size_t>(m * N + n)] = sum;
    }
  }
  return y;
}

Expected<std::vector<double>>
referenceDequantizedLinear(const QuantizedActivations &x,
                           const GroupwiseQuantizedWeights &w) {
  if (Status status = validateOperands(x, w); !status)
    return status.error();
  const int64_t M = x.rows, N = w.rows, K = x.cols, G = w.groupSize;
  const int64_t numGroups = w.numGroupsPerRow;

  // Full dequantization to double (M8.1 0x06B family 1), then a plain GEMM.
  std::vector<double> xHat(static_cast<size_t>(M * K));
  for (int64_t m = 0; m < M; ++m) {
    const int64_t zx = x.zeroPoints.empty() ? 0 : x.zeroPoints[m];
    for (int64_t k = 0; k < K; ++k)
      xHat[m * K + k] =
          x.scales[m] * static_cast<double>(int64_t(x.codes[m * K + k]) - zx);
  }
  std::vector<double> wHat(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      const size_t meta = static_cast<size_t>(n * numGroups + k / G);
      const int64_t zw = w.zeroPoints.empty() ? 0 : w.zeroPoints[meta];
      wHat[n * K + k] = w.scales[meta] *
                        static_cast<double>(int64_t(w.codes[n * K + k]) - zw);
    }
  }

  std::vector<double> y(static_cast<size_t>(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double sum = 0.0;
      for (int64_t k = 0; k < K; ++k)
        sum += xHat[m * K + k] * wHat[n * K + k];
      y[static_cast<size_t>(m * N + n)] = sum;
    }
  return y;
}

} // namespace qtensor
