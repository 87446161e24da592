//===- AffineTest.cpp - Code ranges, rounding and the affine map ----------===//
//
// Pins the seed's M8.1 0x02C trace and 0x0A reference assertions exactly.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/Affine.h"
#include "qtensor/Numerics/CodeRange.h"

#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace qtensor;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

CodeRange range(unsigned bits, bool isSigned, bool narrow = false) {
  Expected<CodeRange> r = codeRange(bits, isSigned, narrow);
  EXPECT_TRUE(bool(r)) << (r ? "" : r.message());
  return r ? *r : CodeRange{};
}

//===----------------------------------------------------------------------===//
// Code ranges
//===----------------------------------------------------------------------===//

TEST(CodeRangeTest, StandardRanges) {
  EXPECT_EQ(range(4, false), (CodeRange{0, 15}));
  EXPECT_EQ(range(4, true), (CodeRange{-8, 7}));
  EXPECT_EQ(range(4, true, true), (CodeRange{-7, 7}));
  EXPECT_EQ(range(8, true, true), (CodeRange{-127, 127}));
  EXPECT_EQ(range(8, false), (CodeRange{0, 255}));
  EXPECT_EQ(range(1, false), (CodeRange{0, 1}));
  EXPECT_EQ(range(1, true), (CodeRange{-1, 0}));
  EXPECT_EQ(range(2, true, true), (CodeRange{-1, 1}));
  EXPECT_EQ(range(32, false), (CodeRange{0, 4294967295LL}));
  EXPECT_EQ(range(32, true), (CodeRange{-2147483648LL, 2147483647LL}));
  EXPECT_EQ(range(32, true, true), (CodeRange{-2147483647LL, 2147483647LL}));
  EXPECT_EQ(range(4, false).numLevels(), 16u);
  EXPECT_EQ(range(4, true, true).numLevels(), 15u);
  EXPECT_EQ(range(8, true).maxMagnitude(), 128u);
  EXPECT_EQ(range(8, true, true).maxMagnitude(), 127u);
}

TEST(CodeRangeTest, RejectsBadWidthsAndNarrowUnsigned) {
  Expected<CodeRange> zero = codeRange(0, false, false);
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.message().find("[1, 32]"), std::string::npos);
  EXPECT_FALSE(codeRange(33, true, false));
  EXPECT_FALSE(codeRange(64, false, false));
  Expected<CodeRange> narrowUnsigned = codeRange(4, false, true);
  ASSERT_FALSE(narrowUnsigned);
  EXPECT_NE(narrowUnsigned.message().find("signed"), std::string::npos);
  EXPECT_FALSE(codeRange(1, true, true));
}

TEST(CodeRangeTest, ValidateCodeRange) {
  EXPECT_TRUE(bool(validateCodeRange({0, 15})));
  EXPECT_TRUE(bool(validateCodeRange({-2147483648LL, 4294967295LL})));
  EXPECT_FALSE(validateCodeRange({5, 5}));
  EXPECT_FALSE(validateCodeRange({7, -8}));
  EXPECT_FALSE(validateCodeRange({0, 4294967296LL}));
  EXPECT_FALSE(validateCodeRange({-2147483649LL, 0}));
}

//===----------------------------------------------------------------------===//
// Rounding (M8.1 0x02D)
//===----------------------------------------------------------------------===//

TEST(RoundingTest, TiesToEven) {
  const RoundingMode m = RoundingMode::NearestEven;
  EXPECT_EQ(roundToInteger(0.5, m), 0.0);
  EXPECT_EQ(roundToInteger(1.5, m), 2.0);
  EXPECT_EQ(roundToInteger(2.5, m), 2.0);
  EXPECT_EQ(roundToInteger(3.5, m), 4.0);
  EXPECT_EQ(roundToInteger(-0.5, m), 0.0);
  EXPECT_TRUE(std::signbit(roundToInteger(-0.5, m)));
  EXPECT_EQ(roundToInteger(-1.5, m), -2.0);
  EXPECT_EQ(roundToInteger(-2.5, m), -2.0);
  EXPECT_EQ(roundToInteger(2.4, m), 2.0);
  EXPECT_EQ(roundToInteger(2.6, m), 3.0);
  EXPECT_EQ(roundToInteger(-2.6, m), -3.0);
  EXPECT_EQ(roundToInteger(0.49999999999999994, m), 0.0);
  EXPECT_EQ(roundToInteger(4503599627370497.0, m), 4503599627370497.0);
  EXPECT_EQ(roundToInteger(-4503599627370497.0, m), -4503599627370497.0);
  EXPECT_TRUE(std::isnan(roundToInteger(kNaN, m)));
  EXPECT_EQ(roundToInteger(-kInf, m), -kInf);
}

TEST(RoundingTest, TiesToEvenMatchesNearbyintUnderToNearest) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  for (int i = -4000; i <= 4000; ++i) {
    double x = i * 0.25; // every quarter, so all the ties are hit
    EXPECT_EQ(roundToInteger(x, RoundingMode::NearestEven), std::nearbyint(x))
        << x;
  }
}

TEST(RoundingTest, TiesToEvenMatchesNearbyintAtEveryMagnitude) {
  // roundHalfToEven floors through an int64 below 2^52: check it against
  // nearbyint on random doubles of every exponent, the halves next to
  // them, and the 2^52 boundary, signs and zeros included.
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  std::mt19937_64 rng(0x0DD5);
  std::vector<double> xs = {0.0,
                            -0.0,
                            4503599627370495.5,
                            -4503599627370495.5,
                            4503599627370496.0,
                            9007199254740993.0,
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::denorm_min(),
                            -std::numeric_limits<double>::denorm_min()};
  std::uniform_int_distribution<int> exponent(-30, 70);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 20000; ++i) {
    double x = std::ldexp(mantissa(rng), exponent(rng));
    x = i % 2 ? -x : x;
    xs.push_back(x);
    xs.push_back(std::floor(x) + 0.5);
  }
  for (double x : xs) {
    const double got = roundHalfToEven(x), want = std::nearbyint(x);
    EXPECT_EQ(got, want) << x;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << x;
  }
}

TEST(RoundingTest, AwayAndTowardZero) {
  EXPECT_EQ(roundToInteger(0.5, RoundingMode::NearestAway), 1.0);
  EXPECT_EQ(roundToInteger(2.5, RoundingMode::NearestAway), 3.0);
  EXPECT_EQ(roundToInteger(-2.5, RoundingMode::NearestAway), -3.0);
  EXPECT_EQ(roundToInteger(2.4, RoundingMode::NearestAway), 2.0);
  EXPECT_EQ(roundToInteger(2.7, RoundingMode::TowardZero), 2.0);
  EXPECT_EQ(roundToInteger(-2.7, RoundingMode::TowardZero), -2.0);
  EXPECT_EQ(roundToInteger(-0.2, RoundingMode::TowardZero), 0.0);
}

//===----------------------------------------------------------------------===//
// The reference quantizer (M8.1 0x0A), assertion by assertion
//===----------------------------------------------------------------------===//

TEST(AffineQuantizeTest, SeedFourBitTrace) {
  Expected<AffineQuantized> result =
      affineQuantize({-1.0, -0.6, 0.0, 0.55, 1.0, 1.4}, 4, -1.0, 1.4, false);
  ASSERT_TRUE(bool(result)) << result.message();
  EXPECT_EQ(result->zeroPoint, 6);
  EXPECT_EQ(result->codes, (std::vector<int64_t>{0, 2, 6, 9, 12, 15}));
  for (int64_t q : result->codes) {
    EXPECT_GE(q, 0);
    EXPECT_LE(q, 15);
  }
  EXPECT_EQ(result->reconstructed[2], 0.0);
  EXPECT_EQ(result->scale * double(result->zeroPoint - result->zeroPoint), 0.0);
  // s = 2.4 / 15 = 0.16; z_real = 6.25 -> 6 (M8.1 0x02C).
  EXPECT_NEAR(result->scale, 0.16, 1e-15);
  // Decoded endpoints shift with the rounded zero-point: [-0.96, 1.44],
  // not [-1.00, 1.40].
  EXPECT_NEAR(dequantizeValue(0, {result->scale, result->zeroPoint}), -0.96,
              1e-12);
  EXPECT_NEAR(dequantizeValue(15, {result->scale, result->zeroPoint}), 1.44,
              1e-12);
  EXPECT_NEAR(result->reconstructed[5], 1.44, 1e-12);
  EXPECT_NEAR(result->reconstructed[0], -0.96, 1e-12);
  EXPECT_NEAR(result->reconstructed[1], -0.64, 1e-12);
  EXPECT_NEAR(result->reconstructed[3], 0.48, 1e-12);
  EXPECT_NEAR(result->reconstructed[4], 0.96, 1e-12);
}

TEST(AffineQuantizeTest, SeedTiesRoundBeforeZeroPoint) {
  // Unit scale and zero-point 1: ties are rounded before that translation.
  Expected<AffineQuantized> ties =
      affineQuantize({-0.5, 0.5, 1.5}, 2, -1.0, 2.0, false);
  ASSERT_TRUE(bool(ties)) << ties.message();
  EXPECT_EQ(ties->scale, 1.0);
  EXPECT_EQ(ties->zeroPoint, 1);
  EXPECT_EQ(ties->codes, (std::vector<int64_t>{1, 1, 3}));
}

TEST(AffineQuantizeTest, SeedConstantZerosWithDeclaredRange) {
  Expected<AffineQuantized> zeros =
      affineQuantize({0.0, 0.0}, 4, -1.0, 1.0, false);
  ASSERT_TRUE(bool(zeros)) << zeros.message();
  EXPECT_EQ(zeros->reconstructed, (std::vector<double>{0.0, 0.0}));
}

TEST(AffineQuantizeTest, SignedUsesFullTwosComplementRange) {
  // Same trace in [-8, 7]: z_real = -8 + 6.25 -> -2, codes shift by -8.
  Expected<AffineQuantized> result =
      affineQuantize({-1.0, -0.6, 0.0, 0.55, 1.0, 1.4}, 4, -1.0, 1.4, true);
  ASSERT_TRUE(bool(result)) << result.message();
  EXPECT_EQ(result->zeroPoint, -2);
  EXPECT_EQ(result->codes, (std::vector<int64_t>{-8, -6, -2, 1, 4, 7}));
  EXPECT_EQ(result->reconstructed[2], 0.0);
}

TEST(AffineQuantizeTest, RangeExcludingZeroShiftsEndpoints) {
  // [1, 3] in 1 bit: s = 2, z_real = -0.5 -> 0; decoded range is [0, 2],
  // so rmax = 3 saturates to code 1 and reconstructs as 2.
  Expected<AffineQuantized> result =
      affineQuantize({1.0, 3.0}, 1, 1.0, 3.0, false);
  ASSERT_TRUE(bool(result)) << result.message();
  EXPECT_EQ(result->scale, 2.0);
  EXPECT_EQ(result->zeroPoint, 0);
  EXPECT_EQ(result->codes, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(result->reconstructed, (std::vector<double>{0.0, 2.0}));
}

TEST(AffineQuantizeTest, SaturatesAfterRoundingAndHugeOutliers) {
  Expected<AffineQuantized> result =
      affineQuantize({-1e308, -5.0, 5.0, 1e308}, 8, -1.0, 1.0, false);
  ASSERT_TRUE(bool(result)) << result.message();
  EXPECT_EQ(result->codes, (std::vector<int64_t>{0, 0, 255, 255}));
}

TEST(AffineQuantizeTest, RejectsBadInputs) {
  std::vector<double> x = {0.0, 1.0};
  Expected<AffineQuantized> equal = affineQuantize(x, 4, 1.0, 1.0, false);
  ASSERT_FALSE(equal);
  EXPECT_NE(equal.message().find("positive finite width"), std::string::npos);
  EXPECT_FALSE(affineQuantize(x, 4, 2.0, 1.0, false));
  Expected<AffineQuantized> nanRange = affineQuantize(x, 4, kNaN, 1.0, false);
  ASSERT_FALSE(nanRange);
  EXPECT_NE(nanRange.message().find("rmin"), std::string::npos);
  EXPECT_FALSE(affineQuantize(x, 4, -1.0, kInf, false));
  Expected<AffineQuantized> infInput =
      affineQuantize({0.0, kInf}, 4, -1.0, 1.0, false);
  ASSERT_FALSE(infInput);
  EXPECT_NE(infInput.message().find("x[1]"), std::string::npos);
  EXPECT_FALSE(affineQuantize({kNaN}, 4, -1.0, 1.0, false));
  Expected<AffineQuantized> empty = affineQuantize({}, 4, -1.0, 1.0, false);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.message().find("nonempty"), std::string::npos);
  EXPECT_FALSE(affineQuantize(x, 0, -1.0, 1.0, false));
  EXPECT_FALSE(affineQuantize(x, 33, -1.0, 1.0, false));
  // Width overflows to inf.
  Expected<AffineQuantized> wide = affineQuantize(x, 4, -1e308, 1e308, false);
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.message().find("width"), std::string::npos);
  // Scale underflows to zero.
  Expected<AffineQuantized> tiny = affineQuantize(x, 4, 0.0, 5e-324, false);
  ASSERT_FALSE(tiny);
  EXPECT_NE(tiny.message().find("scale"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Parameter selection and the scalar map
//===----------------------------------------------------------------------===//

TEST(AffineParamsTest, FromRange) {
  Expected<AffineParams> p = affineParamsFromRange(-1.0, 1.4, {0, 15});
  ASSERT_TRUE(bool(p)) << p.message();
  EXPECT_NEAR(p->scale, 0.16, 1e-15);
  EXPECT_EQ(p->zeroPoint, 6);
  // Zero-point clamps into the code range for ranges excluding zero.
  Expected<AffineParams> positive = affineParamsFromRange(10.0, 25.0, {0, 15});
  ASSERT_TRUE(bool(positive));
  EXPECT_EQ(positive->scale, 1.0);
  EXPECT_EQ(positive->zeroPoint, 0);
  Expected<AffineParams> negative =
      affineParamsFromRange(-25.0, -10.0, {0, 15});
  ASSERT_TRUE(bool(negative));
  EXPECT_EQ(negative->zeroPoint, 15);
  EXPECT_FALSE(affineParamsFromRange(-1.0, 1.0, {5, 5}));
  EXPECT_FALSE(affineParamsFromRange(-1.0, 1.0, {15, 0}));
}

TEST(AffineParamsTest, Symmetric) {
  CodeRange narrow8 = range(8, true, true);
  Expected<AffineParams> p = symmetricParams(1.27, narrow8);
  ASSERT_TRUE(bool(p)) << p.message();
  EXPECT_DOUBLE_EQ(p->scale, 0.01);
  EXPECT_EQ(p->zeroPoint, 0);
  Expected<int64_t> top = quantizeValue(
      1.27, *p, narrow8, RoundingMode::NearestEven, SaturationMode::Reject);
  ASSERT_TRUE(bool(top));
  EXPECT_EQ(*top, 127);
  Expected<int64_t> bottom = quantizeValue(
      -1.27, *p, narrow8, RoundingMode::NearestEven, SaturationMode::Reject);
  ASSERT_TRUE(bool(bottom));
  EXPECT_EQ(*bottom, -127);
  EXPECT_FALSE(symmetricParams(0.0, narrow8));
  EXPECT_FALSE(symmetricParams(-1.0, narrow8));
  EXPECT_FALSE(symmetricParams(kNaN, narrow8));
  EXPECT_FALSE(symmetricParams(kInf, narrow8));
  Expected<AffineParams> unsignedRange = symmetricParams(1.0, {0, 15});
  ASSERT_FALSE(unsignedRange);
  EXPECT_NE(unsignedRange.message().find("straddling zero"), std::string::npos);
}

TEST(QuantizeValueTest, RoundingModesAndSaturation) {
  const CodeRange r{0, 15};
  const AffineParams unit{1.0, 0};
  auto q = [&](double x, RoundingMode mode, SaturationMode sat) {
    Expected<int64_t> code = quantizeValue(x, unit, r, mode, sat);
    EXPECT_TRUE(bool(code)) << x << ": " << (code ? "" : code.message());
    return code ? *code : -999;
  };
  EXPECT_EQ(q(14.5, RoundingMode::NearestEven, SaturationMode::Clamp), 14);
  EXPECT_EQ(q(14.5, RoundingMode::NearestAway, SaturationMode::Clamp), 15);
  EXPECT_EQ(q(14.9, RoundingMode::TowardZero, SaturationMode::Clamp), 14);
  // Saturation follows rounding: 15.4 rounds to 15, which is in range, so
  // even Reject accepts it; 15.5 rounds to 16 and is rejected.
  EXPECT_EQ(q(15.4, RoundingMode::NearestEven, SaturationMode::Reject), 15);
  EXPECT_EQ(q(-0.4, RoundingMode::NearestEven, SaturationMode::Reject), 0);
  EXPECT_EQ(q(15.5, RoundingMode::NearestEven, SaturationMode::Clamp), 15);
  EXPECT_EQ(q(-3.0, RoundingMode::NearestEven, SaturationMode::Clamp), 0);
  Expected<int64_t> over = quantizeValue(
      15.5, unit, r, RoundingMode::NearestEven, SaturationMode::Reject);
  ASSERT_FALSE(over);
  EXPECT_NE(over.message().find("outside the code range [0, 15]"),
            std::string::npos);
  // Huge outliers: x / s overflows to inf without early saturation.
  const AffineParams tiny{1e-300, 3};
  Expected<int64_t> huge = quantizeValue(
      1e308, tiny, r, RoundingMode::NearestEven, SaturationMode::Clamp);
  ASSERT_TRUE(bool(huge));
  EXPECT_EQ(*huge, 15);
  Expected<int64_t> hugeNeg = quantizeValue(
      -1e308, tiny, r, RoundingMode::NearestEven, SaturationMode::Clamp);
  ASSERT_TRUE(bool(hugeNeg));
  EXPECT_EQ(*hugeNeg, 0);
  EXPECT_FALSE(quantizeValue(1e308, tiny, r, RoundingMode::NearestEven,
                             SaturationMode::Reject));
}

TEST(QuantizeValueTest, RejectsNonfiniteAndBadParams) {
  const CodeRange r{0, 15};
  Expected<int64_t> nan = quantizeValue(
      kNaN, {1.0, 0}, r, RoundingMode::NearestEven, SaturationMode::Clamp);
  ASSERT_FALSE(nan);
  EXPECT_NE(nan.message().find("nan"), std::string::npos);
  EXPECT_FALSE(quantizeValue(kInf, {1.0, 0}, r, RoundingMode::NearestEven,
                             SaturationMode::Clamp));
  EXPECT_FALSE(quantizeValue(1.0, {0.0, 0}, r, RoundingMode::NearestEven,
                             SaturationMode::Clamp));
  EXPECT_FALSE(quantizeValue(1.0, {kNaN, 0}, r, RoundingMode::NearestEven,
                             SaturationMode::Clamp));
  Expected<int64_t> badZero = quantizeValue(
      1.0, {1.0, 16}, r, RoundingMode::NearestEven, SaturationMode::Clamp);
  ASSERT_FALSE(badZero);
  EXPECT_NE(badZero.message().find("zero-point 16"), std::string::npos);
}

TEST(QuantizeValueTest, RoundTripErrorWithinHalfStep) {
  // M8.1 0x03: inside the decoded interval, |x - x_hat| <= s / 2.
  Expected<AffineParams> p = affineParamsFromRange(-1.0, 1.4, {0, 15});
  ASSERT_TRUE(bool(p));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-0.96, 1.44);
  for (int i = 0; i < 2000; ++i) {
    double x = dist(rng);
    Expected<int64_t> q = quantizeValue(
        x, *p, {0, 15}, RoundingMode::NearestEven, SaturationMode::Reject);
    ASSERT_TRUE(bool(q)) << x << ": " << q.message();
    EXPECT_LE(std::fabs(x - dequantizeValue(*q, *p)),
              p->scale / 2 * (1 + 1e-12))
        << x;
  }
  EXPECT_NEAR(dequantizeValue(9, *p), 0.48, 1e-12);
  EXPECT_EQ(dequantizeValue(6, *p), 0.0);
}

} // namespace
