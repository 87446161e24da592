//===- FloatFormatsTest.cpp - f16/bf16 rounding ---------------------------===//

#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Numerics/Groupwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace qtensor;

namespace {
uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
} // namespace

// Every half value survives half -> float -> half unchanged (NaNs stay NaN).
TEST(FloatFormats, HalfRoundTripsAllBitPatterns) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    float f = halfBitsToFloat(static_cast<uint16_t>(bits));
    uint16_t back = floatToHalfBits(f);
    if (std::isnan(f))
      EXPECT_TRUE((back & 0x7C00u) == 0x7C00u && (back & 0x3FFu)) << bits;
    else
      EXPECT_EQ(back, bits) << "half bits " << bits;
  }
}

TEST(FloatFormats, HalfKnownValues) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7BFF);      // largest finite
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7C00);      // rounds to inf
  EXPECT_EQ(floatToHalfBits(5.9604645e-8f), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalfBits(2.9802322e-8f), 0x0000); // tie -> even (0)
  EXPECT_EQ(floatToHalfBits(8.940697e-8f), 0x0002);  // 1.5 ulp tie -> 2
  EXPECT_EQ(floatToHalfBits(6.097555e-5f), 0x03FF);  // largest subnormal
  EXPECT_EQ(floatToHalfBits(6.1035156e-5f), 0x0400); // smallest normal
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even (1).
  EXPECT_EQ(floatToHalfBits(1.0f + 0x1p-11f), 0x3C00);
  EXPECT_EQ(floatToHalfBits(1.0f + 0x1p-10f + 0x1p-11f), 0x3C02);
  EXPECT_EQ(floatToHalfBits(std::numeric_limits<float>::infinity()), 0x7C00);
}

// Midpoints between adjacent halves round to the even neighbour; values just
// off a midpoint round to the nearer one.
TEST(FloatFormats, HalfMidpointsRoundToEven) {
  for (uint16_t h = 0x0001; h < 0x7BFF; h += 37) {
    float lo = halfBitsToFloat(h), hi = halfBitsToFloat(h + 1);
    float mid = lo + (hi - lo) / 2; // exact in binary32
    uint16_t even = (h & 1) ? h + 1 : h;
    EXPECT_EQ(floatToHalfBits(mid), even) << h;
    EXPECT_EQ(floatToHalfBits(std::nextafter(mid, hi)), h + 1) << h;
    EXPECT_EQ(floatToHalfBits(std::nextafter(mid, lo)), h) << h;
  }
}

TEST(FloatFormats, BFloat16) {
  EXPECT_EQ(floatToBFloat16Bits(1.0f), 0x3F80);
  // 1 + 2^-8 is the tie between 1 and 1 + 2^-7: to even.
  EXPECT_EQ(floatToBFloat16Bits(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(floatToBFloat16Bits(1.0f + 0x1p-7f + 0x1p-8f), 0x3F82);
  EXPECT_EQ(bitsOf(bfloat16BitsToFloat(0x3F81)), 0x3F810000u);
  EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(
      floatToBFloat16Bits(std::numeric_limits<float>::quiet_NaN()))));
  // The largest finite float rounds up to inf, as IEEE says.
  EXPECT_EQ(floatToBFloat16Bits(std::numeric_limits<float>::max()), 0x7F80);
}

// With a scale format, codes are computed with the stored scale: the
// reconstruction from stored scales equals what the quantizer meant, and
// every scale is exactly representable in the format.
TEST(FloatFormats, GroupwiseUsesTheStoredScale) {
  std::vector<float> w(4 * 64);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(0.37f * i) * (1.0f + (i % 7)) * 1e-2f;
  for (bool symmetric : {true, false}) {
    GroupwiseConfig config;
    config.bits = 4;
    config.symmetric = symmetric;
    config.groupSize = 32;
    config.scaleFormat = FloatFormat::F16;
    auto q = quantizeGroupwise(w.data(), 4, 64, config);
    ASSERT_TRUE(q) << q.message();
    for (double s : q->scales)
      EXPECT_EQ(s, roundToFormat(s, FloatFormat::F16));
    std::vector<float> x = dequantizeGroupwise(*q);
    // Round to nearest with the stored scale: error at most half a step,
    // except where a value was clamped at the range's end.
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t k = 0; k < 64; ++k) {
        double s = q->scales[n * 2 + k / 32];
        double err = std::fabs(x[n * 64 + k] - w[n * 64 + k]);
        int32_t code = q->codes[n * 64 + k];
        bool clamped = code == q->range.qmin || code == q->range.qmax;
        if (!clamped)
          EXPECT_LE(err, 0.5 * s * (1 + 1e-6)) << n << "," << k;
      }
  }
}

// A group whose scale underflows f16 is an error naming the group.
TEST(FloatFormats, GroupwiseScaleUnderflowIsAnError) {
  std::vector<float> w(32, 1e-12f);
  GroupwiseConfig config;
  config.symmetric = true;
  config.groupSize = 32;
  config.scaleFormat = FloatFormat::F16;
  auto q = quantizeGroupwise(w.data(), 1, 32, config);
  ASSERT_FALSE(q);
  EXPECT_NE(q.message().find("row 0"), std::string::npos) << q.message();
  EXPECT_NE(q.message().find("not representable"), std::string::npos);
}
