//===- ReferenceGemmTest.cpp - Reference quantized linear -----------------===//
//
// Seed M8.1 0x05C (integer path == dequantized path == [-0.10, 0.025]) and
// 0x05A (group-wise partial accumulators keep the activation zero-point).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/ReferenceGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace qtensor;

namespace {

GroupwiseQuantizedWeights makeWeights(int64_t rows, int64_t cols,
                                      int64_t groupSize,
                                      std::vector<int32_t> codes,
                                      std::vector<double> scales,
                                      std::vector<int32_t> zeros = {}) {
  GroupwiseQuantizedWeights w;
  w.rows = rows;
  w.cols = cols;
  w.groupSize = groupSize;
  w.numGroupsPerRow = groupsPerRow(cols, groupSize);
  w.range = CodeRange{-128, 255};
  w.codes = std::move(codes);
  w.scales = std::move(scales);
  w.zeroPoints = std::move(zeros);
  return w;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(ReferenceGemmTest, SeedNumericTrace) {
  // M = 1, K = 4, N = 2; symmetric, per-row weight scales (G = K).
  QuantizedActivations x;
  x.rows = 1;
  x.cols = 4;
  x.codes = {2, -3, 4, 1};
  x.scales = {0.10};
  x.zeroPoints = {0};
  GroupwiseQuantizedWeights w =
      makeWeights(2, 4, 4, {1, 2, -1, 3, -2, 1, 2, 0}, {0.20, 0.25});

  Expected<std::vector<double>> y = referenceQuantizedLinear(x, w);
  ASSERT_TRUE(bool(y)) << y.message();
  ASSERT_EQ(y->size(), 2u);
  // Integer dots -5 and 1, scaled by s_X * s_W = [0.02, 0.025].
  EXPECT_NEAR((*y)[0], -0.10, 1e-12);
  EXPECT_NEAR((*y)[1], 0.025, 1e-12);

  Expected<std::vector<double>> ref = referenceDequantizedLinear(x, w);
  ASSERT_TRUE(bool(ref)) << ref.message();
  EXPECT_NEAR((*ref)[0], -0.10, 1e-12);
  EXPECT_NEAR((*ref)[1], 0.025, 1e-12);
  EXPECT_NEAR((*y)[0], (*ref)[0], 1e-12);
  EXPECT_NEAR((*y)[1], (*ref)[1], 1e-12);

  // Symmetric activations may also omit the zero-point vector.
  x.zeroPoints.clear();
  Expected<std::vector<double>> y2 = referenceQuantizedLinear(x, w);
  ASSERT_TRUE(bool(y2));
  EXPECT_EQ(*y2, *y);
}

TEST(ReferenceGemmTest, ActivationZeroPointIsRetained) {
  // M8.1 0x05A: (3-2)*1 + (4-2)*1 = 3, not 3*1 + 4*1 = 7.
  QuantizedActivations x;
  x.rows = 1;
  x.cols = 2;
  x.codes = {3, 4};
  x.scales = {1.0};
  x.zeroPoints = {2};
  GroupwiseQuantizedWeights w = makeWeights(1, 2, 2, {1, 1}, {1.0}, {0});
  Expected<std::vector<double>> y = referenceQuantizedLinear(x, w);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_EQ(*y, (std::vector<double>{3.0}));
  EXPECT_EQ(*referenceDequantizedLinear(x, w), (std::vector<double>{3.0}));
  // Symmetric weights (no zero vector) give the same answer.
  w.zeroPoints.clear();
  EXPECT_EQ(*referenceQuantizedLinear(x, w), (std::vector<double>{3.0}));
}

TEST(ReferenceGemmTest, EachGroupAppliesItsOwnScale) {
  // K = 3, G = 2: group 0 (k = 0, 1) has scale 1, the one-column tail has
  // scale 10 and weight zero-point 1. Y = 1*(1*1 + 1*1) + 10*(1*(3-1)) = 22.
  QuantizedActivations x;
  x.rows = 1;
  x.cols = 3;
  x.codes = {1, 1, 1};
  x.scales = {1.0};
  GroupwiseQuantizedWeights w =
      makeWeights(1, 3, 2, {1, 1, 3}, {1.0, 10.0}, {0, 1});
  Expected<std::vector<double>> y = referenceQuantizedLinear(x, w);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_EQ(*y, (std::vector<double>{22.0}));
  EXPECT_EQ(*referenceDequantizedLinear(x, w), (std::vector<double>{22.0}));
}

TEST(ReferenceGemmTest, RandomizedIntegerPathMatchesDequantizedPath) {
  // K = 37 is not a multiple of G = 8: every row ends in a 5-column tail.
  const int64_t M = 3, N = 5, K = 37;
  std::mt19937 rng(2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> weights(N * K);
  for (float &v : weights)
    v = normal(rng);

  for (bool symmetric : {false, true}) {
    GroupwiseConfig config;
    config.bits = 4;
    config.symmetric = symmetric;
    config.narrow = symmetric;
    config.groupSize = 8;
    Expected<GroupwiseQuantized> w =
        quantizeGroupwise(weights.data(), N, K, config);
    ASSERT_TRUE(bool(w)) << w.message();
    ASSERT_EQ(w->numGroupsPerRow, 5);

    QuantizedActivations x;
    x.rows = M;
    x.cols = K;
    std::uniform_int_distribution<int32_t> code(0, 255);
    std::uniform_int_distribution<int32_t> zero(100, 150);
    for (int64_t i = 0; i < M * K; ++i)
      x.codes.push_back(code(rng));
    for (int64_t m = 0; m < M; ++m) {
      x.scales.push_back(0.01 * double(m + 1));
      x.zeroPoints.push_back(zero(rng));
    }

    Expected<std::vector<double>> integer = referenceQuantizedLinear(x, *w);
    ASSERT_TRUE(bool(integer)) << integer.message();
    Expected<std::vector<double>> dequantized =
        referenceDequantizedLinear(x, *w);
    ASSERT_TRUE(bool(dequantized)) << dequantized.message();
    ASSERT_EQ(integer->size(), size_t(M * N));

    // A third, independent path: dequantizeGroupwise (float weights) and a
    // naive double loop. Float rounding of W_hat bounds the difference.
    std::vector<float> wHat = dequantizeGroupwise(*w);
    ASSERT_EQ(wHat.size(), size_t(N * K));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double naive = 0.0, magnitude = 0.0;
        for (int64_t k = 0; k < K; ++k) {
          double xv =
              x.scales[m] * double(x.codes[m * K + k] - x.zeroPoints[m]);
          naive += xv * double(wHat[n * K + k]);
          magnitude += std::fabs(xv * double(wHat[n * K + k]));
        }
        const size_t i = size_t(m * N + n);
        EXPECT_NEAR((*integer)[i], (*dequantized)[i], 1e-12 * (1 + magnitude))
            << "m " << m << " n " << n;
        EXPECT_NEAR((*integer)[i], naive, 1e-6 * (1 + magnitude))
            << "m " << m << " n " << n;
      }
  }
}

TEST(ReferenceGemmTest, ValidatesOperands) {
  QuantizedActivations x;
  x.rows = 1;
  x.cols = 4;
  x.codes = {2, -3, 4, 1};
  x.scales = {0.10};
  GroupwiseQuantizedWeights w =
      makeWeights(2, 4, 4, {1, 2, -1, 3, -2, 1, 2, 0}, {0.20, 0.25});
  ASSERT_TRUE(bool(referenceQuantizedLinear(x, w)));

  GroupwiseQuantizedWeights wrongK =
      makeWeights(2, 3, 4, {1, 2, 3, 4, 5, 6}, {0.2, 0.25});
  Expected<std::vector<double>> k = referenceQuantizedLinear(x, wrongK);
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.message(), "does not match")) << k.message();
  EXPECT_FALSE(referenceDequantizedLinear(x, wrongK));

  GroupwiseQuantizedWeights badGroups = w;
  badGroups.numGroupsPerRow = 2;
  EXPECT_FALSE(referenceQuantizedLinear(x, badGroups));
  GroupwiseQuantizedWeights badScales = w;
  badScales.scales.push_back(1.0);
  EXPECT_FALSE(referenceQuantizedLinear(x, badScales));
  GroupwiseQuantizedWeights badZeros = w;
  badZeros.zeroPoints = {0};
  EXPECT_FALSE(referenceQuantizedLinear(x, badZeros));
  GroupwiseQuantizedWeights nanScale = w;
  nanScale.scales[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(referenceQuantizedLinear(x, nanScale));

  QuantizedActivations badX = x;
  badX.scales.clear();
  EXPECT_FALSE(referenceQuantizedLinear(badX, w));
  badX = x;
  badX.codes.pop_back();
  EXPECT_FALSE(referenceQuantizedLinear(badX, w));
  badX = x;
  badX.zeroPoints = {0, 0};
  EXPECT_FALSE(referenceQuantizedLinear(badX, w));
  badX = x;
  badX.rows = 0;
  EXPECT_FALSE(referenceDequantizedLinear(badX, w));
}

TEST(ReferenceGemmTest, ReportsInt64AccumulatorOverflow) {
  // (2^31 - 1) - (-2^31) = 2^32 - 1 per operand: one product exceeds 2^63.
  QuantizedActivations x;
  x.rows = 1;
  x.cols = 1;
  x.codes = {std::numeric_limits<int32_t>::max()};
  x.scales = {1.0};
  x.zeroPoints = {std::numeric_limits<int32_t>::min()};
  GroupwiseQuantizedWeights w =
      makeWeights(1, 1, 1, {std::numeric_limits<int32_t>::max()}, {1.0},
                  {std::numeric_limits<int32_t>::min()});
  Expected<std::vector<double>> y = referenceQuantizedLinear(x, w);
  ASSERT_FALSE(y);
  EXPECT_TRUE(contains(y.message(), "overflow")) << y.message();
  EXPECT_TRUE(contains(y.message(), "group 0")) << y.message();
}

} // namespace
