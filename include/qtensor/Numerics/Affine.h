//===- Affine.h - Uniform affine quantization of scalars --------*- C++ -*-===//
//
// The scalar affine map of seed M8.1 0x02:
//   s     = (r_max - r_min) / (q_max - q_min)
//   z     = clamp(round(q_min - r_min / s), q_min, q_max)
//   q     = clamp(round(x / s) + z, q_min, q_max)
//   x_hat = s * (q - z)
// plus the symmetric special case (0x02B) and a port of the 0x0A reference
// quantizer, which is the oracle the tests pin down.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_AFFINE_H
#define QTENSOR_NUMERICS_AFFINE_H

#include "qtensor/Numerics/CodeRange.h"
#include "qtensor/Numerics/Enums.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <vector>

namespace qtensor {

/// One (scale, zero-point) pair: x_hat = scale * (q - zeroPoint).
struct AffineParams {
  double scale = 1.0;
  int64_t zeroPoint = 0;
};

/// Parameters mapping the declared real range [rmin, rmax] onto `range`,
/// exactly as the seed reference computes them (M8.1 0x0A): rmin/rmax finite,
/// rmax - rmin finite and positive, the scale positive and finite (no
/// underflow to 0), q_min - r_min / s finite, and both decoded endpoints
/// s * (q_min - z) and s * (q_max - z) finite. The zero-point rounds ties to
/// even (Python `round`) and is clamped into the code range, which may shift
/// the decoded endpoints (M8.1 0x02A, 0x02C). Each failure says which check.
Expected<AffineParams> affineParamsFromRange(double rmin, double rmax,
                                             CodeRange range);

/// Symmetric parameters (M8.1 0x02B): scale = absMax / qmax, zero-point 0.
/// Intended for the narrow range [-Q, Q]; the full two's-complement range is
/// accepted too (its extra negative code is then simply never reached from
/// in-range values). absMax must be finite and positive and the range must
/// straddle zero (qmin < 0 < qmax).
Expected<AffineParams> symmetricParams(double absMax, CodeRange range);

/// Quantizes one value: q = round(x / s) + z under `rounding`, then either
/// saturates to [qmin, qmax] (Clamp: saturation happens after rounding, never
/// as a pre-clamp to [rmin, rmax], M8.1 0x0A) or reports an error (Reject).
/// Under Clamp, values at or beyond the decoded endpoints saturate early, so
/// huge finite outliers never overflow x / s (as the seed reference does).
/// A nonfinite x is an error; so are invalid params (scale not finite and
/// positive, zero-point outside the range).
Expected<int64_t> quantizeValue(double x, AffineParams params, CodeRange range,
                                RoundingMode rounding,
                                SaturationMode saturation);

/// What quantizeValue checks besides x: the range, and params whose scale
/// is finite and positive and whose zero-point lies in the range. A loop
/// over many values under one (params, range) checks once, then calls
/// quantizeClamped.
Status validateQuantizeParams(AffineParams params, CodeRange range);

/// quantizeValue(x, params, range, rounding, Clamp) for a finite x and
/// params and range that passed validateQuantizeParams, with no checks.
inline int64_t quantizeClamped(double x, AffineParams params, CodeRange range,
                               RoundingMode rounding) {
  // Early saturation at the decoded endpoints, as in the seed reference:
  // x / s of a huge finite outlier could overflow, and the result is the
  // same as round-then-clamp because the rounding is monotone.
  const double lower =
      params.scale * static_cast<double>(range.qmin - params.zeroPoint);
  const double upper =
      params.scale * static_cast<double>(range.qmax - params.zeroPoint);
  if (x <= lower)
    return range.qmin;
  if (x >= upper)
    return range.qmax;
  // Round in step units first, then translate by z (ties are decided before
  // the zero-point is added, M8.1 0x0A).
  const double step = x / params.scale;
  const double code =
      (rounding == RoundingMode::NearestEven ? roundHalfToEven(step)
                                             : roundToInteger(step, rounding)) +
      static_cast<double>(params.zeroPoint);
  if (code < static_cast<double>(range.qmin))
    return range.qmin;
  if (code > static_cast<double>(range.qmax))
    return range.qmax;
  return static_cast<int64_t>(code);
}

/// x_hat = scale * (q - zeroPoint) (M8.1 0x02).
double dequantizeValue(int64_t q, AffineParams params);

/// Result of the reference quantizer: one code and one reconstruction per
/// input value, plus the chosen parameters so a shifted endpoint stays
/// visible (M8.1 0x0A).
struct AffineQuantized {
  std::vector<int64_t> codes;
  double scale = 0.0;
  int64_t zeroPoint = 0;
  std::vector<double> reconstructed;
};

/// Port of the seed's `affine_quantize(x, bits, rmin, rmax, signed)`
/// (M8.1 0x0A): a caller-declared range, bits in [1, 32], the full unsigned
/// or two's-complement code range (not the narrow [-Q, Q] policy), ties to
/// even, saturation after rounding. Empty input, nonfinite values (the error
/// names the index) and degenerate ranges are rejected, not repaired.
Expected<AffineQuantized> affineQuantize(const std::vector<double> &x,
                                         unsigned bits, double rmin,
                                         double rmax, bool isSigned);

} // namespace qtensor

#endif // QTENSOR_NUMERICS_AFFINE_H
