//===- Affine.cpp - Uniform affine quantization of scalars ----------------===//
//
// The affine map of seed M8.1 0x02 and the 0x0A reference quantizer.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/Affine.h"

#include "NumericsDetail.h"

#include <cmath>

namespace qtensor {

using numerics_detail::formatDouble;

namespace {

std::string rangeText(const CodeRange &range) {
  return "[" + std::to_string(range.qmin) + ", " + std::to_string(range.qmax) +
         "]";
}

Status validateParams(AffineParams params, CodeRange range) {
  if (!std::isfinite(params.scale) || params.scale <= 0.0)
    return makeError("scale must be positive and finite, got ",
                     formatDouble(params.scale));
  if (!range.contains(params.zeroPoint))
    return makeError("zero-point ", params.zeroPoint,
                     " lies outside the code range ", rangeText(range));
  return Status::ok();
}

} // namespace

Expected<AffineParams> affineParamsFromRange(double rmin, double rmax,
                                             CodeRange range) {
  if (Status status = validateCodeRange(range); !status)
    return status.error();
  if (!std::isfinite(rmin))
    return makeError("rmin must be finite, got ", formatDouble(rmin));
  if (!std::isfinite(rmax))
    return makeError("rmax must be finite, got ", formatDouble(rmax));
  double width = rmax - rmin;
  if (!std::isfinite(width) || width <= 0.0)
    return makeError("quantization range [", formatDouble(rmin), ", ",
                     formatDouble(rmax), "] must have positive finite width");
  // qmax - qmin <= 2^32 - 1 after validation: exact as a double.
  double scale = width / static_cast<double>(range.qmax - range.qmin);
  if (!std::isfinite(scale) || scale <= 0.0)
    return makeError("scale underflow or overflow: (rmax - rmin) / (qmax - "
                     "qmin) = ",
                     formatDouble(scale));
  double zeroReal = static_cast<double>(range.qmin) - rmin / scale;
  if (!std::isfinite(zeroReal))
    return makeError("zero-point calculation qmin - rmin / scale is not "
                     "finite (rmin ",
                     formatDouble(rmin), ", scale ", formatDouble(scale), ")");
  // Ties to even, like the seed's Python `round`; clamp in double before the
  // integer conversion so a far-away zeroReal cannot overflow int64.
  double zeroRounded = roundToInteger(zeroReal, RoundingMode::NearestEven);
  int64_t zero;
  if (zeroRounded <= static_cast<double>(range.qmin))
    zero = range.qmin;
  else if (zeroRounded >= static_cast<double>(range.qmax))
    zero = range.qmax;
  else
    zero = static_cast<int64_t>(zeroRounded);
  double lower = scale * static_cast<double>(range.qmin - zero);
  double upper = scale * static_cast<double>(range.qmax - zero);
  if (!std::isfinite(lower) || !std::isfinite(upper))
    return makeError("decoded endpoint overflow: scale ", formatDouble(scale),
                     " with zero-point ", zero, " over ", rangeText(range));
  return AffineParams{scale, zero};
}

Expected<AffineParams> symmetricParams(double absMax, CodeRange range) {
  if (Status status = validateCodeRange(range); !status)
    return status.error();
  if (range.qmin >= 0 || range.qmax <= 0)
    return makeError("symmetric quantization needs a code range straddling "
                     "zero, got ",
                     rangeText(range));
  if (!std::isfinite(absMax) || absMax <= 0.0)
    return makeError("symmetric absMax must be positive and finite, got ",
                     formatDouble(absMax));
  double scale = absMax / static_cast<double>(range.qmax);
  if (!std::isfinite(scale) || scale <= 0.0)
    return makeError("scale underflow or overflow: absMax / qmax = ",
                     formatDouble(scale));
  double lower = scale * static_cast<double>(range.qmin);
  if (!std::isfinite(lower))
    return makeError("decoded endpoint overflow: scale ", formatDouble(scale),
                     " over ", rangeText(range));
  return AffineParams{scale, 0};
}

Status validateQuantizeParams(AffineParams params, CodeRange range) {
  if (Status status = validateCodeRange(range); !status)
    return status;
  return validateParams(params, range);
}

Expected<int64_t> quantizeValue(double x, AffineParams params, CodeRange range,
                                RoundingMode rounding,
                                SaturationMode saturation) {
  if (Status status = validateQuantizeParams(params, range); !status)
    return status.error();
  if (!std::isfinite(x))
    return makeError("cannot quantize the nonfinite value ", formatDouble(x));
  if (saturation == SaturationMode::Clamp)
    return quantizeClamped(x, params, range, rounding);

  // Reject: round in step units, then translate by z. An overflowing x / s
  // gives +-inf, which the range test below reports.
  double code = roundToInteger(x / params.scale, rounding) +
                static_cast<double>(params.zeroPoint);
  if (code < static_cast<double>(range.qmin) ||
      code > static_cast<double>(range.qmax))
    return makeError("value ", formatDouble(x), " quantizes to code ",
                     formatDouble(code), ", outside the code range ",
                     rangeText(range));
  return static_cast<int64_t>(code);
}

double dequantizeValue(int64_t q, AffineParams params) {
  return params.scale * static_cast<double>(q - params.zeroPoint);
}

Expected<AffineQuantized> affineQuantize(const std::vector<double> &x,
                                         unsigned bits, double rmin,
                                         double rmax, bool isSigned) {
  // Same check order as the seed: bits, input, declared range.
  if (bits < 1 || bits > 32)
    return makeError("bits must be an integer in [1, 32], got ", bits);
  if (x.empty())
    return makeError("x must be a nonempty sequence");
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      return makeError("x[", i, "] must be finite, got ", formatDouble(x[i]));
  Expected<CodeRange> range = codeRange(bits, isSigned, /*narrow=*/false);
  if (!range)
    return range.error();
  Expected<AffineParams> params = affineParamsFromRange(rmin, rmax, *range);
  if (!params)
    return params.error();

  AffineQuantized result;
  result.scale = params->scale;
  result.zeroPoint = params->zeroPoint;
  result.codes.reserve(x.size());
  result.reconstructed.reserve(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    Expected<int64_t> q =
        quantizeValue(x[i], *params, *range, RoundingMode::NearestEven,
                      SaturationMode::Clamp);
    if (!q)
      return makeError("x[", i, "]: ", q.message());
    result.codes.push_back(*q);
    result.reconstructed.push_back(dequantizeValue(*q, *params));
  }
  return result;
}

} // namespace qtensor
