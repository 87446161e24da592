//===- CodeRange.cpp - Integer code ranges and rounding policies ----------===//
//
// Code ranges (seed M8.1 0x02B, 0x0A) and tie rules (M8.1 0x02D).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/CodeRange.h"

#include "NumericsDetail.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace qtensor {

namespace numerics_detail {
std::string formatDouble(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char buffer[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  return buffer;
}
} // namespace numerics_detail

uint64_t CodeRange::maxMagnitude() const {
  // 0 - (uint64_t)q is |q| even for INT64_MIN.
  uint64_t lo =
      qmin < 0 ? 0 - static_cast<uint64_t>(qmin) : static_cast<uint64_t>(qmin);
  uint64_t hi =
      qmax < 0 ? 0 - static_cast<uint64_t>(qmax) : static_cast<uint64_t>(qmax);
  return lo > hi ? lo : hi;
}

Expected<CodeRange> codeRange(unsigned bits, bool isSigned, bool narrow) {
  if (bits < 1 || bits > 32)
    return makeError("code width must be in [1, 32] bits, got ", bits);
  if (narrow && !isSigned)
    return makeError("the narrow range [-Q, Q] is a signed (symmetric) range; "
                     "unsigned codes cannot use it");
  if (narrow && bits == 1)
    return makeError("a narrow 1-bit range [-Q, Q] has Q = 0 and holds only "
                     "the code 0; use at least 2 bits");
  if (!isSigned)
    return CodeRange{0, static_cast<int64_t>((uint64_t(1) << bits) - 1)};
  int64_t half = int64_t(1) << (bits - 1);
  if (narrow)
    return CodeRange{-(half - 1), half - 1};
  return CodeRange{-half, half - 1};
}

Status validateCodeRange(const CodeRange &range) {
  if (range.qmin >= range.qmax)
    return makeError("code range [", range.qmin, ", ", range.qmax,
                     "] must have qmin < qmax");
  if (range.qmin < -(int64_t(1) << 31) ||
      range.qmax > int64_t((uint64_t(1) << 32) - 1))
    return makeError("code range [", range.qmin, ", ", range.qmax,
                     "] does not fit 32-bit codes [-2^31, 2^32 - 1]");
  return Status::ok();
}

double roundToInteger(double x, RoundingMode mode) {
  if (!std::isfinite(x))
    return x;
  switch (mode) {
  case RoundingMode::NearestAway:
    return std::round(x);
  case RoundingMode::TowardZero:
    return std::trunc(x);
  case RoundingMode::NearestEven:
    break;
  }
  return roundHalfToEven(x);
}

} // namespace qtensor
