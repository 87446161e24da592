//===- QuantizeFP8.cpp - Float weights to FP8 (E4M3) codes ----------------===//

#include "QuantizeFP8.h"

#include "qtensor/Descriptor/ScaleFormat.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace qtensor::compiler {
namespace {

/// The E4M3 code nearest y: the positive codes are unsigned e4m3's (ordered
/// by value, searched by nearestScaleCode), the sign is bit 7. |y| at or
/// below half the smallest subnormal (2^-10) is +0.
int32_t nearestE4M3(double y) {
  const double a = std::fabs(y);
  if (!(a > std::ldexp(1.0, -10)))
    return 0;
  const int32_t magnitude = nearestScaleCode(ScaleFormat::UE4M3, a);
  return y < 0 ? magnitude | 0x80 : magnitude;
}

} // namespace

QuantizedTensorDescriptor fp8Logical(int64_t n, int64_t k,
                                     FloatType elementType) {
  QuantizedTensorDescriptor logical;
  AffineDescriptor &d = logical.descriptor;
  d.code = CodeType{8, false};
  d.scheme = QuantScheme::Symmetric;
  d.zeroPoint = ZeroPointKind::None;
  d.granularity = Granularity::PerAxis;
  d.axis = 0;
  d.scaleType =
      elementType == FloatType::BF16 ? FloatType::BF16 : FloatType::F16;
  d.codebook = Codebook::E4M3;
  logical.shape = {n, k};
  logical.elementType = elementType;
  return logical;
}

Expected<FP8Quantized> quantizeFP8(const float *values, int64_t n, int64_t k,
                                   FloatType scaleType) {
  const FloatFormat format =
      scaleType == FloatType::BF16 ? FloatFormat::BF16 : FloatFormat::F16;
  // The smallest positive value of the scale dtype (subnormal).
  const double tiny = std::ldexp(1.0, format == FloatFormat::BF16 ? -133 : -24);
  FP8Quantized out;
  out.codes.resize(size_t(n) * size_t(k));
  out.scales.resize(size_t(n));
  std::mutex failureMutex;
  int64_t failedAt = n * k;
  defaultThreadPool().parallelRanges(
      n, n * k, int64_t(1) << 16, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const float *x = values + size_t(r) * size_t(k);
          double amax = 0;
          for (int64_t i = 0; i < k; ++i) {
            if (!std::isfinite(x[i])) {
              std::lock_guard<std::mutex> lock(failureMutex);
              failedAt = std::min(failedAt, r * k + i);
              return;
            }
            amax = std::max(amax, std::fabs(double(x[i])));
          }
          double s = amax > 0 ? roundToFormat(amax / 448.0, format) : 1.0;
          if (s <= 0)
            s = tiny;
          out.scales[size_t(r)] = float(s);
          int32_t *codes = out.codes.data() + size_t(r) * size_t(k);
          for (int64_t i = 0; i < k; ++i)
            codes[i] = nearestE4M3(double(x[i]) / s);
        }
      });
  if (failedAt < n * k)
    return makeError("element ", failedAt, " (row ", failedAt / k, ", column ",
                     failedAt % k, ") is not finite");
  return out;
}

std::vector<float> dequantizeFP8(const FP8Quantized &q, int64_t k) {
  const std::vector<float> &table = codebookValues(Codebook::E4M3);
  std::vector<float> out(q.codes.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = q.scales[i / size_t(k)] * table[size_t(q.codes[i])];
  return out;
}

} // namespace qtensor::compiler
