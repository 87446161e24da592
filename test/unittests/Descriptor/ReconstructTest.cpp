//===- ReconstructTest.cpp - The reference affine decoder -----------------===//

#include "qtensor/Descriptor/Reconstruct.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace qtensor;

namespace {
QuantizedTensorDescriptor groups(int64_t n, int64_t k, int64_t g) {
  QuantizedTensorDescriptor t;
  t.shape = {n, k};
  t.descriptor.code = {4, false};
  t.descriptor.scheme = QuantScheme::Asymmetric;
  t.descriptor.zeroPoint = ZeroPointKind::Integer;
  t.descriptor.granularity = Granularity::Group;
  t.descriptor.axis = 1;
  t.descriptor.groupSize = g;
  return t;
}
} // namespace

// M8.1 0x04A: out[n, k] = scales[n, k / G] * (q[n, k] - zeros[n, k / G]),
// with a short tail group at the end of each row (K=5, G=4).
TEST(Reconstruct, RowBoundedGroupsWithTail) {
  QuantizedTensorDescriptor t = groups(3, 5, 4);
  std::vector<int32_t> codes = {0, 1, 2,  3,  4,  5,  6, 7,
                                8, 9, 10, 11, 12, 13, 15};
  std::vector<double> scales = {1, 10, 2, 20, 3, 30};
  std::vector<double> zeros = {0, 4, 1, 9, 2, 15};
  auto x = reconstructAffine(t, codes, scales, zeros);
  ASSERT_TRUE(x) << x.message();
  std::vector<double> expected = {
      0,  1,  2,  3,  0,  // row 0: s=1,z=0 | s=10,z=4
      8,  10, 12, 14, 0,  // row 1: s=2,z=1 | s=20,z=9
      24, 27, 30, 33, 0}; // row 2: s=3,z=2 | s=30,z=15
  EXPECT_EQ(*x, expected);
}

// The seed's 0x05C weight rows as a per-output-channel symmetric tensor.
TEST(Reconstruct, PerAxisSymmetric) {
  QuantizedTensorDescriptor t;
  t.shape = {2, 4};
  t.descriptor.code = {4, true};
  t.descriptor.granularity = Granularity::PerAxis;
  t.descriptor.axis = 0;
  auto x = reconstructAffine(t, {1, 2, -1, 3, -2, 1, 2, 0}, {0.20, 0.25}, {});
  ASSERT_TRUE(x) << x.message();
  std::vector<double> expected = {0.2, 0.4, -0.2, 0.6, -0.5, 0.25, 0.5, 0.0};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR((*x)[i], expected[i], 1e-15) << i;
}

TEST(Reconstruct, MinZeroPoint) {
  QuantizedTensorDescriptor t;
  t.shape = {4};
  t.descriptor.code = {2, false};
  t.descriptor.scheme = QuantScheme::Asymmetric;
  t.descriptor.zeroPoint = ZeroPointKind::Min;
  auto x = reconstructAffine(t, {0, 1, 2, 3}, {0.5}, {-1.0});
  ASSERT_TRUE(x) << x.message();
  EXPECT_EQ(*x, (std::vector<double>{-1.0, -0.5, 0.0, 0.5}));
  // The rounding magnitudes are |s q| + |m|, not |s q + m|: code 2 gives
  // 0, but a kernel summing s q x and m x apart rounds 1 and -1.
  EXPECT_TRUE(hasOwnRoundingMagnitudes(t.descriptor));
  std::vector<int32_t> codes = {0, 1, 2, 3};
  std::vector<double> scales = {0.5}, mins = {-1.0};
  auto r = AffineReconstruction::make(t, codes, scales, mins);
  ASSERT_TRUE(r) << r.message();
  std::vector<double> magnitudes(4);
  ASSERT_TRUE(
      r->range(0, 4, magnitudes.data(), ReconstructedPart::RoundingMagnitude));
  EXPECT_EQ(magnitudes, (std::vector<double>{1.0, 1.5, 2.0, 2.5}));
}

// Every other kind's rounding magnitude is |W_hat| itself.
TEST(Reconstruct, RoundingMagnitudesAreAbsoluteValuesWithoutAMin) {
  QuantizedTensorDescriptor t = groups(1, 4, 4);
  EXPECT_FALSE(hasOwnRoundingMagnitudes(t.descriptor));
  std::vector<int32_t> codes = {0, 3, 5, 15};
  std::vector<double> scales = {0.25}, zeros = {4};
  auto r = AffineReconstruction::make(t, codes, scales, zeros);
  ASSERT_TRUE(r) << r.message();
  std::vector<double> magnitudes(4);
  ASSERT_TRUE(
      r->range(0, 4, magnitudes.data(), ReconstructedPart::RoundingMagnitude));
  EXPECT_EQ(magnitudes, (std::vector<double>{1.0, 0.25, 0.25, 2.75}));
}

// Groups are formed over permuted positions: with P = [3, 2, 1, 0] and G = 2,
// logical columns 3 and 2 share group 0.
TEST(Reconstruct, PermutedGroups) {
  QuantizedTensorDescriptor t = groups(1, 4, 2);
  t.descriptor.scheme = QuantScheme::Symmetric;
  t.descriptor.zeroPoint = ZeroPointKind::None;
  t.descriptor.permutation = std::vector<int64_t>{3, 2, 1, 0};
  auto index = qparamIndexOfElements(t.descriptor, t.shape);
  ASSERT_TRUE(index);
  EXPECT_EQ(*index, (std::vector<int64_t>{1, 1, 0, 0}));
  auto x = reconstructAffine(t, {1, 1, 1, 1}, {10, 20}, {});
  ASSERT_TRUE(x);
  EXPECT_EQ(*x, (std::vector<double>{20, 20, 10, 10}));

  // P = [1, 2, 0, 3] is not its own inverse: group 0 is columns 1 and 2,
  // in every row (the per-element index and the row fast path agree).
  t = groups(2, 4, 2);
  t.descriptor.scheme = QuantScheme::Symmetric;
  t.descriptor.zeroPoint = ZeroPointKind::None;
  t.descriptor.permutation = std::vector<int64_t>{1, 2, 0, 3};
  index = qparamIndexOfElements(t.descriptor, t.shape);
  ASSERT_TRUE(index);
  EXPECT_EQ(*index, (std::vector<int64_t>{1, 0, 0, 1, 3, 2, 2, 3}));
  x = reconstructAffine(t, std::vector<int32_t>(8, 1), {10, 20, 30, 40}, {});
  ASSERT_TRUE(x) << x.message();
  EXPECT_EQ(*x, (std::vector<double>{20, 10, 10, 20, 40, 30, 30, 40}));
}

TEST(Reconstruct, RejectsBadInputs) {
  QuantizedTensorDescriptor t = groups(3, 5, 4);
  std::vector<double> six(6, 1.0);
  auto shortCodes = reconstructAffine(t, std::vector<int32_t>(14, 0), six, six);
  ASSERT_FALSE(shortCodes);
  EXPECT_EQ(shortCodes.message(), "expected 15 codes for shape [3, 5], got 14");
  auto fewScales = reconstructAffine(t, std::vector<int32_t>(15, 0),
                                     std::vector<double>(3, 1.0), six);
  ASSERT_FALSE(fewScales);
  EXPECT_EQ(fewScales.message(), "expected 6 scales, got 3");
  std::vector<int32_t> codes(15, 0);
  codes[7] = 16;
  auto outOfRange = reconstructAffine(t, codes, six, six);
  ASSERT_FALSE(outOfRange);
  EXPECT_EQ(outOfRange.message(),
            "code 16 at flat index 7 is outside the code range [0, 15]");
}

// The position-derived qparam index of [N, K] weights (groups along K, or
// one scale per row) agrees with the index of every element.
TEST(Reconstruct, LinearFastPathsMatchTheElementIndex) {
  for (bool perRow : {false, true}) {
    QuantizedTensorDescriptor t = groups(7, 70, 32);
    if (perRow) {
      t.descriptor.granularity = Granularity::PerAxis;
      t.descriptor.axis = 0;
      t.descriptor.groupSize = 0;
    }
    auto index = qparamIndexOfElements(t.descriptor, t.shape);
    ASSERT_TRUE(bool(index)) << index.message();
    const size_t qparams = perRow ? 7 : 7 * 3;
    std::vector<int32_t> codes(7 * 70);
    std::vector<double> scales(qparams), zeros(qparams);
    for (size_t i = 0; i < codes.size(); ++i)
      codes[i] = int32_t((i * 7) % 16);
    for (size_t i = 0; i < qparams; ++i) {
      scales[i] = 0.5 + double(i);
      zeros[i] = double(i % 16);
    }
    auto x = reconstructAffine(t, codes, scales, zeros);
    ASSERT_TRUE(bool(x)) << x.message();
    for (size_t i = 0; i < codes.size(); ++i) {
      const int64_t g = (*index)[i];
      EXPECT_EQ((*x)[i], scales[g] * (double(codes[i]) - zeros[g])) << i;
    }
  }
}

// Codes handed a block of rows at a time (what the reference reader of
// L3 and L4 does) give the values of the whole reconstruction; a range the
// block does not cover, past the tensor, or range() without codes is an
// error, and a bad code is named by its flat index in the whole tensor.
TEST(Reconstruct, BlocksOfCodesMatchTheWholeReconstruction) {
  QuantizedTensorDescriptor t = groups(7, 70, 32);
  std::vector<int32_t> codes(7 * 70);
  std::vector<double> scales(7 * 3), zeros(7 * 3);
  for (size_t i = 0; i < codes.size(); ++i)
    codes[i] = int32_t((i * 5) % 16);
  for (size_t i = 0; i < scales.size(); ++i) {
    scales[i] = 0.25 + double(i);
    zeros[i] = double(i % 16);
  }
  auto whole = reconstructAffine(t, codes, scales, zeros);
  ASSERT_TRUE(bool(whole)) << whole.message();
  auto r = AffineReconstruction::makeWithoutCodes(t, scales, zeros);
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_EQ(r->size(), codes.size());
  std::vector<double> out(3 * 70);
  EXPECT_EQ(r->range(0, 70, out.data()).message(),
            "the reconstruction was prepared without its codes");
  // Rows 2..4 as a block; elements from the middle of row 2 to row 4's end.
  const int32_t *block = codes.data() + 2 * 70;
  ASSERT_TRUE(r->rangeOf(block, 140, 150, 350, out.data()));
  for (size_t i = 150; i < 350; ++i)
    EXPECT_EQ(out[i - 150], (*whole)[i]) << i;
  EXPECT_FALSE(r->rangeOf(block, 140, 139, 150, out.data()));
  EXPECT_FALSE(r->rangeOf(block, 140, 140, 491, out.data()));
  std::vector<int32_t> bad(block, block + 210);
  bad[75] = 16; // flat index 215
  auto refused = r->rangeOf(bad.data(), 140, 140, 350, out.data());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("code 16 at flat index 215"),
            std::string::npos)
      << refused.message();
}

// The second level first: s_j = d_J * c_j and m_j = -(dmin_J * mc_j), with J
// the super-group of group j along the axis (here two super-groups of two
// groups per row, two rows).
TEST(Reconstruct, NestedQParamsDecodeSecondLevelFirst) {
  AffineDescriptor d;
  d.code = {4, false};
  d.scheme = QuantScheme::Asymmetric;
  d.zeroPoint = ZeroPointKind::Min;
  d.granularity = Granularity::Group;
  d.axis = 1;
  d.groupSize = 4;
  d.tail = TailRule::Exact;
  d.scaleType = FloatType::F32;
  d.nested = NestedQParams{{6, false}, CodeType{6, false}, 8, FloatType::F16};
  const std::vector<int64_t> shape{2, 16};
  auto first = decodeNestedQParams(
      d, shape, {1, 2, 3, 63, 5, 6, 7, 8}, {0.5, 0.25, 2.0, 1.0},
      {0, 1, 2, 3, 4, 5, 6, 7}, {1.0, 2.0, 0.5, 0.125});
  ASSERT_TRUE(first) << first.message();
  EXPECT_EQ(first->scales, (std::vector<float>{0.5f, 1.0f, 0.75f, 15.75f, 10.0f,
                                               12.0f, 7.0f, 8.0f}));
  EXPECT_EQ(first->mins, (std::vector<float>{-0.0f, -1.0f, -4.0f, -6.0f, -2.0f,
                                             -2.5f, -0.75f, -0.875f}));

  auto wide = decodeNestedQParams(
      d, shape, {1, 2, 3, 64, 5, 6, 7, 8}, {0.5, 0.25, 2.0, 1.0},
      {0, 1, 2, 3, 4, 5, 6, 7}, {1.0, 2.0, 0.5, 0.125});
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.message().find("scale code 3 (64) is outside its 6-bit range"),
            std::string::npos)
      << wide.message();
  auto short_ =
      decodeNestedQParams(d, shape, {1, 2, 3, 4, 5, 6, 7, 8}, {0.5, 0.25, 2.0},
                          {0, 1, 2, 3, 4, 5, 6, 7}, {1.0, 2.0, 0.5, 0.125});
  ASSERT_FALSE(short_);
  EXPECT_NE(short_.message().find("second-level scales: 3 values, expected 4"),
            std::string::npos)
      << short_.message();
}

// OCP FP4: bit 3 the sign, then 0, 0.5, 1, 1.5, 2, 3, 4, 6 (gguf-py's
// doubled kvalues_mxfp4 halved); code 8 is +0, as ggml decodes it.
TEST(Reconstruct, E2M1CodesAreFP4Values) {
  QuantizedTensorDescriptor t = groups(2, 8, 8);
  t.descriptor.scheme = QuantScheme::Symmetric;
  t.descriptor.zeroPoint = ZeroPointKind::None;
  t.descriptor.codebook = Codebook::E2M1;
  auto x = reconstructAffine(
      t, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {1, 0.25}, {});
  ASSERT_TRUE(x) << x.message();
  EXPECT_EQ(*x, (std::vector<double>{0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.125,
                                     -0.25, -0.375, -0.5, -0.75, -1, -1.5}));
  EXPECT_FALSE(std::signbit((*x)[8]));
}

// OCP FP8 E4M3 (FN): ui8 codes are their float (bit 7 the sign, exponent
// bias 7, subnormals m * 2^-9, 448 the largest); the NaN codes 0x7f and
// 0xff name no weight and are refused by index.
TEST(Reconstruct, E4M3CodesAreFP8Values) {
  QuantizedTensorDescriptor t = groups(1, 8, 8);
  t.descriptor.code = {8, false};
  t.descriptor.scheme = QuantScheme::Symmetric;
  t.descriptor.zeroPoint = ZeroPointKind::None;
  t.descriptor.codebook = Codebook::E4M3;
  auto x = reconstructAffine(
      t, {0x00, 0x01, 0x08, 0x38, 0x3C, 0x7E, 0xB8, 0x81}, {2}, {});
  ASSERT_TRUE(x) << x.message();
  EXPECT_EQ(*x,
            (std::vector<double>{0, std::ldexp(2.0, -9), std::ldexp(2.0, -6), 2,
                                 3, 896, -2, -std::ldexp(2.0, -9)}));
  auto nan = reconstructAffine(t, {0, 0, 0, 0x7F, 0, 0, 0, 0}, {2}, {});
  ASSERT_FALSE(nan);
  EXPECT_NE(nan.message().find("code 127 at flat index 3 is NaN in codebook "
                               "e4m3"),
            std::string::npos)
      << nan.message();
}

// A codebook's code is an index: x = s * table[q] (ggml IQ4_NL's
// kvalues_iq4nl; NF4's quantiles), the same decoder for every reader.
TEST(Reconstruct, CodebookCodesIndexTheirTable) {
  QuantizedTensorDescriptor t = groups(2, 4, 2);
  t.descriptor.scheme = QuantScheme::Symmetric;
  t.descriptor.zeroPoint = ZeroPointKind::None;
  t.descriptor.codebook = Codebook::IQ4NL;
  auto x =
      reconstructAffine(t, {0, 15, 8, 7, 1, 2, 3, 4}, {0.5, 2, 1, 0.25}, {});
  ASSERT_TRUE(x) << x.message();
  EXPECT_EQ(*x, (std::vector<double>{-63.5, 56.5, 2, -20, -104, -83, -16.25,
                                     -12.25}));
  t.descriptor.codebook = Codebook::NF4;
  auto nf4 = reconstructAffine(t, {0, 15, 7, 8, 0, 0, 0, 0}, {1, 1, 1, 1}, {});
  ASSERT_TRUE(nf4) << nf4.message();
  EXPECT_EQ((*nf4)[0], -1.0);
  EXPECT_EQ((*nf4)[1], 1.0);
  EXPECT_EQ((*nf4)[2], 0.0);
  EXPECT_EQ((*nf4)[3], double(0.07958029955625534f));
  // An index past the table is the code range's error.
  auto bad = reconstructAffine(t, {16, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 1, 1}, {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("code 16 at flat index 0 is outside the code "
                               "range [0, 15]"),
            std::string::npos)
      << bad.message();
}
