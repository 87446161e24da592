//===- QuantizeTest.cpp - Quantizing a linear across threads --------------===//

#include "Quantize.h"

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
