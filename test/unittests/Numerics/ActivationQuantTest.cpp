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

} // namespace
