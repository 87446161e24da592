//===- FloatFormats.cpp - Rounding to the stored float formats ------------===//

#include "qtensor/Numerics/FloatFormats.h"

#include <cstring>

namespace qtensor {
namespace {
uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}
} // namespace

uint16_t floatToHalfBits(float value) {
  uint32_t x = bitsOf(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t exponent = (x >> 23) & 0xFFu;
  uint32_t mantissa = x & 0x7FFFFFu;
  if (exponent == 0xFF) // inf or NaN (keep NaN quiet and non-zero)
    return sign | 0x7C00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u);
  int32_t e = static_cast<int32_t>(exponent) - 127 + 15;
  if (e >= 31)
    return sign | 0x7C00u; // overflow to inf
  if (e <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit bit into
    // place, rounding to nearest even on the bits shifted out.
    if (e < -10)
      return sign; // below half the smallest subnormal: rounds to zero
    uint32_t m = mantissa | 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u)))
      ++half; // may carry into the smallest normal: still correct bits
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half; // a carry into the exponent is the correct rounding (up to inf)
  return sign | static_cast<uint16_t>(half);
}

float halfBitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F)
    return floatOf(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0)
      return floatOf(sign);
    // Subnormal: value = mantissa * 2^-24, exact in binary32.
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToBFloat16Bits(float value) {
  uint32_t x = bitsOf(value);
  if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu))
    return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet NaN
  uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bfloat16BitsToFloat(uint16_t bits) {
  return floatOf(static_cast<uint32_t>(bits) << 16);
}

double roundToFormat(double value, FloatFormat format) {
  float f = static_cast<float>(value);
  switch (format) {
  case FloatFormat::F32:
    return f;
  case FloatFormat::F16:
    return halfBitsToFloat(floatToHalfBits(f));
  case FloatFormat::BF16:
    return bfloat16BitsToFloat(floatToBFloat16Bits(f));
  }
  return f;
}

} // namespace qtensor
