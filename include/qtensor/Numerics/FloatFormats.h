//===- FloatFormats.h - Rounding to the stored float formats ----*- C++ -*-===//
//
// Scales are stored as f16, bf16 or f32 (the descriptor's `scale`). A
// quantizer must compute codes with the scale as stored, not with the double
// it started from, or reconstruction disagrees with quantization by up to one
// code step. These conversions round to nearest, ties to even, like IEEE
// hardware and numpy's astype.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_FLOATFORMATS_H
#define QTENSOR_NUMERICS_FLOATFORMATS_H

#include <cstdint>

namespace qtensor {

/// The formats a scale (or a reconstructed value) can be stored in.
enum class FloatFormat : uint8_t { F32, F16, BF16 };

/// binary32 -> binary16 bits, round to nearest even; overflow gives inf,
/// NaN stays NaN (quiet).
uint16_t floatToHalfBits(float value);
/// binary16 bits -> binary32 (exact).
float halfBitsToFloat(uint16_t bits);
/// binary32 -> bfloat16 bits, round to nearest even; NaN stays NaN (quiet).
uint16_t floatToBFloat16Bits(float value);
/// bfloat16 bits -> binary32 (exact).
float bfloat16BitsToFloat(uint16_t bits);

/// `value` rounded to `format` and back to double (for F32 the float
/// rounding of `value`).
double roundToFormat(double value, FloatFormat format);

} // namespace qtensor

#endif // QTENSOR_NUMERICS_FLOATFORMATS_H
