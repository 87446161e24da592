//===- CheckedMath.h - Overflow-checked size arithmetic ---------*- C++ -*-===//
//
// Every size computed from an untrusted field goes through these (seed M8.9
// 0x05A: prove the multiplication cannot overflow before allocating).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_CHECKEDMATH_H
#define QTENSOR_SUPPORT_CHECKEDMATH_H

#include <cstdint>
#include <optional>

namespace qtensor {

inline std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

inline std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// ceil(a / b) for b > 0 without the a + b - 1 overflow.
inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/// Rounds `offset` up to a multiple of `alignment` (> 0); nullopt on overflow.
/// An offset that is already aligned is unchanged (seed M8.9 0x02B).
inline std::optional<uint64_t> alignUp(uint64_t offset, uint64_t alignment) {
  uint64_t rem = offset % alignment;
  if (rem == 0)
    return offset;
  return checkedAdd(offset, alignment - rem);
}

/// Product of `dims` times `elementBytes`; nullopt when any step overflows or
/// the result exceeds `limit`.
template <typename Range>
std::optional<uint64_t> checkedElementCount(const Range &dims,
                                            uint64_t limit = UINT64_MAX) {
  uint64_t count = 1;
  for (auto d : dims) {
    auto next = checkedMul(count, static_cast<uint64_t>(d));
    if (!next || *next > limit)
      return std::nullopt;
    count = *next;
  }
  return count;
}

} // namespace qtensor

#endif // QTENSOR_SUPPORT_CHECKEDMATH_H
