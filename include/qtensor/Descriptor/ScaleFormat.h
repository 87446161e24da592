//===- ScaleFormat.h - Scales stored as compact float codes -----*- C++ -*-===//
//
// The codes of ScaleFormat (OCP MX e8m0, NVFP4's unsigned e4m3) and the
// f32 values they name. Every code's value is exact in f32, so a decoded
// scale is the code's meaning, not an approximation of it; NaN codes and
// codes outside the format are refused, never decoded.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DESCRIPTOR_SCALEFORMAT_H
#define QTENSOR_DESCRIPTOR_SCALEFORMAT_H

#include "qtensor/Descriptor/Descriptor.h"

#include <cstdint>
#include <optional>

namespace qtensor {

/// The FP4 families' code contract: unsigned E2M1 codes (Codebook::E2M1)
/// in groups of `groupSize` along K, tail exact, under f32 scales stored as
/// `format` (MXFP4: e8m0 per 32; NVFP4: ue4m3 per 16; Plain: the f32
/// values, as an NVFP4 checkpoint's folded scales are).
AffineDescriptor e2m1GroupDescriptor(int64_t groupSize, ScaleFormat format);

/// The largest finite code of `f` (254 for e8m0, 0x7E for ue4m3).
uint32_t maxScaleCode(ScaleFormat f);

/// The value of code `c`, or an error saying why `c` names no scale (NaN,
/// or outside the format). `f` must not be Plain.
Expected<float> decodeScaleCode(ScaleFormat f, uint32_t c);

/// The code whose value is exactly `s`, or nullopt when `s` is not a value
/// of the format (a writer refuses rather than rounds: the scale already
/// used to pick the codes must be the stored one).
std::optional<uint8_t> encodeScaleExact(ScaleFormat f, float s);

/// encodeScaleExact for the `index`-th scale of a tensor held as a double:
/// the error names the index and the value when `s` is not exactly an f32
/// value of the format (what every writer of stored codes reports).
Expected<uint8_t> encodeScaleCode(ScaleFormat f, double s, size_t index);

/// The code whose value is nearest `s` (> 0), ties to the lower value;
/// `s` beyond the largest value gives the largest code, and a positive `s`
/// below the smallest positive value gives the smallest positive code.
uint8_t nearestScaleCode(ScaleFormat f, double s);

} // namespace qtensor

#endif // QTENSOR_DESCRIPTOR_SCALEFORMAT_H
