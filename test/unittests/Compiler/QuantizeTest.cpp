//===- QuantizeTest.cpp - Quantizing a linear across threads --------------===//

#include "Quantize.h"

#include "qtensor/Descriptor/ScaleFormat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace qtensor;
using namespace qtensor::compiler;

namespace {

std::vector<float> weights(int64_t n, int64_t k) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(size_t(n * k));
  for (float &v : w)
    v = normal(rng);
  return w;
}

// Row ranges on the thread pool give the one-call result bit for bit
// (with one hardware thread the pool has no workers and both are one call).
TEST(Quantize, RowRangesInParallelEqualOneCall) {
  const int64_t n = 301, k = 2000; // two ranges of at least 2^18 weights
  std::vector<float> w = weights(n, k);
  for (bool symmetric : {true, false}) {
    GroupwiseConfig config;
    config.bits = 4;
    config.symmetric = symmetric;
    config.groupSize = 128;
    config.scaleFormat = FloatFormat::F16;
    auto one = quantizeGroupwise(w.data(), n, k, config);
    auto split = quantizeRowsInParallel(w.data(), n, k, config);
    ASSERT_TRUE(bool(one) && bool(split));
    EXPECT_EQ(split->rows, n);
    EXPECT_EQ(split->codes, one->codes);
    EXPECT_EQ(split->scales, one->scales);
    EXPECT_EQ(split->zeroPoints, one->zeroPoints);
  }
}

// A failure in any range is reported as one call reports it: the row is
// the tensor's, not the range's.
TEST(Quantize, RowRangesReportTheWholeTensorsRow) {
  const int64_t n = 301, k = 2000;
  std::vector<float> w = weights(n, k);
  w[size_t(250 * k + 7)] = NAN; // in the second range
  GroupwiseConfig config;
  config.nonfinitePolicy = NonfinitePolicy::Reject;
  auto one = quantizeGroupwise(w.data(), n, k, config);
  auto split = quantizeRowsInParallel(w.data(), n, k, config);
  ASSERT_FALSE(bool(one));
  ASSERT_FALSE(bool(split));
  EXPECT_EQ(split.message(), one.message());
  EXPECT_NE(split.message().find("250"), std::string::npos) << split.message();
}

} // namespace

// MXFP4 (OCP MX v1.0): amax 3 gives 2^(floor(log2 3) - 2) = 0.5, and every
// value of the group is then an exact E2M1 multiple of it; ties go to the
// even code (0.125 / 0.5 = 0.25 -> 0, 1.25 / 0.5 = 2.5 -> 2).
TEST(QuantizeFP4, MXFP4GroupTakesOCPScaleAndNearestValues) {
  std::vector<float> w(32, 0.0f);
  const float values[] = {3.0f, -1.5f, 0.5f, 0.125f, 1.25f, -0.75f, 2.0f};
  std::copy(std::begin(values), std::end(values), w.begin());
  auto q = quantizeFP4(FP4Format::MXFP4, w.data(), 1, 32);
  ASSERT_TRUE(q) << q.message();
  ASSERT_EQ(q->scales.size(), 1u);
  EXPECT_EQ(q->scales[0], 0.5f);
  // 3/0.5 = 6 (code 7), -3 (13), 1 (2), 0.25 tie 0|0.5 -> 0 (code 0), 2.5
  // tie 2|3 -> 2 (code 4), -1.5 (11), 4 (6).
  EXPECT_EQ(std::vector<int32_t>(q->codes.begin(), q->codes.begin() + 7),
            (std::vector<int32_t>{7, 13, 2, 0, 4, 11, 6}));
  std::vector<float> back = dequantizeFP4(*q, 32);
  EXPECT_EQ(back[0], 3.0f);
  EXPECT_EQ(back[1], -1.5f);
  EXPECT_EQ(back[4], 1.0f);
}

// NVFP4: the scale is an unsigned e4m3 value (amax 6 -> 1.0, exact), and
// the squared error decides between the two nearest codes.
TEST(QuantizeFP4, NVFP4ScalesAreUE4M3Values) {
  std::vector<float> w = weights(4, 64);
  auto q = quantizeFP4(FP4Format::NVFP4, w.data(), 4, 64);
  ASSERT_TRUE(q) << q.message();
  ASSERT_EQ(q->scales.size(), 16u);
  for (float s : q->scales)
    EXPECT_TRUE(encodeScaleExact(ScaleFormat::UE4M3, s)) << s;
  std::vector<float> back = dequantizeFP4(*q, 64);
  double signal = 0, noise = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    signal += double(w[i]) * w[i];
    noise += (double(back[i]) - w[i]) * (double(back[i]) - w[i]);
  }
  // FP4 with a scale per 16 on Gaussian weights: about 10% relative error.
  EXPECT_LT(std::sqrt(noise / signal), 0.15);
  EXPECT_EQ(fp4Logical(FP4Format::NVFP4, 4, 64, FloatType::F16)
                .descriptor.scaleFormat,
            ScaleFormat::UE4M3);
}

TEST(QuantizeFP4, RefusesWhatItCannotStore) {
  std::vector<float> w(48, 1.0f);
  auto ragged = quantizeFP4(FP4Format::MXFP4, w.data(), 1, 48);
  ASSERT_FALSE(ragged);
  EXPECT_EQ(ragged.message(), "mxfp4 stores groups of 32 along K; K = 48 is "
                              "not a multiple");
  w[37] = NAN;
  auto nan = quantizeFP4(FP4Format::NVFP4, w.data(), 1, 48);
  ASSERT_FALSE(nan);
  EXPECT_EQ(nan.message(), "element 37 (row 0, column 37) is not finite");
  auto spec = parseQuantSpec("nvfp4");
  ASSERT_TRUE(spec) << spec.message();
  EXPECT_EQ(spec->fp4, FP4Format::NVFP4);
  EXPECT_FALSE(parseQuantSpec("mxfp4:g64"));
}

// FP8 (E4M3): per-channel scale amax / 448 in f16; every code's value times
// it is the reconstruction, the largest magnitude maps to 448 (code 0x7e),
// and no code is NaN.
TEST(QuantizeFP8, CodesAreE4M3ValuesUnderAChannelScale) {
  std::vector<float> w = weights(3, 96);
  w[5] = 0.0f;
  auto q = quantizeFP8(w.data(), 3, 96, FloatType::F16);
  ASSERT_TRUE(q) << q.message();
  ASSERT_EQ(q->scales.size(), 3u);
  const std::vector<float> &table = codebookValues(Codebook::E4M3);
  for (int32_t c : q->codes) {
    ASSERT_TRUE(c >= 0 && c < 256);
    EXPECT_FALSE(std::isnan(table[size_t(c)])) << c;
  }
  EXPECT_EQ(q->codes[5], 0);
  for (int64_t r = 0; r < 3; ++r) {
    float amax = 0;
    for (int64_t i = 0; i < 96; ++i)
      amax = std::max(amax, std::fabs(w[size_t(r * 96 + i)]));
    EXPECT_NEAR(q->scales[size_t(r)], amax / 448, amax / 448 * 1e-3);
  }
  std::vector<float> back = dequantizeFP8(*q, 96);
  double signal = 0, noise = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    signal += double(w[i]) * w[i];
    noise += (double(back[i]) - w[i]) * (double(back[i]) - w[i]);
  }
  // Three mantissa bits: about 2-3% relative error on Gaussian weights.
  EXPECT_LT(std::sqrt(noise / signal), 0.04);
  EXPECT_EQ(fp8Logical(3, 96, FloatType::BF16).descriptor.scaleType,
            FloatType::BF16);
  auto spec = parseQuantSpec("fp8");
  ASSERT_TRUE(spec) << spec.message();
  EXPECT_TRUE(spec->fp8);
  w[200] = INFINITY;
  auto inf = quantizeFP8(w.data(), 3, 96, FloatType::F16);
  ASSERT_FALSE(inf);
  EXPECT_EQ(inf.message(), "element 200 (row 2, column 8) is not finite");
}

// w8a8: weights as w8a16 (per channel, symmetric by default; groups of 16
// too), activations per token, symmetric unless a8asym.
TEST(QuantSpec, W8A8FormsAndRefusals) {
  auto plain = parseQuantSpec("w8a8");
  ASSERT_TRUE(plain) << plain.message();
  EXPECT_EQ(plain->bits, 8u);
  EXPECT_EQ(plain->groupSize, 0);
  EXPECT_TRUE(plain->symmetric);
  EXPECT_EQ(plain->activationQuant, kernels::ActivationQuant::PerTokenSym);
  auto full = parseQuantSpec("w8a8:g16:asym:a8asym");
  ASSERT_TRUE(full) << full.message();
  EXPECT_EQ(full->groupSize, 16);
  EXPECT_FALSE(full->symmetric);
  EXPECT_EQ(full->activationQuant, kernels::ActivationQuant::PerTokenAsym);
  auto ch = parseQuantSpec("w8a8:gch:a8sym");
  ASSERT_TRUE(ch) << ch.message();
  EXPECT_EQ(ch->groupSize, 0);
  EXPECT_EQ(parseQuantSpec("w8a16")->activationQuant,
            kernels::ActivationQuant::None);
  EXPECT_FALSE(parseQuantSpec("w8a16:g16"));
  EXPECT_FALSE(parseQuantSpec("w8a16:a8sym"));
  auto g48 = parseQuantSpec("w8a8:g48");
  ASSERT_FALSE(g48);
  EXPECT_EQ(g48.message(), "--quant w8a8:g48: group size 48 is not one of "
                           "16, 32, 64, 128, 256 or ch");
  auto twice = parseQuantSpec("w8a8:a8sym:a8asym");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.message().find("unexpected \"a8asym\""), std::string::npos);
}
