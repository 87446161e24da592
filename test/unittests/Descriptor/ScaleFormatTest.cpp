//===- ScaleFormatTest.cpp - e8m0 and ue4m3 scale codes -------------------===//

#include "qtensor/Descriptor/ScaleFormat.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace qtensor;

namespace {
float decoded(ScaleFormat f, uint32_t c) {
  Expected<float> s = decodeScaleCode(f, c);
  EXPECT_TRUE(s) << s.message();
  return s ? *s : NAN;
}
std::string refusal(ScaleFormat f, uint32_t c) {
  Expected<float> s = decodeScaleCode(f, c);
  EXPECT_FALSE(s) << c;
  return s ? std::string() : s.message();
}
} // namespace

// OCP MX v1.0 E8M0: 2^(c - 127); 255 is NaN. The ends are f32 values
// (2^-127 a subnormal).
TEST(ScaleFormat, E8M0IsAPowerOfTwo) {
  EXPECT_EQ(decoded(ScaleFormat::E8M0, 127), 1.0f);
  EXPECT_EQ(decoded(ScaleFormat::E8M0, 120), 1.0f / 128);
  EXPECT_EQ(decoded(ScaleFormat::E8M0, 0), std::ldexp(1.0f, -127));
  EXPECT_EQ(decoded(ScaleFormat::E8M0, 254), std::ldexp(1.0f, 127));
  EXPECT_EQ(refusal(ScaleFormat::E8M0, 255), "e8m0 scale code 255 is NaN");
  EXPECT_EQ(refusal(ScaleFormat::E8M0, 256),
            "e8m0 scale code 256 is not a byte");
}

// Unsigned e4m3, bias 7 (NVFP4's group scales; gguf-py's ue4m3_to_fp32
// without its factor 1/2): subnormals m * 2^-9, normals (1 + m/8) * 2^(e-7),
// 0x7e = 448 the largest.
TEST(ScaleFormat, UE4M3MatchesTheFormat) {
  EXPECT_EQ(decoded(ScaleFormat::UE4M3, 0), 0.0f);
  EXPECT_EQ(decoded(ScaleFormat::UE4M3, 1), std::ldexp(1.0f, -9));
  EXPECT_EQ(decoded(ScaleFormat::UE4M3, 7), 7 * std::ldexp(1.0f, -9));
  EXPECT_EQ(decoded(ScaleFormat::UE4M3, 8), std::ldexp(1.0f, -6));
  EXPECT_EQ(decoded(ScaleFormat::UE4M3, 0x38), 1.0f);
  EXPECT_EQ(decoded(ScaleFormat::UE4M3, 0x3C), 1.5f);
  EXPECT_EQ(decoded(ScaleFormat::UE4M3, 0x7E), 448.0f);
  EXPECT_EQ(refusal(ScaleFormat::UE4M3, 0x7F), "ue4m3 scale code 0x7f is NaN");
  EXPECT_NE(refusal(ScaleFormat::UE4M3, 0xB8).find("sign bit set"),
            std::string::npos);
  // Codes are ordered by value: what nearestScaleCode searches.
  for (uint32_t c = 1; c <= 0x7E; ++c)
    EXPECT_LT(decoded(ScaleFormat::UE4M3, c - 1),
              decoded(ScaleFormat::UE4M3, c));
}

// A writer stores only exact values; every code's value encodes back to it.
TEST(ScaleFormat, EncodeIsExactOrRefused) {
  for (ScaleFormat f : {ScaleFormat::E8M0, ScaleFormat::UE4M3})
    for (uint32_t c = 0; c <= maxScaleCode(f); ++c) {
      std::optional<uint8_t> back = encodeScaleExact(f, decoded(f, c));
      ASSERT_TRUE(back) << toString(f) << " " << c;
      EXPECT_EQ(*back, c);
    }
  EXPECT_FALSE(encodeScaleExact(ScaleFormat::E8M0, 3.0f));
  EXPECT_FALSE(encodeScaleExact(ScaleFormat::E8M0, 0.0f));
  EXPECT_FALSE(encodeScaleExact(ScaleFormat::UE4M3, 1.0625f));
  EXPECT_FALSE(encodeScaleExact(ScaleFormat::UE4M3, -1.0f));
  EXPECT_FALSE(encodeScaleExact(ScaleFormat::UE4M3, NAN));
  EXPECT_FALSE(encodeScaleExact(ScaleFormat::UE4M3, 480.0f));
  // Writers hold scales as doubles: one that is not an f32 is refused too,
  // named by index.
  EXPECT_EQ(*encodeScaleCode(ScaleFormat::E8M0, 0.25, 3), 125);
  Expected<uint8_t> notF32 =
      encodeScaleCode(ScaleFormat::E8M0, 0.25 + 1e-12, 3);
  ASSERT_FALSE(notF32);
  EXPECT_NE(notF32.message().find("scale 3 ("), std::string::npos);
  EXPECT_NE(notF32.message().find(") is not a value of scale_format e8m0"),
            std::string::npos)
      << notF32.message();
}

// Nearest, ties to the lower value, clamped to the finite positive codes.
TEST(ScaleFormat, NearestScaleCode) {
  EXPECT_EQ(nearestScaleCode(ScaleFormat::UE4M3, 1.0625), 0x38); // tie
  EXPECT_EQ(nearestScaleCode(ScaleFormat::UE4M3, 1.07), 0x39);
  EXPECT_EQ(nearestScaleCode(ScaleFormat::UE4M3, 1e9), 0x7E);
  EXPECT_EQ(nearestScaleCode(ScaleFormat::UE4M3, 1e-9), 1);
  EXPECT_EQ(nearestScaleCode(ScaleFormat::E8M0, 1.4), 127);
  EXPECT_EQ(nearestScaleCode(ScaleFormat::E8M0, 1.6), 128);
  EXPECT_EQ(nearestScaleCode(ScaleFormat::E8M0, 1e-60), 0);
}

// The descriptor's rules for a scale format.
TEST(ScaleFormat, DescriptorRules) {
  AffineDescriptor d;
  d.code = {4, false};
  d.granularity = Granularity::Group;
  d.axis = 1;
  d.groupSize = 32;
  d.tail = TailRule::Exact;
  d.codebook = Codebook::E2M1;
  d.scaleFormat = ScaleFormat::E8M0;
  d.scaleType = FloatType::F32;
  EXPECT_TRUE(verifyDescriptor(d));
  d.scaleType = FloatType::F16;
  EXPECT_EQ(verifyDescriptor(d).message(),
            "scale_format e8m0 decodes to exact f32 values; the scale type "
            "must be f32, got f16");
  d.scaleType = FloatType::F32;
  d.codebook = Codebook::None;
  d.code = {4, true};
  d.scheme = QuantScheme::Asymmetric;
  d.zeroPoint = ZeroPointKind::Float;
  EXPECT_EQ(verifyDescriptor(d).message(),
            "scale_format e8m0 stores scales only; it takes zero-point none, "
            "got float");
  d.scheme = QuantScheme::Symmetric;
  d.zeroPoint = ZeroPointKind::None;
  d.nested = NestedQParams{};
  d.nested->superGroupSize = 256;
  EXPECT_EQ(verifyDescriptor(d).message(),
            "scale_format e8m0 and nested qparams both encode the scales; a "
            "descriptor takes one");
}
