//===- GroupwiseTest.cpp - Row-bounded group-wise quantization ------------===//
//
// Seed M8.1 0x04 (row-bounded groups, short tails), 0x02E (constant and
// nonfinite groups), 0x03 (|error| <= s/2 inside the range), 0x04A
// (dequant_weight).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/Groupwise.h"
#include "qtensor/Numerics/Affine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace qtensor;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

GroupwiseConfig asym4(int64_t groupSize) {
  GroupwiseConfig config;
  config.bits = 4;
  config.symmetric = false;
  config.groupSize = groupSize;
  return config;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// N=3, K=5, G=4: two groups per row, the second a one-column tail.
const std::vector<float> kTailWeights = {
    -3.0f, 0.0f, 5.0f, 12.0f, 7.5f,  // row 0: range [-3, 12] | tail [0, 7.5]
    1.0f,  2.0f, 3.0f, 4.0f,  -1.5f, // row 1: [0, 4]         | [-1.5, 0]
    2.0f,  2.0f, 2.0f, 2.0f,  0.0f,  // row 2: constant 2     | all-zero tail
};

TEST(GroupwiseTest, RowBoundedTailGroupsStoreOwnMetadata) {
  GroupwiseConfig config = asym4(4);
  config.constantPolicy = ConstantGroupPolicy::UnitScale;
  Expected<GroupwiseQuantized> q =
      quantizeGroupwise(kTailWeights.data(), 3, 5, config);
  ASSERT_TRUE(bool(q)) << q.message();
  EXPECT_EQ(q->numGroupsPerRow, 2);
  EXPECT_EQ(q->numGroups(), 6); // not ceil(15 / 4) = 4
  ASSERT_EQ(q->scales.size(), 6u);
  ASSERT_EQ(q->zeroPoints.size(), 6u);
  ASSERT_EQ(q->codes.size(), 15u);
  EXPECT_EQ(q->range, (CodeRange{0, 15}));
  EXPECT_TRUE(bool(validateGroupwise(*q)));

  // Row 0, group 0: [-3, 12] -> s = 1, z = 3; codes are x + 3.
  EXPECT_EQ(q->scales[0], 1.0);
  EXPECT_EQ(q->zeroPoints[0], 3);
  EXPECT_EQ(std::vector<int32_t>(q->codes.begin(), q->codes.begin() + 4),
            (std::vector<int32_t>{0, 3, 8, 15}));
  // Row 0 tail (one column): its own range [0, 7.5] -> s = 0.5, z = 0.
  EXPECT_EQ(q->scales[1], 0.5);
  EXPECT_EQ(q->zeroPoints[1], 0);
  EXPECT_EQ(q->codes[4], 15);
  // Row 1, group 0: [0, 4] (zero included) -> s = 4/15, z = 0.
  EXPECT_DOUBLE_EQ(q->scales[2], 4.0 / 15.0);
  EXPECT_EQ(q->zeroPoints[2], 0);
  EXPECT_EQ(q->codes[8], 15);
  // Row 1 tail: [-1.5, 0] -> s = 0.1, z = 15, code 0.
  EXPECT_NEAR(q->scales[3], 0.1, 1e-15);
  EXPECT_EQ(q->zeroPoints[3], 15);
  EXPECT_EQ(q->codes[9], 0);
  // Row 2, group 0: nonzero constant 2 -> range [0, 2], reconstructs 2.
  EXPECT_DOUBLE_EQ(q->scales[4], 2.0 / 15.0);
  EXPECT_EQ(q->zeroPoints[4], 0);
  for (int k = 10; k < 14; ++k)
    EXPECT_EQ(q->codes[k], 15);
  // Row 2 tail: all zeros under UnitScale -> scale 1, codes = zero-point.
  EXPECT_EQ(q->scales[5], 1.0);
  EXPECT_EQ(q->zeroPoints[5], 0);
  EXPECT_EQ(q->codes[14], q->zeroPoints[5]);

  std::vector<float> back = dequantizeGroupwise(*q);
  ASSERT_EQ(back.size(), 15u);
  // Every value sits on a grid point except row 1's 1, 2, 3, which land on
  // the nearest multiple of s = 4/15 (codes 4, 8, 11).
  for (size_t i : {0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14})
    EXPECT_NEAR(back[i], kTailWeights[i], 1e-6) << i;
  EXPECT_EQ(q->codes[5], 4);
  EXPECT_EQ(q->codes[6], 8);
  EXPECT_EQ(q->codes[7], 11);
  for (size_t i : {5, 6, 7})
    EXPECT_LE(std::fabs(back[i] - kTailWeights[i]), 2.0 / 15 + 1e-6) << i;
  EXPECT_EQ(back[1], 0.0f); // exact zero survives (M8.1 0x02A)
  EXPECT_EQ(back[14], 0.0f);
}

TEST(GroupwiseTest, ConstantGroupRejectNamesRowAndGroup) {
  Expected<GroupwiseQuantized> q =
      quantizeGroupwise(kTailWeights.data(), 3, 5, asym4(4));
  ASSERT_FALSE(q);
  EXPECT_TRUE(contains(q.message(), "row 2, group 1")) << q.message();
  EXPECT_TRUE(contains(q.message(), "column 4")) << q.message();
  EXPECT_TRUE(contains(q.message(), "all-zero")) << q.message();
}

TEST(GroupwiseTest, SymmetricConstantGroups) {
  GroupwiseConfig config;
  config.bits = 4;
  config.symmetric = true;
  config.narrow = true;
  config.groupSize = 2;
  const std::vector<float> w = {-0.7f, -0.7f, 0.0f, 0.0f};
  Expected<GroupwiseQuantized> rejected =
      quantizeGroupwise(w.data(), 1, 4, config);
  ASSERT_FALSE(rejected);
  EXPECT_TRUE(contains(rejected.message(), "row 0, group 1"));
  config.constantPolicy = ConstantGroupPolicy::UnitScale;
  Expected<GroupwiseQuantized> q = quantizeGroupwise(w.data(), 1, 4, config);
  ASSERT_TRUE(bool(q)) << q.message();
  EXPECT_TRUE(q->zeroPoints.empty());
  EXPECT_EQ(q->range, (CodeRange{-7, 7}));
  // Nonzero constant: absMax = 0.7, scale 0.1, codes -7.
  EXPECT_NEAR(q->scales[0], 0.1, 1e-8);
  EXPECT_EQ(q->codes, (std::vector<int32_t>{-7, -7, 0, 0}));
  EXPECT_EQ(q->scales[1], 1.0);
  std::vector<float> back = dequantizeGroupwise(*q);
  EXPECT_NEAR(back[0], -0.7f, 1e-6);
  EXPECT_EQ(back[2], 0.0f);
}

TEST(GroupwiseTest, NonfiniteReject) {
  std::vector<float> w = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, kNaN, 7.0f, 8.0f};
  Expected<GroupwiseQuantized> q = quantizeGroupwise(w.data(), 2, 4, asym4(2));
  ASSERT_FALSE(q);
  EXPECT_TRUE(contains(q.message(), "row 1, group 0")) << q.message();
  EXPECT_TRUE(contains(q.message(), "column 1")) << q.message();
  EXPECT_TRUE(contains(q.message(), "nan")) << q.message();
  w[5] = -kInf;
  Expected<GroupwiseQuantized> inf =
      quantizeGroupwise(w.data(), 2, 4, asym4(2));
  ASSERT_FALSE(inf);
  EXPECT_TRUE(contains(inf.message(), "-inf")) << inf.message();
}

TEST(GroupwiseTest, NonfiniteExcludedFromRange) {
  // Finite values [-5, 10]: s = 1, z = 5, unaffected by the inf values.
  const std::vector<float> w = {-5.0f, kNaN, kInf, -kInf, 10.0f, 2.0f};
  GroupwiseConfig config = asym4(6);
  config.nonfinitePolicy = NonfinitePolicy::ExcludeFromRange;
  Expected<GroupwiseQuantized> q = quantizeGroupwise(w.data(), 1, 6, config);
  ASSERT_TRUE(bool(q)) << q.message();
  EXPECT_EQ(q->scales[0], 1.0);
  EXPECT_EQ(q->zeroPoints[0], 5);
  // NaN -> zero-point, +inf -> qmax, -inf -> qmin.
  EXPECT_EQ(q->codes, (std::vector<int32_t>{0, 5, 15, 0, 15, 7}));
  std::vector<float> back = dequantizeGroupwise(*q);
  EXPECT_EQ(back[1], 0.0f);
  EXPECT_EQ(back[2], 10.0f);
  EXPECT_EQ(back[3], -5.0f);

  // Symmetric narrow: -inf -> -Q.
  GroupwiseConfig sym = config;
  sym.symmetric = true;
  sym.narrow = true;
  Expected<GroupwiseQuantized> s = quantizeGroupwise(w.data(), 1, 6, sym);
  ASSERT_TRUE(bool(s)) << s.message();
  EXPECT_DOUBLE_EQ(s->scales[0], 10.0 / 7.0);
  EXPECT_EQ(s->codes[1], 0);
  EXPECT_EQ(s->codes[2], 7);
  EXPECT_EQ(s->codes[3], -7);
  EXPECT_EQ(s->codes[4], 7);

  // A group with no finite value is degenerate: constant policy decides.
  const std::vector<float> allBad = {kNaN, kInf};
  Expected<GroupwiseQuantized> none =
      quantizeGroupwise(allBad.data(), 1, 2, config);
  ASSERT_FALSE(none);
  EXPECT_TRUE(contains(none.message(), "no finite values")) << none.message();
  config.constantPolicy = ConstantGroupPolicy::UnitScale;
  Expected<GroupwiseQuantized> unit =
      quantizeGroupwise(allBad.data(), 1, 2, config);
  ASSERT_TRUE(bool(unit)) << unit.message();
  EXPECT_EQ(unit->codes, (std::vector<int32_t>{0, 15}));
}

TEST(GroupwiseTest, GroupLargerThanRowAndPerChannel) {
  const std::vector<float> w = {-3.0f, 0.0f, 5.0f, 12.0f, 7.5f,
                                0.0f,  1.0f, 2.0f, 3.0f,  15.0f};
  for (int64_t g :
       {int64_t(5), int64_t(128), std::numeric_limits<int64_t>::max()}) {
    Expected<GroupwiseQuantized> q =
        quantizeGroupwise(w.data(), 2, 5, asym4(g));
    ASSERT_TRUE(bool(q)) << q.message();
    EXPECT_EQ(q->numGroupsPerRow, 1) << g;
    ASSERT_EQ(q->scales.size(), 2u);
    EXPECT_EQ(q->scales[0], 1.0); // row 0: [-3, 12]
    EXPECT_EQ(q->zeroPoints[0], 3);
    EXPECT_EQ(q->scales[1], 1.0); // row 1: [0, 15]
    EXPECT_EQ(q->zeroPoints[1], 0);
    // 7.5 + 3: round(7.5) = 8 (ties to even) before adding z, so 11.
    EXPECT_EQ(q->codes, (std::vector<int32_t>{0, 3, 8, 15, 11, 0, 1, 2, 3, 15}))
        << g;
  }
}

TEST(GroupwiseTest, GroupSizeOneIsPerValue) {
  const std::vector<float> w = {0.3f, -2.0f, 0.0f, 100.0f};
  GroupwiseConfig config = asym4(1);
  config.constantPolicy = ConstantGroupPolicy::UnitScale;
  Expected<GroupwiseQuantized> q = quantizeGroupwise(w.data(), 1, 4, config);
  ASSERT_TRUE(bool(q)) << q.message();
  EXPECT_EQ(q->numGroupsPerRow, 4);
  std::vector<float> back = dequantizeGroupwise(*q);
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(back[i], w[i], 1e-5 * std::fabs(w[i])) << i;
}

TEST(GroupwiseTest, RoundingModeIsHonoured) {
  // Range [0, 15] -> s = 1, z = 0, so codes are the rounded values.
  const std::vector<float> w = {0.0f, 2.5f, 0.6f, 15.0f};
  auto codesWith = [&](RoundingMode mode) {
    GroupwiseConfig config = asym4(4);
    config.rounding = mode;
    Expected<GroupwiseQuantized> q = quantizeGroupwise(w.data(), 1, 4, config);
    EXPECT_TRUE(bool(q)) << (q ? "" : q.message());
    return q ? q->codes : std::vector<int32_t>{};
  };
  EXPECT_EQ(codesWith(RoundingMode::NearestEven),
            (std::vector<int32_t>{0, 2, 1, 15}));
  EXPECT_EQ(codesWith(RoundingMode::NearestAway),
            (std::vector<int32_t>{0, 3, 1, 15}));
  EXPECT_EQ(codesWith(RoundingMode::TowardZero),
            (std::vector<int32_t>{0, 2, 0, 15}));
}

struct RoundTripCase {
  unsigned bits;
  bool symmetric;
  bool narrow;
  int64_t groupSize;
};

TEST(GroupwiseTest, RoundTripErrorWithinHalfStep) {
  const int64_t N = 7, K = 37;
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(N * K);
  for (float &v : w)
    v = dist(rng);
  w[3] = 0.0f;
  w[K + 36] = 0.0f; // a zero in a tail group
  for (RoundTripCase c :
       {RoundTripCase{4, false, false, 8}, RoundTripCase{4, true, true, 8},
        RoundTripCase{4, true, false, 8}, RoundTripCase{8, false, false, 16},
        RoundTripCase{8, true, true, 5}, RoundTripCase{2, false, false, 3},
        RoundTripCase{3, true, true, 37},
        RoundTripCase{16, false, false, 10}}) {
    GroupwiseConfig config;
    config.bits = c.bits;
    config.symmetric = c.symmetric;
    config.narrow = c.narrow;
    config.groupSize = c.groupSize;
    // With G = 3 the planted zero at column 36 is a one-value all-zero tail.
    config.constantPolicy = ConstantGroupPolicy::UnitScale;
    Expected<GroupwiseQuantized> q = quantizeGroupwise(w.data(), N, K, config);
    ASSERT_TRUE(bool(q)) << q.message();
    ASSERT_TRUE(bool(validateGroupwise(*q)));
    const int64_t groups = (K + c.groupSize - 1) / c.groupSize;
    ASSERT_EQ(q->numGroupsPerRow, groups);
    ASSERT_EQ(q->scales.size(), size_t(N * groups));
    EXPECT_EQ(q->zeroPoints.size(), c.symmetric ? 0u : size_t(N * groups));
    std::vector<float> back = dequantizeGroupwise(*q);
    ASSERT_EQ(back.size(), w.size());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) {
        const double s = q->scales[n * groups + k / c.groupSize];
        const size_t i = size_t(n * K + k);
        EXPECT_TRUE(q->range.contains(q->codes[i]));
        EXPECT_LE(std::fabs(double(back[i]) - double(w[i])),
                  s / 2 * (1 + 1e-9) + 1e-6 * std::fabs(w[i]))
            << "bits " << c.bits << " n " << n << " k " << k;
      }
    EXPECT_EQ(back[3], 0.0f);
    EXPECT_EQ(back[K + 36], 0.0f);
  }
}

// The per-group loop is branch-free and vectorized (AVX2 where the CPU has
// it); every code must still be the per-value rule's: quantizeClamped under
// the group's parameters, qmax / qmin for +-inf, the zero-point for NaN.
// Values sit on exact ties of x / s, at and beyond the saturation points,
// near zero with either sign, and span subnormal to huge magnitudes, with
// group sizes that leave every lane count as a tail.
TEST(GroupwiseTest, EveryCodeIsThePerValueRule) {
  std::mt19937 rng(77);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 9);
  const int64_t N = 5, K = 203;
  for (GroupwiseConfig config :
       {asym4(128), asym4(7), asym4(32), GroupwiseConfig{}}) {
    for (bool symmetric : {false, true}) {
      for (bool f16Scales : {false, true}) {
        config.symmetric = symmetric;
        config.bits = symmetric ? 4 : 3;
        config.constantPolicy = ConstantGroupPolicy::UnitScale;
        config.nonfinitePolicy = NonfinitePolicy::ExcludeFromRange;
        if (f16Scales)
          config.scaleFormat = FloatFormat::F16;
        else
          config.scaleFormat.reset();
        std::vector<float> w(size_t(N * K));
        for (float &v : w) {
          switch (pick(rng)) {
          case 0: // an exact tie in units of a power-of-two scale
            v = (float(int(normal(rng) * 8)) + 0.5f) * 0.125f;
            break;
          case 1:
            v = pick(rng) < 5 ? -0.0f : 0.0f;
            break;
          case 2:
            // subnormal (f16 scales cannot hold a scale that small)
            v = normal(rng) * (f16Scales ? 1e-3f : 1e-40f);
            break;
          case 3:
            v = pick(rng) < 3 ? kNaN : (pick(rng) < 5 ? kInf : -kInf);
            break;
          case 4:
            v = normal(rng) * (f16Scales ? 3e3f : 1e30f);
            break;
          default:
            v = normal(rng);
          }
        }
        Expected<GroupwiseQuantized> q =
            quantizeGroupwise(w.data(), N, K, config);
        ASSERT_TRUE(bool(q)) << q.message();
        const int64_t groups = q->numGroupsPerRow;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t k = 0; k < K; ++k) {
            const size_t meta = size_t(n * groups + k / config.groupSize);
            const AffineParams params{
                q->scales[meta], symmetric ? 0 : int64_t(q->zeroPoints[meta])};
            const double x = w[size_t(n * K + k)];
            const int64_t expected =
                std::isnan(x)   ? params.zeroPoint
                : std::isinf(x) ? (x > 0 ? q->range.qmax : q->range.qmin)
                                : quantizeClamped(x, params, q->range,
                                                  RoundingMode::NearestEven);
            ASSERT_EQ(q->codes[size_t(n * K + k)], expected)
                << "value " << x << " at row " << n << ", column " << k
                << ", group size " << config.groupSize
                << (symmetric ? ", symmetric" : ", asymmetric");
          }
      }
    }
  }
}

TEST(GroupwiseTest, ValidatesShapeAndConfig) {
  const std::vector<float> w(16, 1.0f);
  Expected<GroupwiseQuantized> zeroRows =
      quantizeGroupwise(w.data(), 0, 4, asym4(4));
  ASSERT_FALSE(zeroRows);
  EXPECT_TRUE(contains(zeroRows.message(), "N must be positive"));
  EXPECT_FALSE(quantizeGroupwise(w.data(), 4, 0, asym4(4)));
  EXPECT_FALSE(quantizeGroupwise(w.data(), -1, 4, asym4(4)));
  Expected<GroupwiseQuantized> zeroGroup =
      quantizeGroupwise(w.data(), 4, 4, asym4(0));
  ASSERT_FALSE(zeroGroup);
  EXPECT_TRUE(contains(zeroGroup.message(), "G must be positive"));
  EXPECT_FALSE(quantizeGroupwise(w.data(), 4, 4, asym4(-4)));
  Expected<GroupwiseQuantized> overflow =
      quantizeGroupwise(w.data(), int64_t(1) << 32, int64_t(1) << 32, asym4(4));
  ASSERT_FALSE(overflow);
  EXPECT_TRUE(contains(overflow.message(), "overflow")) << overflow.message();
  EXPECT_FALSE(quantizeGroupwise(nullptr, 4, 4, asym4(4)));

  GroupwiseConfig narrowAsym = asym4(4);
  narrowAsym.narrow = true;
  Expected<GroupwiseQuantized> na =
      quantizeGroupwise(w.data(), 4, 4, narrowAsym);
  ASSERT_FALSE(na);
  EXPECT_TRUE(contains(na.message(), "symmetric"));
  GroupwiseConfig bits0 = asym4(4);
  bits0.bits = 0;
  EXPECT_FALSE(quantizeGroupwise(w.data(), 4, 4, bits0));
  GroupwiseConfig bits32 = asym4(4);
  bits32.bits = 32;
  Expected<GroupwiseQuantized> wide = quantizeGroupwise(w.data(), 4, 4, bits32);
  ASSERT_FALSE(wide);
  EXPECT_TRUE(contains(wide.message(), "int32"));
  GroupwiseConfig sym1 = asym4(4);
  sym1.symmetric = true;
  sym1.bits = 1;
  EXPECT_FALSE(quantizeGroupwise(w.data(), 4, 4, sym1));
}

TEST(GroupwiseTest, ValidateAndDequantizeRejectInconsistentTensors) {
  const std::vector<float> w = {1.0f, -1.0f, 0.5f, 0.25f, 2.0f, -2.0f};
  Expected<GroupwiseQuantized> q = quantizeGroupwise(w.data(), 2, 3, asym4(2));
  ASSERT_TRUE(bool(q)) << q.message();
  ASSERT_TRUE(bool(validateGroupwise(*q)));

  GroupwiseQuantized badGroups = *q;
  badGroups.numGroupsPerRow = 1;
  EXPECT_FALSE(validateGroupwise(badGroups));
  GroupwiseQuantized badScale = *q;
  badScale.scales[3] = 0.0;
  Status s = validateGroupwise(badScale);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), "row 1, group 1")) << s.message();
  GroupwiseQuantized badCode = *q;
  badCode.codes[4] = 16;
  Status c = validateGroupwise(badCode);
  ASSERT_FALSE(c);
  EXPECT_TRUE(contains(c.message(), "row 1, column 1")) << c.message();
  GroupwiseQuantized badZeros = *q;
  badZeros.zeroPoints.pop_back();
  EXPECT_FALSE(validateGroupwise(badZeros));
  EXPECT_TRUE(dequantizeGroupwise(badZeros).empty());
  GroupwiseQuantized badCodes = *q;
  badCodes.codes.pop_back();
  EXPECT_TRUE(dequantizeGroupwise(badCodes).empty());
}

} // namespace
