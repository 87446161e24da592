//===- CodeRange.h - Integer code ranges and rounding policies --*- C++ -*-===//
//
// The integer lattice an affine quantizer maps onto (seed M8.1 0x02, 0x02B)
// and the tie rules that pick a lattice point (M8.1 0x02D). Both are part of
// the converter/kernel contract, so they live in one MLIR-free place.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_CODERANGE_H
#define QTENSOR_NUMERICS_CODERANGE_H

#include "qtensor/Numerics/Enums.h"
#include "qtensor/Support/Expected.h"

#include <cmath>
#include <cstdint>

namespace qtensor {

/// The inclusive range [qmin, qmax] of integer codes a format can store.
struct CodeRange {
  int64_t qmin = 0;
  int64_t qmax = 0;

  /// Number of distinct codes, qmax - qmin + 1 (0 for an empty range).
  uint64_t numLevels() const {
    return qmax < qmin ? 0 : static_cast<uint64_t>(qmax - qmin) + 1;
  }
  bool contains(int64_t q) const { return q >= qmin && q <= qmax; }
  /// Largest |q| over the range; bounds accumulator growth (M8.1 0x05B).
  uint64_t maxMagnitude() const;

  friend bool operator==(const CodeRange &a, const CodeRange &b) {
    return a.qmin == b.qmin && a.qmax == b.qmax;
  }
  friend bool operator!=(const CodeRange &a, const CodeRange &b) {
    return !(a == b);
  }
};

/// The code range of a `bits`-wide integer, 1 <= bits <= 32 (the seed
/// reference's limit, M8.1 0x0A):
///   unsigned:        [0, 2^b - 1]
///   signed, full:    [-2^(b-1), 2^(b-1) - 1]   (two's complement)
///   signed, narrow:  [-Q, Q] with Q = 2^(b-1) - 1 (restricted symmetric,
///                    M8.1 0x02B; the most negative code is left unused)
/// `narrow` is only meaningful for signed codes and needs bits >= 2 (a 1-bit
/// narrow range would be the single code 0).
Expected<CodeRange> codeRange(unsigned bits, bool isSigned, bool narrow);

/// Checks that a caller-built range is nonempty (qmin < qmax) and lies inside
/// what 32-bit codes can hold, [-2^31, 2^32 - 1]. Quantizers call this before
/// trusting a range they did not build themselves.
Status validateCodeRange(const CodeRange &range);

/// Rounds a step-unit value to an integer-valued double under `mode`
/// (M8.1 0x02D). NearestEven is implemented explicitly rather than through
/// std::nearbyint, so the result never depends on the caller's floating-point
/// environment (converter/kernel rounding parity, M8.1 0x0A). NaN and
/// infinities are returned unchanged.
double roundToInteger(double x, RoundingMode mode);

/// roundToInteger(x, NearestEven) for a finite x, inline for the
/// quantizers' per-value loops.
inline double roundHalfToEven(double x) {
  // From 2^52 on every double is an integer.
  if (!(std::fabs(x) < 4503599627370496.0))
    return x;
  // floor through the exact int64 truncation (no libm call on baseline
  // x86-64); x - floor(x) is exact, so the tie test is exact. No branch
  // depends on the value: weights round up or down at random, and a
  // mispredicted branch per value cost more than the arithmetic.
  const int64_t truncated = static_cast<int64_t>(x);
  const int64_t floorInt =
      truncated - int64_t(static_cast<double>(truncated) > x);
  const double lower = static_cast<double>(floorInt);
  const double fraction = x - lower;
  const bool up =
      (fraction > 0.5) | ((fraction == 0.5) & ((floorInt & 1) != 0));
  // The result is zero or has x's sign: copysign keeps the sign of zero as
  // std::nearbyint does (-0.4 -> -0.0).
  return std::copysign(static_cast<double>(floorInt + int64_t(up)), x);
}

} // namespace qtensor

#endif // QTENSOR_NUMERICS_CODERANGE_H
