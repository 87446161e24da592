//===- ActivationQuantTest.cpp - Per-token int8 activation reference ------===//

#include "qtensor/Numerics/ActivationQuant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace qtensor;

namespace {

TEST(ActivationQuant, SymmetricRowsHaveTheirOwnScale) {
  // Row 0: amax 127 gives s = 1, so codes are x rounded half to even
  // (2.5 -> 2, -3.5 -> -4); row 1 is all zero: s = 1, codes 0.
  std::vector<float> x = {127.0f, 2.5f, -3.5f, 0.49f, 0.0f, 0.0f, 0.0f, 0.0f};
  Expected<QuantizedActivations> q =
      quantizeActivationsPerToken(x.data(), 2, 4, /*symmetric=*/true);
  ASSERT_TRUE(bool(q)) << q.message();
  EXPECT_EQ(q->codes, (std::vector<int32_t>{127, 2, -4, 0, 0, 0, 0, 0}));
  EXPECT_EQ(q->scales, (std::vector<double>{1.0, 1.0}));
  EXPECT_TRUE(q->zeroPoints.empty());
}

TEST(ActivationQuant, AsymmetricRowsIncludeZeroInTheirRange) {
  // lo = -1, hi = 254: s = 1, z = 1; all-positive row 1: lo = 0, z = 0.
  std::vector<float> x = {-1.0f, 254.0f, 0.0f,   10.5f,
                          5.1f,  10.2f,  255.0f, 0.0f};
  Expected<QuantizedActivations> q =
      quantizeActivationsPerToken(x.data(), 2, 4, /*symmetric=*/false);
  ASSERT_TRUE(bool(q)) << q.message();
  EXPECT_EQ(q->zeroPoints, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(q->scales[0], 1.0);
  EXPECT_EQ((std::vector<int32_t>(q->codes.begin(), q->codes.begin() + 4)),
            (std::vector<int32_t>{0, 255, 1, 11}));
  EXPECT_EQ(q->scales[1], double(255.0f / 255.0f));
  EXPECT_EQ(q->codes[6], 255);
}

TEST(ActivationQuant, RefusesNonFiniteValuesByPosition) {
  std::vector<float> x = {1.0f, NAN, 2.0f, 3.0f};
  Expected<QuantizedActivations> q =
      quantizeActivationsPerToken(x.data(), 2, 2, true);
  ASSERT_FALSE(bool(q));
  EXPECT_NE(q.message().find("activation row 0 column 1 is not finite"),
            std::string::npos);
  EXPECT_FALSE(bool(quantizeActivationsPerToken(x.data(), 0, 2, true)));
}

TEST(ActivationQuant, BlocksOf32HaveTheirOwnScale) {
  // One row of 70: block 0 has amax 127 (s = 1: values rounded half to
  // even), block 1 is zero (s = 1, all 0), block 2 is the short tail of
  // 6 with amax 254 (s = 2: 3 -> rne(1.5) = 2 -> 4, 5 -> rne(2.5) -> 4).
  std::vector<double> x(70, 0.0);
  x[0] = 127.0;
  x[1] = 2.5;
  x[2] = -3.5;
  x[31] = 0.49;
  x[64] = 254.0;
  x[65] = 3.0;
  x[66] = -5.0;
  std::vector<double> q = blockQuantizedActivations(x, 1, 70);
  ASSERT_EQ(q.size(), 70u);
  EXPECT_EQ(q[0], 127.0);
  EXPECT_EQ(q[1], 2.0);
  EXPECT_EQ(q[2], -4.0);
  EXPECT_EQ(q[31], 0.0);
  for (int i = 32; i < 64; ++i)
    EXPECT_EQ(q[size_t(i)], 0.0);
  EXPECT_EQ(q[64], 254.0);
  EXPECT_EQ(q[65], 4.0);
  EXPECT_EQ(q[66], -4.0);
  // Two rows start their blocks at their own column 0; a non-finite value
  // makes its block (only) NaN, as the kernel's scale then is.
  std::vector<double> two = {1.0, NAN, 0.5, 0.25};
  std::vector<double> r = blockQuantizedActivations(two, 2, 2);
  EXPECT_TRUE(std::isnan(r[0]) && std::isnan(r[1]));
  EXPECT_EQ(r[2], double(0.5f / 127.0f) * 127.0);
  EXPECT_EQ(r[3], double(0.5f / 127.0f) * 64.0);
}

} // namespace

// What a W8A8 GEMV multiplies: each row quantized on its own and taken back
// to s (q - z), within half a step of x; an all-zero row stays zero and a
// non-finite row is NaN.
TEST(ActivationQuant, TokenRowsDequantizeWithinHalfAStep) {
  const std::vector<double> x = {0.5, -1.0, 0.25, 0.125, // row 0
                                 3.0, 2.0,  1.0,  -0.5,  // row 1
                                 0.0, 0.0,  0.0,  0.0,   // row 2
                                 1.0, NAN,  2.0,  3.0};  // row 3
  for (bool symmetric : {true, false}) {
    SCOPED_TRACE(symmetric ? "symmetric" : "asymmetric");
    std::vector<double> q = tokenQuantizedActivations(x, 4, 4, symmetric);
    for (int64_t row = 0; row < 3; ++row) {
      std::vector<float> in(x.begin() + row * 4, x.begin() + row * 4 + 4);
      auto codes = quantizeActivationsPerToken(in.data(), 1, 4, symmetric);
      ASSERT_TRUE(codes) << codes.message();
      const double s = codes->scales[0];
      const double z = symmetric ? 0.0 : codes->zeroPoints[0];
      for (int64_t c = 0; c < 4; ++c) {
        const double got = q[size_t(row * 4 + c)];
        EXPECT_EQ(got, s * (codes->codes[size_t(c)] - z)) << row << "," << c;
        EXPECT_LE(std::fabs(got - x[size_t(row * 4 + c)]), s / 2 + 1e-12)
            << row << "," << c;
      }
    }
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_EQ(q[size_t(8 + c)], 0.0);
      EXPECT_TRUE(std::isnan(q[size_t(12 + c)]));
    }
  }
}
