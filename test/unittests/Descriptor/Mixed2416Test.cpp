//===- Mixed2416Test.cpp - The mixed 2/4/16 family's contract -------------===//
//
// The descriptor's invariants, the streams' verifier, the reference
// decoder (the seed's worked example, M8.9 0x07D) and the rate claims.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Descriptor/DescriptorJson.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

using namespace qtensor;

namespace {

/// A [16, 128] matrix: two groups of 64 per row, one second-level group.
Mixed2416Descriptor smallDescriptor() {
  Mixed2416Descriptor d;
  d.shape = {16, 128};
  d.firstGroupSize = 64;
  d.secondGroupSize = 16;
  return d;
}

void putCode(std::vector<uint8_t> &stream, int64_t index, unsigned bits,
             unsigned code) {
  const int64_t bit = index * bits;
  stream[bit / 8] |= uint8_t(code << (bit % 8));
}

/// Streams for smallDescriptor(): group (row 0, g 0) is W4 and the rest W2;
/// every code `code4` (W4) or `code2` (W2); qs, z1, s2, z2 as given.
Mixed2416Streams smallStreams(unsigned code4, unsigned code2, uint8_t qs,
                              uint8_t z1, double s2, double z2) {
  const int64_t groups = 32, w4Groups = 1, w2Groups = 31;
  Mixed2416Streams s;
  s.precisionMap.assign(4, 0);
  s.precisionMap[0] = 1; // group 0 is W4
  s.w4Codes.assign(w4Groups * 64 / 2, 0);
  s.w2Codes.assign(w2Groups * 64 / 4, 0);
  for (int64_t i = 0; i < w4Groups * 64; ++i)
    putCode(s.w4Codes, i, 4, code4);
  for (int64_t i = 0; i < w2Groups * 64; ++i)
    putCode(s.w2Codes, i, 2, code2);
  s.firstScaleCodes.assign(groups, qs);
  s.firstZeroPoints.assign(groups, z1);
  s.secondScales.assign(2, s2);
  s.secondZeroPoints.assign(2, z2);
  s.sparseRowPointers.assign(17, 0);
  return s;
}

void expectError(const Status &st, const std::string &needle) {
  ASSERT_FALSE(st) << "expected an error containing: " << needle;
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
}

} // namespace

// Seed M8.9 0x07D: qs = 5, z2 = 1, s2 = 0.25 decode to s1 = 1; with qw = 3,
// z1 = 2 the weight is 1.
TEST(Mixed2416, TheSeedsWorkedExample) {
  Mixed2416Descriptor d = smallDescriptor();
  Mixed2416Streams s = smallStreams(/*code4=*/3, /*code2=*/3, /*qs=*/5,
                                    /*z1=*/2, /*s2=*/0.25, /*z2=*/1);
  auto scales = decodeMixed2416FirstScales(d, s);
  ASSERT_TRUE(scales) << scales.message();
  EXPECT_EQ((*scales)[0], 1.0);
  auto w = reconstructMixed2416(d, s);
  ASSERT_TRUE(w) << w.message();
  EXPECT_EQ((*w)[0], 1.0);  // W4 group
  EXPECT_EQ((*w)[64], 1.0); // W2 group, same codes
  EXPECT_EQ(w->size(), 16u * 128u);
}

// Swapping the levels' zero-points changes the decoded weight: the order
// of the chain is part of the contract.
TEST(Mixed2416, SwappingLevelsChangesTheResult) {
  Mixed2416Descriptor d = smallDescriptor();
  Mixed2416Streams swapped = smallStreams(3, 3, 5, /*z1=*/1, 0.25, /*z2=*/2);
  auto w = reconstructMixed2416(d, swapped);
  ASSERT_TRUE(w) << w.message();
  EXPECT_EQ((*w)[0], 0.25 * (5 - 2) * (3 - 1)); // 1.5, not 1
}

TEST(Mixed2416, CodesAreReadFromTheirOwnStreamInGroupOrder) {
  Mixed2416Descriptor d = smallDescriptor();
  Mixed2416Streams s = smallStreams(0, 0, 1, 0, 1.0, 0);
  // Group 0 (W4): code 9 at element 5. Group 1 (the first W2 group):
  // code 2 at element 7. Group 2 (row 1, the second W2 group): code 3 at
  // element 0.
  putCode(s.w4Codes, 5, 4, 9);
  putCode(s.w2Codes, 7, 2, 2);
  putCode(s.w2Codes, 64, 2, 3);
  auto w = reconstructMixed2416(d, s);
  ASSERT_TRUE(w) << w.message();
  EXPECT_EQ((*w)[5], 9.0);
  EXPECT_EQ((*w)[64 + 7], 2.0);
  EXPECT_EQ((*w)[128], 3.0);
  EXPECT_EQ((*w)[129], 0.0);
}

TEST(Mixed2416, SparseReplacementAndCorrection) {
  Mixed2416Descriptor d = smallDescriptor();
  Mixed2416Streams s = smallStreams(3, 3, 5, 2, 0.25, 1); // every w = 1
  // Row 0: columns 70 and 100 (W2 group 1); row 3: column 5.
  s.sparseValues = {-8.5, 4.0, 0.125};
  s.sparseColumns = {70, 100, 5};
  s.sparseRowPointers = {0, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
  auto replaced = reconstructMixed2416(d, s);
  ASSERT_TRUE(replaced) << replaced.message();
  EXPECT_EQ((*replaced)[70], -8.5);
  EXPECT_EQ((*replaced)[100], 4.0);
  EXPECT_EQ((*replaced)[3 * 128 + 5], 0.125);
  EXPECT_EQ((*replaced)[71], 1.0);

  d.sparse = SparseSemantics::Correction;
  auto corrected = reconstructMixed2416(d, s);
  ASSERT_TRUE(corrected) << corrected.message();
  EXPECT_EQ((*corrected)[70], -7.5);
  EXPECT_EQ((*corrected)[3 * 128 + 5], 1.125);

  // Replacement outliers are reserved from W2 groups; a correction may sit
  // in a W4 group.
  s.sparseColumns = {3, 100, 5};
  EXPECT_TRUE(verifyMixed2416Streams(d, s));
  d.sparse = SparseSemantics::Replacement;
  expectError(verifyMixed2416Streams(d, s),
              "sparse_columns[0]: (0, 3) lies in W4 group 0; replacement "
              "outliers are reserved from W2 groups");
}

TEST(Mixed2416, TheDescriptorsInvariants) {
  Mixed2416Descriptor d = smallDescriptor();
  ASSERT_TRUE(verifyMixed2416(d));
  Mixed2416Descriptor bad = d;
  bad.shape = {16, 128, 1};
  expectError(verifyMixed2416(bad), "a weight matrix [N, K] is required");
  bad = d;
  bad.firstGroupAxis = 0;
  bad.secondGroupAxis = 1;
  expectError(verifyMixed2416(bad), "got axes 0 and 1");
  bad = d;
  bad.firstGroupSize = 32;
  expectError(verifyMixed2416(bad), "multiple of 64");
  bad = d;
  bad.shape = {16, 192};
  bad.firstGroupSize = 128;
  expectError(verifyMixed2416(bad), "K = 192 is not a multiple of "
                                    "first_group_size 128");
  bad = d;
  bad.secondGroupSize = 5;
  expectError(verifyMixed2416(bad),
              "second_group_size 5 does not divide N = 16");
  bad = d;
  bad.firstScaleCode = {8, true};
  expectError(verifyMixed2416(bad), "got si8");
  bad = d;
  bad.sparseType = FloatType::F32;
  expectError(verifyMixed2416(bad), "16-bit");
  bad = d;
  bad.layoutVersion = 2;
  expectError(verifyMixed2416(bad), "unknown layout id (mixed_2416, 2, ");
  bad = d;
  bad.shape = {int64_t(1) << 30, int64_t(1) << 20};
  expectError(verifyMixed2416(bad), "at most 2^40 weights");
}

TEST(Mixed2416, TheStreamsVerifierNamesStreamAndIndex) {
  Mixed2416Descriptor d = smallDescriptor();
  const Mixed2416Streams good = smallStreams(3, 3, 5, 2, 0.25, 1);
  ASSERT_TRUE(verifyMixed2416Streams(d, good));

  Mixed2416Streams s = good;
  s.precisionMap.pop_back(); // the map does not cover the matrix
  expectError(verifyMixed2416Streams(d, s),
              "precision_map: expected 4 entries, got 3");
  s = good;
  s.precisionMap[0] = 3; // group 1 W4 too: the W4 stream is now short
  expectError(verifyMixed2416Streams(d, s),
              "w2_codes: expected 480 entries, got 496");
  s = good;
  s.firstZeroPoints[1] = 4; // group 1 is W2: codes 0..3
  expectError(verifyMixed2416Streams(d, s),
              "first_zero_points[1]: 4 is outside its W2 group's codes "
              "[0, 3]");
  s = good;
  s.secondScales[1] = 0.1; // not an f16 value
  expectError(verifyMixed2416Streams(d, s), "second_scales[1]: 0.1");
  EXPECT_NE(
      verifyMixed2416Streams(d, s).message().find("is not a finite f16 value"),
      std::string::npos);
  s = good;
  s.sparseValues = {1.0, 2.0};
  s.sparseColumns = {90, 80};
  s.sparseRowPointers.assign(17, 2);
  s.sparseRowPointers[0] = 0;
  expectError(verifyMixed2416Streams(d, s),
              "sparse_columns[1]: 80 does not increase within row 0");
  s.sparseColumns = {90, 128};
  expectError(verifyMixed2416Streams(d, s),
              "sparse_columns[1]: 128 is outside [0, 128)");
  // A pointer past the streams in the middle is caught before any row
  // reads through it.
  s.sparseColumns = {80, 90};
  s.sparseRowPointers[1] = 1000;
  expectError(verifyMixed2416Streams(d, s),
              "sparse_row_pointers[2]: 2 is below the previous pointer 1000");
  s.sparseRowPointers[1] = 2;
  s.sparseRowPointers[16] = 1;
  expectError(verifyMixed2416Streams(d, s),
              "sparse_row_pointers[16]: must be the value count 2, got 1");
}

TEST(Mixed2416, RatesAddUpToTheStreamsBytes) {
  Mixed2416Descriptor d = smallDescriptor();
  Mixed2416Streams s = smallStreams(3, 3, 5, 2, 0.25, 1);
  s.sparseValues = {-8.5};
  s.sparseColumns = {70};
  s.sparseRowPointers.assign(17, 1);
  s.sparseRowPointers[0] = 0;
  ASSERT_TRUE(verifyMixed2416Streams(d, s));
  Mixed2416Rates r = mixed2416Rates(d, s);
  EXPECT_EQ(r.weights, 16 * 128);
  EXPECT_EQ(r.w2Groups, 31);
  EXPECT_EQ(r.w4Groups, 1);
  EXPECT_EQ(r.sparseCount, 1);
  EXPECT_EQ(r.sparseRowMin, 0);
  EXPECT_EQ(r.sparseRowMax, 1);
  EXPECT_EQ(r.codeBytes, 31 * 16 + 32);
  EXPECT_EQ(r.mapBytes, 4);
  EXPECT_EQ(r.firstLevelBytes, 64);
  EXPECT_EQ(r.secondLevelBytes, 2 * 2 * 2);
  EXPECT_EQ(r.sparseBytes, 1 * (2 + 4) + 17 * 4);
  EXPECT_EQ(r.totalBytes, r.codeBytes + r.mapBytes + r.firstLevelBytes +
                              r.secondLevelBytes + r.sparseBytes);
  // The planning formula a converter budgets with gives the same bytes.
  EXPECT_EQ(mixed2416StreamBytes(d, /*w4Groups=*/1, /*sparseCount=*/1),
            r.totalBytes);
  EXPECT_DOUBLE_EQ(r.payloadBitsPerWeight, (31 * 2 + 4) * 64.0 / 2048.0);
  EXPECT_DOUBLE_EQ(r.bitsPerWeight, r.totalBytes * 8.0 / 2048.0);
}

TEST(Mixed2416Json, RoundTripsEveryField) {
  Mixed2416Descriptor d = smallDescriptor();
  d.elementType = FloatType::BF16;
  d.firstGroupSize = 128;
  d.secondGroupSize = 8;
  d.firstScaleCode = {6, false};
  d.secondType = FloatType::F16;
  d.sparse = SparseSemantics::Correction;
  d.sparseType = FloatType::BF16;
  d.requiredKernel = "k";
  nlohmann::json j = toJson(d);
  EXPECT_EQ(j["descriptor"]["family"], "mixed_2416");
  EXPECT_EQ(j["descriptor"]["second_level"]["dtype"], "f16");
  EXPECT_EQ(j["descriptor"]["sparse"]["semantics"], "correction");
  EXPECT_EQ(j["layout"]["family"], "mixed_2416");
  auto back = mixed2416DescriptorFromJson(j);
  ASSERT_TRUE(bool(back)) << back.message();
  EXPECT_EQ(*back, d);
  // Through text too.
  auto reparsed = mixed2416DescriptorFromJson(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(bool(reparsed)) << reparsed.message();
  EXPECT_EQ(*reparsed, d);
}

TEST(Mixed2416Json, StrictAndVerified) {
  const nlohmann::json good = toJson(smallDescriptor());
  auto refused = [&](const std::function<void(nlohmann::json &)> &edit,
                     const std::string &needle) {
    nlohmann::json j = good;
    edit(j);
    auto d = mixed2416DescriptorFromJson(j);
    ASSERT_FALSE(bool(d)) << "accepted: " << j.dump();
    EXPECT_NE(d.message().find(needle), std::string::npos) << d.message();
  };
  refused([](nlohmann::json &j) { j["descriptor"]["speed"] = 1; },
          "tensor.descriptor: unknown field \"speed\"");
  refused([](nlohmann::json &j) { j["descriptor"]["sparse"].erase("dtype"); },
          "tensor.descriptor.sparse.dtype");
  refused(
      [](nlohmann::json &j) { j["descriptor"]["sparse"]["semantics"] = "add"; },
      "tensor.descriptor.sparse.semantics: unknown value \"add\"");
  refused([](nlohmann::json &j) { j["descriptor"]["family"] = "affine"; },
          "expected \"mixed_2416\"");
  refused(
      [](nlohmann::json &j) {
        j["descriptor"]["first_level"]["scale_code"]["signed"] = true;
      },
      "first-level scale codes are unsigned");
  refused(
      [](nlohmann::json &j) {
        j["descriptor"]["first_level"]["group_size"] = 96;
      },
      "multiple of 64");
  refused([](nlohmann::json &j) { j["shape"] = {16, 200}; },
          "K = 200 is not a multiple of first_group_size 64");
  refused([](nlohmann::json &j) { j["layout"]["tile"] = {1, 64}; },
          "no tiles or padding");
  refused([](nlohmann::json &j) { j["layout"]["encoding"] = "msb_first"; },
          "unknown layout id (mixed_2416, 1, msb_first)");
  refused([](nlohmann::json &j) { j["descriptor"]["decoder_version"] = 2; },
          "decoder version 2 is unknown");
}

// Any run of rows decodes to the rows of the whole (the reference decoder
// is defined by the row decoder); the rounding magnitudes are |dense|,
// plus each outlier's term where there is one.
TEST(Mixed2416, RowsAreTheWholesRowsAndMagnitudesTheKernelsTerms) {
  Mixed2416Descriptor d = smallDescriptor();
  Mixed2416Streams s = smallStreams(3, 1, 5, 2, 0.25, 1); // W4 1, W2 -1
  s.precisionMap = {0x05, 0x40, 0x00, 0x81}; // W4 groups 0, 2, 14, 24, 31
  s.w4Codes.assign(5 * 32, 0);
  for (int64_t i = 0; i < 5 * 64; ++i)
    putCode(s.w4Codes, i, 4, unsigned(i % 16));
  s.w2Codes.assign(27 * 16, 0);
  for (int64_t i = 0; i < 27 * 64; ++i)
    putCode(s.w2Codes, i, 2, unsigned(i % 4));
  s.sparseValues = {-8.5, 4.0};
  s.sparseColumns = {70, 100};
  s.sparseRowPointers = {0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  auto whole = reconstructMixed2416(d, s);
  ASSERT_TRUE(whole) << whole.message();
  auto table = mixed2416RowW4Groups(d, s.precisionMap);
  ASSERT_TRUE(table) << table.message();
  // W4 groups 0 and 2 are rows 0 and 1's first, 14 row 7's, 24 row 12's,
  // 31 row 15's second.
  EXPECT_EQ(*table, (std::vector<int32_t>{0, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3,
                                          4, 4, 4, 5}));
  for (auto [first, count] :
       {std::pair<int64_t, int64_t>{0, 16}, {1, 1}, {2, 5}, {7, 9}, {15, 1}}) {
    std::vector<double> rows(size_t(count) * 128);
    reconstructMixed2416Rows(d, s, *table, first, count, rows.data());
    for (size_t i = 0; i < rows.size(); ++i)
      ASSERT_EQ(rows[i], (*whole)[size_t(first) * 128 + i])
          << "rows from " << first << ", element " << i;
  }
  // Row 2: two W2 groups, outliers at columns 70 and 100 of the second.
  std::vector<double> dense(128), magnitude(128);
  Mixed2416Streams noOutliers = s;
  noOutliers.sparseValues.clear();
  noOutliers.sparseColumns.clear();
  noOutliers.sparseRowPointers.assign(17, 0);
  reconstructMixed2416Rows(d, noOutliers, *table, 2, 1, dense.data());
  reconstructMixed2416Rows(d, s, *table, 2, 1, magnitude.data(),
                           Mixed2416Part::RoundingMagnitude);
  for (int64_t c = 0; c < 128; ++c) {
    double want = std::fabs(dense[c]);
    if (c == 70)
      want += std::fabs(-8.5 - dense[c]);
    if (c == 100)
      want += std::fabs(4.0 - dense[c]);
    EXPECT_EQ(magnitude[c], want) << c;
  }
  d.sparse = SparseSemantics::Correction;
  reconstructMixed2416Rows(d, s, *table, 2, 1, magnitude.data(),
                           Mixed2416Part::RoundingMagnitude);
  EXPECT_EQ(magnitude[70], std::fabs(dense[70]) + 8.5);
  EXPECT_EQ(magnitude[100], std::fabs(dense[100]) + 4.0);
}
