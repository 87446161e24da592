//===- QuantizeFP4.cpp - Float weights to MXFP4 and NVFP4 -----------------===//

#include "QuantizeFP4.h"

#include "qtensor/Descriptor/ScaleFormat.h"
#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace qtensor::compiler {
namespace {

ScaleFormat scaleFormatOf(FP4Format f) {
  return f == FP4Format::MXFP4 ? ScaleFormat::E8M0 : ScaleFormat::UE4M3;
}

/// The E2M1 code nearest y (ties to the even code, i.e. the even
/// mantissa), saturating at +-6. Code 8 (zero with the sign bit) is never
/// produced.
int32_t nearestE2M1(double y) {
  static const double kMagnitudes[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  const double a = std::fabs(y);
  int best = 0;
  for (int i = 1; i < 8; ++i) {
    const double d = std::fabs(a - kMagnitudes[i]),
                 e = std::fabs(a - kMagnitudes[best]);
    if (d < e || (d == e && i % 2 == 0))
      best = i;
  }
  return best == 0 ? 0 : best | (y < 0 ? 8 : 0);
}

/// One group: its codes under scale code `c`, and their squared error.
double encodeGroup(ScaleFormat format, uint32_t c, const float *x, int64_t g,
                   int32_t *codes) {
  const double s = *decodeScaleCode(format, c);
  const std::vector<float> &table = codebookValues(Codebook::E2M1);
  double error = 0;
  for (int64_t i = 0; i < g; ++i) {
    codes[i] = s > 0 ? nearestE2M1(double(x[i]) / s) : 0;
    const double e = s * double(table[size_t(codes[i])]) - double(x[i]);
    error += e * e;
  }
  return error;
}

/// The scale codes worth trying for a group whose largest magnitude is
/// `amax` (> 0): the nearest to amax / 6 (for MXFP4, OCP's rule) and the
/// next one up, which trades a coarser step for no clipping.
std::vector<uint32_t> candidates(FP4Format f, double amax) {
  const ScaleFormat format = scaleFormatOf(f);
  uint32_t first;
  if (f == FP4Format::MXFP4) {
    const int exp = std::ilogb(amax) - 2; // floor(log2 amax) - emax(E2M1)
    first = uint32_t(std::clamp(exp + 127, 0, 254));
  } else {
    first = nearestScaleCode(format, amax / 6.0);
  }
  std::vector<uint32_t> out{first};
  if (first < maxScaleCode(format))
    out.push_back(first + 1);
  return out;
}

} // namespace

const char *toString(FP4Format f) {
  return f == FP4Format::MXFP4 ? "mxfp4" : "nvfp4";
}

int64_t fp4GroupSize(FP4Format f) { return f == FP4Format::MXFP4 ? 32 : 16; }

QuantizedTensorDescriptor fp4Logical(FP4Format f, int64_t n, int64_t k,
                                     FloatType elementType) {
  QuantizedTensorDescriptor logical;
  logical.descriptor = e2m1GroupDescriptor(fp4GroupSize(f), scaleFormatOf(f));
  logical.shape = {n, k};
  logical.elementType = elementType;
  return logical;
}

Expected<FP4Quantized> quantizeFP4(FP4Format f, const float *values, int64_t n,
                                   int64_t k) {
  const int64_t g = fp4GroupSize(f);
  if (k % g != 0)
    return makeError(toString(f), " stores groups of ", g, " along K; K = ", k,
                     " is not a multiple");
  const ScaleFormat format = scaleFormatOf(f);
  FP4Quantized out;
  out.codes.resize(size_t(n) * size_t(k));
  out.scales.resize(size_t(n) * size_t(k / g));
  std::mutex failureMutex;
  int64_t failedAt = n * k;
  defaultThreadPool().parallelRanges(
      n, n * k, int64_t(1) << 16, [&](int64_t r0, int64_t r1) {
        std::vector<int32_t> trial(size_t(g), 0);
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t j = 0; j < k / g; ++j) {
            const float *x = values + size_t(r) * size_t(k) + size_t(j * g);
            int32_t *codes = out.codes.data() + (x - values);
            double amax = 0;
            for (int64_t i = 0; i < g; ++i) {
              if (!std::isfinite(x[i])) {
                std::lock_guard<std::mutex> lock(failureMutex);
                failedAt = std::min(failedAt, r * k + j * g + i);
                return;
              }
              amax = std::max(amax, std::fabs(double(x[i])));
            }
            uint32_t chosen = 0;
            if (amax > 0) {
              double best = INFINITY;
              for (uint32_t c : candidates(f, amax)) {
                const double e = encodeGroup(format, c, x, g, trial.data());
                if (e < best) {
                  best = e;
                  chosen = c;
                  std::copy(trial.begin(), trial.end(), codes);
                }
              }
            } else {
              std::fill(codes, codes + g, 0);
            }
            out.scales[size_t(r * (k / g) + j)] =
                *decodeScaleCode(format, chosen);
          }
      });
  if (failedAt < n * k)
    return makeError("element ", failedAt, " (row ", failedAt / k, ", column ",
                     failedAt % k, ") is not finite");
  return out;
}

std::vector<float> dequantizeFP4(const FP4Quantized &q, int64_t k) {
  const std::vector<float> &table = codebookValues(Codebook::E2M1);
  const size_t groups = k ? q.scales.size() / (q.codes.size() / size_t(k)) : 0;
  const size_t g = groups ? size_t(k) / groups : 1;
  std::vector<float> out(q.codes.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = q.scales[i / g] * table[size_t(q.codes[i])];
  return out;
}

} // namespace qtensor::compiler
