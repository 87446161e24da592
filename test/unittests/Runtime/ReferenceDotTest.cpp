//===- ReferenceDotTest.cpp - The reference's one summation order ---------===//

#include "qtensor/Runtime/ReferenceDot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace qtensor::runtime;

namespace {

/// The order ReferenceDot.h states, one element at a time: element i into
/// lane i % 16, then the lanes pairwise (l + 8, + 4, + 2, + 1).
double inLanes(const double *x, const double *w, int64_t k, bool magnitude) {
  double lane[kReferenceDotLanes] = {};
  for (int64_t i = 0; i < k; ++i) {
    const double p = x[i] * w[i];
    lane[i % kReferenceDotLanes] += magnitude ? std::fabs(p) : p;
  }
  for (int64_t width = kReferenceDotLanes / 2; width >= 1; width /= 2)
    for (int64_t l = 0; l < width; ++l)
      lane[l] += lane[l + width];
  return lane[0];
}

std::vector<double> randomValues(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  // Magnitudes over many binades, so that every order rounds differently.
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<double> v(n);
  for (double &x : v)
    x = std::ldexp(mantissa(gen), exponent(gen));
  return v;
}

// Every row gives the same bits whichever block of rows it is dotted in, and
// those bits are the stated lane order's (on this CPU's clone of the
// function: AVX-512, AVX2 or SSE2), for K below, at and past the lanes.
TEST(ReferenceDot, OneOrderWhateverTheBlockAndTheCpu) {
  for (int64_t k : {1, 15, 16, 17, 100, 4099}) {
    const std::vector<double> x = randomValues(size_t(4 * k), uint32_t(k));
    const std::vector<double> w = randomValues(size_t(k), uint32_t(k + 1));
    for (int64_t rows = 1; rows <= kReferenceDotRows; ++rows) {
      double dot[kReferenceDotRows], mag[kReferenceDotRows];
      referenceDots(x.data(), rows, k, w.data(), dot, mag);
      double plain[kReferenceDotRows];
      referenceDots(x.data(), rows, k, w.data(), plain, nullptr);
      for (int64_t j = 0; j < rows; ++j) {
        const double *xj = x.data() + j * k;
        EXPECT_EQ(dot[j], inLanes(xj, w.data(), k, false))
            << "K = " << k << ", row " << j << " of " << rows;
        EXPECT_EQ(plain[j], dot[j]) << "K = " << k;
        EXPECT_EQ(mag[j], inLanes(xj, w.data(), k, true)) << "K = " << k;
      }
    }
  }
}

// The order is the lanes', not the index order: on values where the two
// round differently, the function agrees with the lanes.
TEST(ReferenceDot, TheOrderIsTheLanesNotTheIndexOrder) {
  // 2^53 then sixteen ones: in index order each one is lost to rounding
  // (2^53 + 1 rounds back to 2^53, a tie to even). In lanes, the ones of
  // lanes 0 and 8 meet 2^53 alone and are lost; the other fourteen are
  // summed apart and arrive as 2, 4 and 8.
  std::vector<double> x(17, 1.0), w(17, 1.0);
  x[0] = std::ldexp(1.0, 53);
  double indexOrder = 0;
  for (size_t i = 0; i < x.size(); ++i)
    indexOrder += x[i] * w[i];
  double dot;
  referenceDots(x.data(), 1, 17, w.data(), &dot, nullptr);
  EXPECT_EQ(indexOrder, std::ldexp(1.0, 53));
  EXPECT_EQ(dot, std::ldexp(1.0, 53) + 14.0);
  EXPECT_EQ(dot, inLanes(x.data(), w.data(), 17, false));
}

} // namespace
