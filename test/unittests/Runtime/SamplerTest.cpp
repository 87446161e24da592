//===- SamplerTest.cpp - top-k, top-p, min-p and the temperature ----------===//
//
// The cuts keep exactly the tokens llama.cpp's definitions keep, the draw
// only ever gives a kept token, every kept token is drawn at about its
// share, and a seed gives the same tokens every time.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/Sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

using namespace qtensor::runtime;

namespace {

// Probabilities (of the raw logits) 0.4, 0.3, 0.2, 0.1 at ids 3, 0, 2, 1.
const std::vector<float> kLogits = {float(std::log(0.3)), float(std::log(0.1)),
                                    float(std::log(0.2)), float(std::log(0.4))};

std::vector<int32_t> kept(SamplerOptions o) {
  return samplingCandidates(kLogits, o).ids;
}

TEST(Sampler, CutsKeepWhatLlamaCppKeeps) {
  SamplerOptions o;
  EXPECT_EQ(kept(o), (std::vector<int32_t>{0, 1, 2, 3})); // no cut
  o.topK = 2;
  EXPECT_EQ(kept(o), (std::vector<int32_t>{0, 3}));
  o = {};
  o.topK = 9; // more than the vocabulary: no cut
  EXPECT_EQ(kept(o), (std::vector<int32_t>{0, 1, 2, 3}));
  // top-p: the smallest prefix holding the mass (0.4 + 0.3 >= 0.65).
  o = {};
  o.topP = 0.65;
  EXPECT_EQ(kept(o), (std::vector<int32_t>{0, 3}));
  o.topP = 0.75;
  EXPECT_EQ(kept(o), (std::vector<int32_t>{0, 2, 3}));
  o.topP = 0.01; // at least the likeliest
  EXPECT_EQ(kept(o), (std::vector<int32_t>{3}));
  // min-p: p >= minP * p_max (0.4): 0.3 and 0.2 pass at 0.45, 0.1 does
  // not.
  o = {};
  o.minP = 0.45;
  EXPECT_EQ(kept(o), (std::vector<int32_t>{0, 2, 3}));
  o.minP = 1.0;
  EXPECT_EQ(kept(o), (std::vector<int32_t>{3}));
  // In order: top-k 3, then top-p over what is left (0.4 + 0.3 of 0.9).
  o = {};
  o.topK = 3;
  o.topP = 0.7;
  EXPECT_EQ(kept(o), (std::vector<int32_t>{0, 3}));
  // A tie keeps the lower id.
  EXPECT_EQ(samplingCandidates({1.0f, 2.0f, 2.0f}, {1.0, 1, 1.0, 0.0}).ids,
            (std::vector<int32_t>{1}));
}

TEST(Sampler, TheTemperatureScalesTheWeights) {
  SamplerOptions o;
  o.temperature = 0.5;
  SamplingCandidates c = samplingCandidates(kLogits, o);
  ASSERT_EQ(c.ids.size(), 4u);
  // exp((l - max) / T): (p / p_max)^(1 / T).
  EXPECT_NEAR(c.weights[3], 1.0, 1e-12);
  EXPECT_NEAR(c.weights[0], std::pow(0.3 / 0.4, 2.0), 1e-6);
  EXPECT_NEAR(c.weights[1], std::pow(0.1 / 0.4, 2.0), 1e-6);
}

TEST(Sampler, DrawsOnlyKeptTokensAtTheirShareAndRepeatsWithASeed) {
  SamplerOptions o;
  o.topK = 3;
  std::mt19937_64 rng(7);
  std::map<int32_t, int> counts;
  const int n = 20000;
  std::vector<int32_t> first;
  for (int i = 0; i < n; ++i) {
    auto id = sampleToken(kLogits, o, rng);
    ASSERT_TRUE(id) << id.message();
    ++counts[*id];
    if (i < 32)
      first.push_back(*id);
  }
  EXPECT_EQ(counts.count(1), 0u); // cut by top-k
  // 0.4, 0.3, 0.2 renormalized over 0.9; a 5-sigma band of 20000 draws.
  for (auto [id, p] :
       {std::pair<int32_t, double>{3, 4.0 / 9}, {0, 3.0 / 9}, {2, 2.0 / 9}}) {
    double sigma = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(double(counts[id]) / n, p, 5 * sigma) << id;
  }
  std::mt19937_64 again(7);
  for (int32_t want : first)
    EXPECT_EQ(*sampleToken(kLogits, o, again), want);
}

TEST(Sampler, RefusesBadOptionsAndLogits) {
  SamplerOptions o;
  EXPECT_TRUE(validateSamplerOptions(o));
  o.temperature = 0;
  EXPECT_FALSE(validateSamplerOptions(o));
  o = {};
  o.topP = 0;
  EXPECT_NE(validateSamplerOptions(o).message().find(
                "sampling: top-p must be in (0, 1], got 0"),
            std::string::npos);
  o = {};
  o.minP = 1.5;
  EXPECT_FALSE(validateSamplerOptions(o));
  o = {};
  o.topK = -1;
  EXPECT_FALSE(validateSamplerOptions(o));
  std::mt19937_64 rng(1);
  std::vector<float> nan = kLogits;
  nan[2] = std::numeric_limits<float>::quiet_NaN();
  auto r = sampleToken(nan, {}, rng);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("token 2"), std::string::npos) << r.message();
  EXPECT_FALSE(sampleToken({}, {}, rng));
}

/// llama.cpp's penalties: divide a positive logit, multiply a negative
/// one, then subtract count x frequency + presence, over the last N of the
/// history only.
TEST(Sampler, PenaltiesAreLlamaCppsOverTheLastTokens) {
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f};
  PenaltyOptions o;
  o.repeat = 2.0;
  o.frequency = 0.25;
  o.presence = 0.5;
  o.lastN = 3;
  // Token 3 is outside the window of 3; 0 is seen twice, 1 once.
  ASSERT_TRUE(applyPenalties(logits, {3, 0, 1, 0}, o));
  EXPECT_EQ(logits[0], 2.0f / 2 - 2 * 0.25f - 0.5f);
  EXPECT_EQ(logits[1], -1.0f * 2 - 0.25f - 0.5f);
  EXPECT_EQ(logits[2], 0.5f);
  EXPECT_EQ(logits[3], 3.0f);
  EXPECT_EQ(firstArgmax(logits), 3);
  // Off: nothing changes; a window of 0 is off.
  std::vector<float> same = {2.0f, -1.0f};
  ASSERT_TRUE(applyPenalties(same, {0, 1}, PenaltyOptions{}));
  o.lastN = 0;
  ASSERT_TRUE(applyPenalties(same, {0, 1}, o));
  EXPECT_EQ(same, (std::vector<float>{2.0f, -1.0f}));
  // The first maximum, as the argmax kernel.
  EXPECT_EQ(firstArgmax({1.0f, 5.0f, 5.0f}), 1);
  // A history token outside the vocabulary is refused by id.
  o.lastN = 8;
  auto bad = applyPenalties(same, {7}, o);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("history token 7"), std::string::npos);
  o.repeat = 0;
  EXPECT_FALSE(validatePenaltyOptions(o));
  o.repeat = 1.1;
  o.presence = 101;
  EXPECT_FALSE(validatePenaltyOptions(o));
}

} // namespace
