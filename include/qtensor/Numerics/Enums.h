//===- Enums.h - Numerical policy enums shared by every layer ---*- C++ -*-===//
//
// The policies that make a quantized tensor reproducible (seed M8.1 0x0B): how
// ties round, what happens past the code range, how signed codes are stored.
// The dialect's ODS enums and the manifest JSON spell these same values.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_ENUMS_H
#define QTENSOR_NUMERICS_ENUMS_H

#include <cstdint>

namespace qtensor {

/// How a step-unit value exactly between two integers is rounded (M8.1 0x02D).
enum class RoundingMode : uint8_t {
  NearestEven, ///< ties to even (IEEE default; the seed reference quantizer)
  NearestAway, ///< ties away from zero (C `round`)
  TowardZero,  ///< truncation
};

/// What quantize does with a value whose rounded code falls outside the range.
enum class SaturationMode : uint8_t {
  Clamp,  ///< saturate to [qmin, qmax] after rounding (M8.1 0x0A)
  Reject, ///< report an error naming the value's index
};

/// How signed codes are stored in their bit field.
enum class SignedEncoding : uint8_t {
  TwosComplement, ///< e.g. -1 in 4 bits is 0xF
  OffsetBinary,   ///< stored = code + 2^(b-1); ggml Q4_0's "q - 8"
};

/// Order of sub-byte codes inside a byte (the nibble order is part of the ABI).
enum class BitOrder : uint8_t {
  LsbFirst, ///< the first code occupies the least significant bits
  MsbFirst, ///< the first code occupies the most significant bits
};

} // namespace qtensor

#endif // QTENSOR_NUMERICS_ENUMS_H
