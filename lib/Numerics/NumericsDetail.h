//===- NumericsDetail.h - Private helpers for lib/Numerics ------*- C++ -*-===//
//
// Formatting and overflow-checked arithmetic shared by the Numerics sources.
// Not installed: nothing outside lib/Numerics includes it.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_NUMERICSDETAIL_H
#define QTENSOR_NUMERICS_NUMERICSDETAIL_H

#include <cstdint>
#include <string>

namespace qtensor {
namespace numerics_detail {

/// Shortest decimal text that reads back as the same double ("0.16", not
/// "0.160000"), so error messages show the exact value that was rejected.
std::string formatDouble(double value);

/// a * b and a + b, returning true on overflow (the result is then unusable).
inline bool mulOverflow(uint64_t a, uint64_t b, uint64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}
inline bool addOverflow(uint64_t a, uint64_t b, uint64_t &out) {
  return __builtin_add_overflow(a, b, &out);
}
inline bool mulOverflow(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}
inline bool addOverflow(int64_t a, int64_t b, int64_t &out) {
  return __builtin_add_overflow(a, b, &out);
}

/// ceil(a / b) for a >= 0, b > 0 without forming a + b - 1.
inline uint64_t ceilDiv(uint64_t a, uint64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

} // namespace numerics_detail
} // namespace qtensor

#endif // QTENSOR_NUMERICS_NUMERICSDETAIL_H
