//===- TensorParallelTest.cpp - The host stand-in for the collectives -----===//
//
// The combine steps of TensorParallelGroup on constructed outputs: where an
// all_gather puts each rank's columns (uneven, out-of-rank-order bounds),
// that an all_reduce adds the bias after the reduction and rounds once,
// and that the all-reduce error bound holds where the partials' own
// rounding dominates (and the single-kernel bound would not).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/TensorParallel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace qtensor;
using namespace qtensor::runtime;
using kernels::RankSlice;

namespace {

HostTensor tensor(FloatType dtype, int64_t rows, int64_t cols,
                  const std::vector<double> &values) {
  auto t = HostTensor::fromDoubles(dtype, rows, cols, values);
  EXPECT_TRUE(bool(t)) << t.message();
  return t ? t.take() : HostTensor();
}

RankSlice columnSlice(int64_t nOffset, int64_t n, int64_t k) {
  return RankSlice{nOffset, n, 0, k};
}

RankSlice rowSlice(int64_t kOffset, int64_t k, int64_t n) {
  return RankSlice{0, n, kOffset, k};
}

} // namespace

TEST(TensorParallel, CollectiveNames) {
  EXPECT_EQ(collectiveFor(kernels::Topology::Column, 2), Collective::AllGather);
  EXPECT_EQ(collectiveFor(kernels::Topology::Row, 4), Collective::AllReduceSum);
  EXPECT_EQ(collectiveFor(kernels::Topology::Replicated, 2), Collective::None);
  EXPECT_EQ(collectiveFor(kernels::Topology::Row, 1), Collective::None);
  EXPECT_EQ(describeCollective(Collective::AllGather, 3),
            "all_gather(3 ranks)");
  EXPECT_EQ(describeCollective(Collective::AllReduceSum, 2),
            "all_reduce(sum, 2 ranks)");
  EXPECT_EQ(describeCollective(Collective::None, 1), "none");
  EXPECT_EQ(describeCollective(Collective::None, 2),
            "none (2 ranks, identical)");
}

TEST(TensorParallel, AllGatherPlacesUnevenSlicesByOffset) {
  // N = 6 over three ranks, 3 + 1 + 2 columns, rank 0's slice last: the
  // bounds decide where each rank's columns go, not the rank number.
  std::vector<RankSlice> slices = {columnSlice(3, 3, 8), columnSlice(0, 1, 8),
                                   columnSlice(1, 2, 8)};
  std::vector<HostTensor> parts;
  for (size_t r = 0; r < slices.size(); ++r) {
    std::vector<double> v;
    for (int64_t t = 0; t < 2; ++t)
      for (int64_t c = 0; c < slices[r].n; ++c)
        v.push_back(double(100 * r + 10 * t + c));
    parts.push_back(tensor(FloatType::F16, 2, slices[r].n, v));
  }
  auto y = allGatherColumns(parts, slices, 6);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_EQ(y->dtype, FloatType::F16);
  ASSERT_EQ(y->rows, 2);
  ASSERT_EQ(y->cols, 6);
  std::vector<double> want = {100, 200, 201, 0,  1,  2, //
                              110, 210, 211, 10, 11, 12};
  EXPECT_EQ(y->toDoubles(), want);
}

TEST(TensorParallel, AllGatherRejectsBadTilings) {
  auto part = [](int64_t cols) {
    return tensor(FloatType::F32, 1, cols, std::vector<double>(size_t(cols)));
  };
  // A gap between the slices.
  auto gap = allGatherColumns({part(2), part(2)},
                              {columnSlice(0, 2, 4), columnSlice(3, 2, 4)}, 5);
  ASSERT_FALSE(bool(gap));
  EXPECT_NE(gap.message().find("do not continue the tiling of [0, 5) at 2"),
            std::string::npos)
      << gap.message();
  // Slices that cover less than N.
  auto shortN = allGatherColumns(
      {part(2), part(2)}, {columnSlice(0, 2, 4), columnSlice(2, 2, 4)}, 6);
  ASSERT_FALSE(bool(shortN));
  EXPECT_NE(shortN.message().find("cover [0, 4), the op has N = 6"),
            std::string::npos)
      << shortN.message();
  // An output wider than its slice.
  auto wide = allGatherColumns({part(3), part(2)},
                               {columnSlice(0, 2, 4), columnSlice(2, 2, 4)}, 4);
  ASSERT_FALSE(bool(wide));
  EXPECT_NE(wide.message().find("rank 0's output has 3 columns"),
            std::string::npos)
      << wide.message();
}

TEST(TensorParallel, SliceColumnsCopiesExactBytes) {
  HostTensor x = tensor(FloatType::BF16, 2, 5, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  auto s = sliceColumns(x, 1, 3);
  ASSERT_TRUE(bool(s)) << s.message();
  EXPECT_EQ(s->toDoubles(), (std::vector<double>{2, 3, 4, 7, 8, 9}));
  EXPECT_FALSE(bool(sliceColumns(x, 3, 3)));
  EXPECT_FALSE(bool(sliceColumns(x, -1, 2)));
}

TEST(TensorParallel, AllReduceAddsBiasAfterTheSumAndRoundsOnce) {
  // bf16 has 8 significand bits: 1 + 2^-8 is the tie between 1 and
  // 1 + 2^-7. Rounded once with the bias 2^-12, the sum lies above the tie
  // and rounds up; rounding the reduced partials first (to 1, ties to even)
  // and then adding the bias would give 1.
  HostTensor p0 = tensor(FloatType::BF16, 1, 2, {1.0, -3.0});
  HostTensor p1 = tensor(FloatType::BF16, 1, 2, {std::ldexp(1.0, -8), 0.5});
  std::vector<double> bias = {std::ldexp(1.0, -12), 0.25};
  auto y = allReduceSum({p0, p1}, bias, FloatType::BF16);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_EQ(y->dtype, FloatType::BF16);
  EXPECT_EQ(y->at(0), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(y->at(1), -2.25);
  // No bias: the tie rounds to even.
  auto plain = allReduceSum({p0, p1}, {}, FloatType::BF16);
  ASSERT_TRUE(bool(plain)) << plain.message();
  EXPECT_EQ(plain->at(0), 1.0);
}

TEST(TensorParallel, AllReduceRejectsMismatchedPartials) {
  HostTensor a = tensor(FloatType::F16, 2, 3, std::vector<double>(6, 1.0));
  HostTensor b = tensor(FloatType::F16, 2, 2, std::vector<double>(4, 1.0));
  HostTensor c = tensor(FloatType::BF16, 2, 3, std::vector<double>(6, 1.0));
  auto shape = allReduceSum({a, b}, {}, FloatType::F16);
  ASSERT_FALSE(bool(shape));
  EXPECT_NE(shape.message().find("rank 1's partial is f16 [2, 2]"),
            std::string::npos)
      << shape.message();
  EXPECT_FALSE(bool(allReduceSum({a, c}, {}, FloatType::F16)));
  EXPECT_FALSE(bool(allReduceSum({a, a}, {1.0, 2.0}, FloatType::F16)));
  EXPECT_FALSE(bool(allReduceSum({}, {}, FloatType::F16)));
}

TEST(TensorParallel, ReplicasMustBeBitIdentical) {
  HostTensor a = tensor(FloatType::F16, 2, 3, {1, 2, 3, 4, 5, 6});
  HostTensor b = tensor(FloatType::F16, 2, 3, {1, 2, 3, 4, 5.00390625, 6});
  HostTensor narrow = tensor(FloatType::F16, 2, 2, {1, 2, 3, 4});
  EXPECT_TRUE(bool(checkReplicasAgree({a, a, a})));
  Status differ = checkReplicasAgree({a, a, b});
  ASSERT_FALSE(bool(differ));
  EXPECT_NE(differ.message().find("rank 2's output differs from rank 0's "
                                  "at [1, 1] (5.003906 vs 5.000000)"),
            std::string::npos)
      << differ.message();
  Status shape = checkReplicasAgree({a, narrow});
  ASSERT_FALSE(bool(shape));
  EXPECT_NE(shape.message().find("rank 1's output is f16 [2, 2]"),
            std::string::npos)
      << shape.message();
}

TEST(TensorParallel, BoundCoversPartialsRoundedBeforeTheReduction) {
  // One output, K = 2 split over two ranks: x = [1, 1], w = [100.3,
  // -100.2]. Each rank's kernel rounds its partial to bf16 (ulp 0.5 at
  // 100): 100.5 and -100.0, so the joined output is 0.5 where the
  // reference is 0.1. That is far beyond a single kernel's bound for
  // y_ref = 0.1, and within the all-reduce bound, which counts each
  // partial's rounding.
  std::vector<double> x = {1.0, 1.0}, w = {100.3, -100.2};
  std::vector<RankSlice> slices = {rowSlice(0, 1, 1), rowSlice(1, 1, 1)};
  std::vector<HostTensor> parts = {tensor(FloatType::BF16, 1, 1, {100.3}),
                                   tensor(FloatType::BF16, 1, 1, {-100.2})};
  EXPECT_EQ(parts[0].at(0), 100.5);
  EXPECT_EQ(parts[1].at(0), -100.0);
  auto y = allReduceSum(parts, {}, FloatType::BF16);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_EQ(y->at(0), 0.5);
  double err = std::fabs(0.5 - 0.1);
  EXPECT_GT(err, kernelErrorBound(200.5, 0.1, 2, FloatType::BF16));
  KernelError e = measureAllReduceError(x, w, {}, slices, y->toDoubles(), 1, 1,
                                        2, FloatType::BF16);
  EXPECT_TRUE(e.within()) << e.worstRatio;
  EXPECT_GT(e.worstRatio, 0.3); // the bound is not vacuous here

  // A join that loses a rank's partial, or the bias, is caught.
  KernelError lost = measureAllReduceError(x, w, {}, slices, {100.5}, 1, 1, 2,
                                           FloatType::BF16);
  EXPECT_FALSE(lost.within());
  KernelError noBias = measureAllReduceError(x, w, {4.0}, slices, {0.5}, 1, 1,
                                             2, FloatType::BF16);
  EXPECT_FALSE(noBias.within());
  auto withBias = allReduceSum(parts, {4.0}, FloatType::BF16);
  ASSERT_TRUE(bool(withBias)) << withBias.message();
  EXPECT_TRUE(measureAllReduceError(x, w, {4.0}, slices, withBias->toDoubles(),
                                    1, 1, 2, FloatType::BF16)
                  .within());
}

TEST(TensorParallel, SimulatedRanksStayWithinTheBound) {
  // Three uneven K slices; each "kernel" accumulates its slice in f32 in a
  // shuffled order and rounds to the output dtype, the partials are joined
  // by allReduceSum with a bias: every output within the bound, for f16,
  // bf16 and f32 outputs.
  const int64_t t = 4, n = 24, k = 200;
  std::vector<RankSlice> slices = {rowSlice(0, 96, n), rowSlice(96, 64, n),
                                   rowSlice(160, 40, n)};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> x(size_t(t * k)), w(size_t(n * k));
  std::vector<double> bias(static_cast<size_t>(n));
  for (double &v : x)
    v = double(float(dist(rng)));
  for (double &v : w)
    v = double(float(dist(rng) * 0.05));
  for (double &v : bias)
    v = double(float(dist(rng)));
  for (FloatType out : {FloatType::F16, FloatType::BF16, FloatType::F32}) {
    std::vector<HostTensor> parts;
    for (const RankSlice &s : slices) {
      std::vector<int64_t> order(size_t(s.k));
      for (int64_t i = 0; i < s.k; ++i)
        order[size_t(i)] = s.kOffset + i;
      std::vector<double> y(size_t(t * n));
      for (int64_t r = 0; r < t; ++r)
        for (int64_t c = 0; c < n; ++c) {
          std::shuffle(order.begin(), order.end(), rng);
          float acc = 0;
          for (int64_t i : order)
            acc += float(x[size_t(r * k + i)]) * float(w[size_t(c * k + i)]);
          y[size_t(r * n + c)] = acc;
        }
      parts.push_back(tensor(out, t, n, y));
    }
    auto y = allReduceSum(parts, bias, out);
    ASSERT_TRUE(bool(y)) << y.message();
    KernelError e =
        measureAllReduceError(x, w, bias, slices, y->toDoubles(), t, n, k, out);
    EXPECT_TRUE(e.within()) << qtensor::toString(out) << ": " << e.worstRatio;
    EXPECT_GT(e.maxAbsError, 0.0) << qtensor::toString(out);
  }
}
