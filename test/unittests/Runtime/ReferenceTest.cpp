//===- ReferenceTest.cpp - The kernel-error measure, whole and sampled ----===//

#include "qtensor/Runtime/Reference.h"

#include "RuntimeTestArtifact.h"

#include "qtensor/Formats/Artifact.h"

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
  /// Weight rows `rows` of w, as reconstructWeightRows gives them.
  std::vector<double> rowsOf(const std::vector<int64_t> &rows) const {
    std::vector<double> out;
    for (int64_t r : rows)
      out.insert(out.end(), w.begin() + r * 3, w.begin() + r * 3 + 3);
    return out;
  }
};

TEST(Reference, SampledRowsSeeOnlyTheirOwnErrors) {
  Problem p;
  // An error in output column 2 of row 1.
  p.y[1 * 4 + 2] += 0.25;
  KernelError whole =
      measureKernelError(p.x, p.w, {}, p.y, 2, 4, 3, FloatType::F32);
  EXPECT_FALSE(whole.within());
  EXPECT_EQ(whole.worstIndex, 6u);
  KernelError missing = measureKernelErrorOnRows(
      p.x, p.rowsOf({0, 1, 3}), {}, p.y, 2, 4, 3, FloatType::F32, {0, 1, 3});
  EXPECT_TRUE(missing.within());
  KernelError hit = measureKernelErrorOnRows(p.x, p.rowsOf({2}), {}, p.y, 2, 4,
                                             3, FloatType::F32, {2});
  EXPECT_FALSE(hit.within());
  EXPECT_EQ(hit.worstIndex, 6u);
  EXPECT_DOUBLE_EQ(hit.maxAbsError, 0.25);
}

// With a min, W_hat = s q + m may be near 0 while a kernel that sums s q x
// and m x apart rounds both: the bound scales with the magnitudes given.
TEST(Reference, OwnMagnitudesScaleTheBound) {
  Problem p;
  p.w = std::vector<double>(12, 0.0); // s q + m = 0 everywhere
  p.y = std::vector<double>(8, 0.0);
  p.y[0] = 1e-12; // a rounding of the parts' products, not of W_hat's
  KernelError asIs =
      measureKernelError(p.x, p.w, {}, p.y, 2, 4, 3, FloatType::F32);
  EXPECT_FALSE(asIs.within());
  std::vector<double> magnitudes(12, 8.0); // |s q| + |m|
  KernelError scaled = measureKernelError(p.x, p.w, {}, p.y, 2, 4, 3,
                                          FloatType::F32, &magnitudes);
  EXPECT_TRUE(scaled.within()) << scaled.worstRatio;
  // The bound: gamma(K + 2) sum |x| a = 5 u (6 x 8) for row 0.
  const double bound = kernelErrorBound(48.0, 0.0, 3, FloatType::F32);
  EXPECT_DOUBLE_EQ(scaled.worstRatio, 1e-12 / bound);
  std::vector<double> rowMagnitudes(3, 8.0); // weight row 0's only
  KernelError rows =
      measureKernelErrorOnRows(p.x, p.rowsOf({0}), {}, p.y, 2, 4, 3,
                               FloatType::F32, {0}, &rowMagnitudes);
  EXPECT_TRUE(rows.within());
  EXPECT_DOUBLE_EQ(rows.worstRatio, 1e-12 / bound);
}

TEST(Reference, SampledRowsStillSeeEveryNonFiniteOutput) {
  Problem p;
  p.y[1] = NAN; // row 0, column 1: not a sampled column
  KernelError e = measureKernelErrorOnRows(p.x, p.rowsOf({0, 3}), {}, p.y, 2, 4,
                                           3, FloatType::F32, {0, 3});
  EXPECT_FALSE(e.finite);
  EXPECT_EQ(e.nonFiniteIndex, 1u);
  p.y[1] = 2;     // the exact value again
  p.y.pop_back(); // a short output is not a whole one
  EXPECT_FALSE(measureKernelErrorOnRows(p.x, p.rowsOf({0}), {}, p.y, 2, 4, 3,
                                        FloatType::F32, {0})
                   .finite);
}

/// The test artifact's first linear (asymmetric codes), opened.
struct OpenedTensor {
  rttest::TempDir dir;
  Expected<artifact::Artifact> artifact = makeError("not opened");
  Expected<artifact::ResolvedTensor> tensor = makeError("not opened");

  OpenedTensor() {
    rttest::TestArtifactSpec spec;
    spec.linears[0].asymmetric = true;
    rttest::writeTestArtifact(dir.str(), spec);
    artifact = artifact::openArtifact(dir.str());
    if (artifact)
      tensor = artifact->tensor("layer.a.weight");
  }
};

// A sampled check's rows of W_hat are those rows of the whole W_hat, in
// the order asked, and a row past N is an error naming it.
TEST(Reference, RowsOfWHatAreRowsOfTheWhole) {
  OpenedTensor opened;
  ASSERT_TRUE(bool(opened.artifact)) << opened.artifact.message();
  auto &t = opened.tensor;
  ASSERT_TRUE(bool(t)) << t.message();
  auto whole = reconstructWeight(*t->entry, *t->codes, *t->scales, t->zeros);
  ASSERT_TRUE(bool(whole)) << whole.message();
  const int64_t k = 256;
  ASSERT_EQ(whole->size(), size_t(6 * k));
  const std::vector<int64_t> rows = {5, 0, 3};
  auto some =
      reconstructWeightRows(*t->entry, *t->codes, *t->scales, t->zeros, rows);
  ASSERT_TRUE(bool(some)) << some.message();
  ASSERT_EQ(some->size(), rows.size() * size_t(k));
  for (size_t i = 0; i < rows.size(); ++i)
    EXPECT_TRUE(std::equal(some->begin() + i * k, some->begin() + (i + 1) * k,
                           whole->begin() + rows[i] * k))
        << "row " << rows[i];
  auto past =
      reconstructWeightRows(*t->entry, *t->codes, *t->scales, t->zeros, {6});
  ASSERT_FALSE(bool(past));
  EXPECT_EQ(past.message(), "layer.a.weight: row 6 is outside [0, 6)");
}

} // namespace

// The row-by-row reference (what L4 runs) gives every output exactly the
// value of the reference on the whole W_hat, for T below, at and beyond the
// eight rows summed at once, with a bias; a bad row range and a mis-sized x
// are errors.
TEST(Reference, RowByRowLinearEqualsTheWholeOne) {
  OpenedTensor opened;
  ASSERT_TRUE(bool(opened.artifact)) << opened.artifact.message();
  auto &t = opened.tensor;
  ASSERT_TRUE(bool(t)) << t.message();
  auto whole = reconstructWeight(*t->entry, *t->codes, *t->scales, t->zeros);
  ASSERT_TRUE(bool(whole)) << whole.message();
  auto rows = ReferenceRows::open(*t->entry, *t->codes, *t->scales, t->zeros);
  ASSERT_TRUE(bool(rows)) << rows.message();
  const int64_t n = (*rows)->rows(), k = (*rows)->cols();
  ASSERT_EQ(n, 6);
  ASSERT_EQ(k, 256);
  const std::vector<double> bias = {0.5, -1, 2, 0, 3, -0.25};
  for (int64_t tokens : {1, 3, 8, 11}) {
    std::vector<double> x(size_t(tokens * k));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = std::sin(double(i) * 0.37) * 3.0;
    const std::vector<double> want =
        referenceLinear(x, *whole, tokens, n, k, bias);
    auto got = referenceLinear(x, **rows, tokens, bias);
    ASSERT_TRUE(bool(got)) << got.message();
    EXPECT_EQ(*got, want) << "T = " << tokens;
  }
  std::vector<double> out(static_cast<size_t>(k));
  EXPECT_EQ((*rows)->fill(5, 2, out.data()).message(),
            "layer.a.weight: rows [5, 7) are outside [0, 6)");
  EXPECT_FALSE(bool(referenceLinear(std::vector<double>(3), **rows, 1, {})));
}

// Float weights given to the reference (the compiler's source weights)
// are widened a block of rows at a time, with the values of the whole
// float64 copy; a weight of the wrong size is refused by name.
TEST(Reference, FloatRowsEqualTheWholeFloat64Weight) {
  const int64_t n = 37, k = 70, t = 9;
  std::vector<float> w(size_t(n * k));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(std::cos(double(i) * 0.11)) * 0.02f;
  std::vector<double> x(size_t(t * k));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(double(i) * 0.7);
  const std::vector<double> want =
      referenceLinear(x, std::vector<double>(w.begin(), w.end()), t, n, k);
  auto rows = FloatWeightRows::make(w, n, k, "w");
  ASSERT_TRUE(bool(rows)) << rows.message();
  auto got = referenceLinear(x, **rows, t, {});
  ASSERT_TRUE(bool(got)) << got.message();
  EXPECT_EQ(*got, want);
  auto wrong = FloatWeightRows::make(std::vector<float>(5), n, k, "w");
  ASSERT_FALSE(bool(wrong));
  EXPECT_EQ(wrong.message(), "w: 5 float values for a weight of [37, 70]");
}
