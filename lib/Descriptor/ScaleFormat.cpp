//===- ScaleFormat.cpp - Scales stored as compact float codes -------------===//

#include "qtensor/Descriptor/ScaleFormat.h"

#include <cmath>

using namespace qtensor;

uint32_t qtensor::maxScaleCode(ScaleFormat f) {
  return f == ScaleFormat::E8M0 ? 254u : 0x7Eu;
}

Expected<float> qtensor::decodeScaleCode(ScaleFormat f, uint32_t c) {
  switch (f) {
  case ScaleFormat::Plain:
    break;
  case ScaleFormat::E8M0:
    if (c > 254)
      return makeError("e8m0 scale code ", c,
                       c == 255 ? " is NaN" : " is not a byte");
    // 2^-127 is an f32 subnormal: exact.
    return std::ldexp(1.0f, int(c) - 127);
  case ScaleFormat::UE4M3: {
    if (c == 0x7F)
      return makeError("ue4m3 scale code 0x7f is NaN");
    if (c > 0x7F)
      return makeError("ue4m3 scale code ", c,
                       " has the sign bit set (scales are unsigned e4m3, "
                       "0 to 0x7e)");
    const uint32_t exp = c >> 3, man = c & 7;
    return exp == 0 ? std::ldexp(float(man), -9)
                    : std::ldexp(float(8 + man), int(exp) - 10);
  }
  }
  return makeError("scale format plain has no codes");
}

std::optional<uint8_t> qtensor::encodeScaleExact(ScaleFormat f, float s) {
  if (f == ScaleFormat::Plain || !(s >= 0.0f))
    return std::nullopt;
  if (s == 0.0f) // ue4m3's code 0; e8m0 has no zero
    return f == ScaleFormat::UE4M3 ? std::optional<uint8_t>(0) : std::nullopt;
  const uint8_t c = nearestScaleCode(f, s);
  Expected<float> back = decodeScaleCode(f, c);
  if (back && *back == s)
    return c;
  return std::nullopt;
}

Expected<uint8_t> qtensor::encodeScaleCode(ScaleFormat f, double s,
                                           size_t index) {
  std::optional<uint8_t> c;
  if (double(float(s)) == s)
    c = encodeScaleExact(f, float(s));
  if (!c)
    return makeError("scale ", index, " (", s,
                     ") is not a value of scale_format ", toString(f));
  return *c;
}

uint8_t qtensor::nearestScaleCode(ScaleFormat f, double s) {
  const uint32_t top = maxScaleCode(f);
  // Codes are ordered by value in both formats: a binary search over them.
  uint32_t lo = f == ScaleFormat::UE4M3 ? 1 : 0, hi = top;
  auto value = [&](uint32_t c) { return double(*decodeScaleCode(f, c)); };
  if (!(s > value(lo)))
    return uint8_t(lo);
  if (s >= value(hi))
    return uint8_t(hi);
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    (value(mid) <= s ? lo : hi) = mid;
  }
  return uint8_t(s - value(lo) <= value(hi) - s ? lo : hi);
}

AffineDescriptor qtensor::e2m1GroupDescriptor(int64_t groupSize,
                                              ScaleFormat format) {
  AffineDescriptor d;
  d.code = CodeType{4, false};
  d.scheme = QuantScheme::Symmetric;
  d.zeroPoint = ZeroPointKind::None;
  d.granularity = Granularity::Group;
  d.axis = 1;
  d.groupSize = groupSize;
  d.tail = TailRule::Exact;
  d.scaleType = FloatType::F32;
  d.codebook = Codebook::E2M1;
  d.scaleFormat = format;
  return d;
}
