//===- ActivationQuant.cpp - Dynamic per-token int8 activations -----------===//

#include "qtensor/Numerics/ActivationQuant.h"

#include <algorithm>
#include <cmath>

namespace qtensor {

Expected<QuantizedActivations> quantizeActivationsPerToken(const float *x,
                                                           int64_t rows,
                                                           int64_t cols,
                                                           bool symmetric) {
  if (rows <= 0 || cols <= 0)
    return makeError("activation shape [", rows, ", ", cols,
                     "] must be positive");
  if (rows > (int64_t(1) << 40) / cols)
    return makeError("activation shape [", rows, ", ", cols,
                     "] has more than 2^40 values");
  QuantizedActivations q;
  q.rows = rows;
  q.cols = cols;
  q.codes.resize(static_cast<size_t>(rows * cols));
  for (int64_t m = 0; m < rows; ++m) {
    const float *row = x + m * cols;
    float lo = 0.0f, hi = 0.0f, amax = 0.0f;
    for (int64_t k = 0; k < cols; ++k) {
      if (!std::isfinite(row[k]))
        return makeError("activation row ", m, " column ", k, " is not finite");
      lo = std::min(lo, row[k]);
      hi = std::max(hi, row[k]);
      amax = std::max(amax, std::fabs(row[k]));
    }
    float s;
    int32_t z = 0;
    if (symmetric) {
      s = amax == 0.0f ? 1.0f : amax / 127.0f;
    } else {
      const float range = hi - lo;
      s = range == 0.0f ? 1.0f : range / 255.0f;
      z = static_cast<int32_t>(
          std::clamp(roundHalfEvenF32(-lo / s), 0.0f, 255.0f));
      q.zeroPoints.push_back(z);
    }
    q.scales.push_back(static_cast<double>(s));
    const float qmin = symmetric ? -127.0f : 0.0f;
    const float qmax = symmetric ? 127.0f : 255.0f;
    for (int64_t k = 0; k < cols; ++k) {
      float v = roundHalfEvenF32(row[k] / s) + static_cast<float>(z);
      q.codes[static_cast<size_t>(m * cols + k)] =
          static_cast<int32_t>(std::clamp(v, qmin, qmax));
    }
  }
  return q;
}

std::vector<double> blockQuantizedActivations(const std::vector<double> &x,
                                              int64_t rows, int64_t cols) {
  std::vector<double> out(x.size());
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t first = 0; first < cols; first += kActivationBlock) {
      const int64_t last = std::min(cols, first + kActivationBlock);
      const double *in = x.data() + m * cols;
      double *q = out.data() + m * cols;
      float amax = 0.0f;
      bool finite = true;
      for (int64_t k = first; k < last; ++k) {
        finite = finite && std::isfinite(in[k]);
        amax = std::max(amax, std::fabs(static_cast<float>(in[k])));
      }
      // The kernel's scale, and with it every output, is then not finite.
      if (!finite) {
        std::fill(q + first, q + last, std::nan(""));
        continue;
      }
      const float s = amax == 0.0f ? 1.0f : amax / 127.0f;
      for (int64_t k = first; k < last; ++k) {
        const float v = std::clamp(
            roundHalfEvenF32(static_cast<float>(in[k]) / s), -127.0f, 127.0f);
        q[k] = static_cast<double>(s) * static_cast<double>(v);
      }
    }
  return out;
}

std::vector<double> tokenQuantizedActivations(const std::vector<double> &x,
                                              int64_t rows, int64_t cols,
                                              bool symmetric) {
  std::vector<double> out(x.size());
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t m = 0; m < rows; ++m) {
    const double *in = x.data() + m * cols;
    double *q = out.data() + m * cols;
    bool finite = true;
    for (int64_t k = 0; k < cols; ++k) {
      finite = finite && std::isfinite(in[k]);
      row[static_cast<size_t>(k)] = static_cast<float>(in[k]);
    }
    // The kernel's scale, and with it every output, is then not finite.
    if (!finite) {
      std::fill(q, q + cols, std::nan(""));
      continue;
    }
    Expected<QuantizedActivations> a =
        quantizeActivationsPerToken(row.data(), 1, cols, symmetric);
    if (!a) { // no columns: nothing to quantize
      std::fill(q, q + cols, std::nan(""));
      continue;
    }
    const double s = a->scales[0];
    const double z = a->zeroPoints.empty() ? 0.0 : a->zeroPoints[0];
    for (int64_t k = 0; k < cols; ++k)
      q[k] = s * (static_cast<double>(a->codes[static_cast<size_t>(k)]) - z);
  }
  return out;
}

} // namespace qtensor
