//===- ReferenceTest.cpp - The kernel-error measure, whole and sampled ----===//

#include "qtensor/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

/// x [2, 3], w [4, 3], y = x w^T exactly, in float64.
struct Problem {
  std::vector<double> x = {1, 2, 3, -1, 0.5, 2};
  std::vector<double> w = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  std::vector<double> y = referenceLinear(x, w, 2, 4, 3);
};

TEST(Reference, SampledRowsSeeOnlyTheirOwnErrors) {
  Problem p;
  // An error in output column 2 of row 1.
  p.y[1 * 4 + 2] += 0.25;
  KernelError whole =
      measureKernelError(p.x, p.w, {}, p.y, 2, 4, 3, FloatType::F32);
  EXPECT_FALSE(whole.within());
  EXPECT_EQ(whole.worstIndex, 6u);
  KernelError missing = measureKernelErrorOnRows(p.x, p.w, {}, p.y, 2, 4, 3,
                                                 FloatType::F32, {0, 1, 3});
  EXPECT_TRUE(missing.within());
  KernelError hit =
      measureKernelErrorOnRows(p.x, p.w, {}, p.y, 2, 4, 3, FloatType::F32, {2});
  EXPECT_FALSE(hit.within());
  EXPECT_EQ(hit.worstIndex, 6u);
  EXPECT_DOUBLE_EQ(hit.maxAbsError, 0.25);
}

TEST(Reference, SampledRowsStillSeeEveryNonFiniteOutput) {
  Problem p;
  p.y[1] = NAN; // row 0, column 1: not a sampled column
  KernelError e = measureKernelErrorOnRows(p.x, p.w, {}, p.y, 2, 4, 3,
                                           FloatType::F32, {0, 3});
  EXPECT_FALSE(e.finite);
  EXPECT_EQ(e.nonFiniteIndex, 1u);
  p.y[1] = 2;     // the exact value again
  p.y.pop_back(); // a short output is not a whole one
  EXPECT_FALSE(
      measureKernelErrorOnRows(p.x, p.w, {}, p.y, 2, 4, 3, FloatType::F32, {0})
          .finite);
}

} // namespace
