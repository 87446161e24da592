//===- LedgerTest.cpp - Storage ledgers and accumulator bounds ------------===//
//
// The worked numbers of seed M8.1 0x05B, 0x07, 0x07A and M8.9 0x03B.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/Ledger.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using namespace qtensor;

namespace {

TEST(LedgerTest, ThreeByFiveGroupFour) {
  // M8.1 0x07: N=3, K=5, G=4, INT4 codes, FP16 scales, no zero-point.
  Expected<TensorLedger> l = computeLedger(3, 5, 4, 4, 16, 0);
  ASSERT_TRUE(bool(l)) << l.message();
  EXPECT_EQ(l->numValues, 15u);
  EXPECT_EQ(l->groupsPerRow, 2);
  EXPECT_EQ(l->numGroups, 6u);     // row-bounded, not ceil(15 / 4) = 4
  EXPECT_EQ(l->logicalBits, 156u); // 15 * 4 + 6 * 16
  EXPECT_DOUBLE_EQ(l->bitsPerValue, 10.4);
  EXPECT_EQ(l->tightCodeBytes, 8u);      // ceil(60 / 8)
  EXPECT_EQ(l->rowAlignedCodeBytes, 9u); // 3 * ceil(20 / 8)
  EXPECT_EQ(l->scaleBytes, 12u);
  EXPECT_EQ(l->zeroBytes, 0u);
  EXPECT_EQ(l->metadataBytes, 12u);
  EXPECT_EQ(l->tightTotalBytes, 20u);
  EXPECT_EQ(l->rowAlignedTotalBytes, 21u);
}

TEST(LedgerTest, W4Square4096) {
  // M8.9 0x03B: 4096 x 4096, W4, G=128, FP16 scales -> 8.25 MiB.
  Expected<TensorLedger> l = computeLedger(4096, 4096, 128, 4, 16, 0);
  ASSERT_TRUE(bool(l)) << l.message();
  EXPECT_EQ(l->numGroups, 131072u);
  EXPECT_EQ(l->rowAlignedCodeBytes, 8388608u); // 8 MiB
  EXPECT_EQ(l->tightCodeBytes, 8388608u);
  EXPECT_EQ(l->scaleBytes, 262144u); // 256 KiB
  EXPECT_EQ(l->rowAlignedTotalBytes, 8650752u);
  EXPECT_EQ(double(l->rowAlignedTotalBytes) / (1024 * 1024), 8.25);
  EXPECT_DOUBLE_EQ(l->bitsPerValue, 4.125);
  // FP16 zero values add another 256 KiB -> 8.5 MiB.
  Expected<TensorLedger> z = computeLedger(4096, 4096, 128, 4, 16, 16);
  ASSERT_TRUE(bool(z)) << z.message();
  EXPECT_EQ(z->zeroBytes, 262144u);
  EXPECT_EQ(z->rowAlignedTotalBytes, 8912896u);
  EXPECT_EQ(double(z->rowAlignedTotalBytes) / (1024 * 1024), 8.5);
}

TEST(LedgerTest, OddWidthsRoundEachArraySeparately) {
  // 3-bit codes, 2 x 3: tight ceil(18 / 8) = 3, row-aligned 2 * ceil(9 / 8)
  // = 4; G=2 -> 4 groups of 8-bit scales and 4-bit zeros (2 bytes).
  Expected<TensorLedger> l = computeLedger(2, 3, 2, 3, 8, 4);
  ASSERT_TRUE(bool(l)) << l.message();
  EXPECT_EQ(l->numGroups, 4u);
  EXPECT_EQ(l->logicalBits, 18u + 4u * 12u);
  EXPECT_EQ(l->tightCodeBytes, 3u);
  EXPECT_EQ(l->rowAlignedCodeBytes, 4u);
  EXPECT_EQ(l->scaleBytes, 4u);
  EXPECT_EQ(l->zeroBytes, 2u);
  EXPECT_EQ(l->tightTotalBytes, 9u);
  EXPECT_EQ(l->rowAlignedTotalBytes, 10u);
  EXPECT_DOUBLE_EQ(l->bitsPerValue, 11.0);
}

TEST(LedgerTest, RejectsBadInputsAndOverflow) {
  EXPECT_FALSE(computeLedger(0, 5, 4, 4, 16, 0));
  EXPECT_FALSE(computeLedger(3, -5, 4, 4, 16, 0));
  Expected<TensorLedger> g0 = computeLedger(3, 5, 0, 4, 16, 0);
  ASSERT_FALSE(g0);
  EXPECT_NE(g0.message().find("group size"), std::string::npos);
  EXPECT_FALSE(computeLedger(3, 5, 4, 0, 16, 0));
  EXPECT_FALSE(computeLedger(3, 5, 4, 33, 16, 0));
  EXPECT_FALSE(computeLedger(3, 5, 4, 4, 65, 0));
  EXPECT_FALSE(computeLedger(3, 5, 4, 4, 16, 65));
  Expected<TensorLedger> big =
      computeLedger(int64_t(1) << 40, int64_t(1) << 40, 128, 4, 16, 0);
  ASSERT_FALSE(big);
  EXPECT_NE(big.message().find("overflow"), std::string::npos);
  // P fits, P * 32 code bits does not.
  EXPECT_FALSE(
      computeLedger(int64_t(1) << 30, int64_t(1) << 30, 1 << 20, 32, 16, 0));
  Expected<TensorLedger> fits =
      computeLedger(int64_t(1) << 28, int64_t(1) << 28, 1 << 20, 32, 16, 0);
  ASSERT_TRUE(bool(fits)) << fits.message();
  EXPECT_EQ(fits->numGroups, uint64_t(1) << 36);
}

TEST(LedgerTest, SeventyBillionEstimate) {
  // M8.1 0x07A: 70e9 weights, INT4, G=128.
  EXPECT_DOUBLE_EQ(estimateBytes(70e9, 4, 128, 0, 0), 35e9);
  EXPECT_DOUBLE_EQ(estimateBytes(70e9, 4, 128, 16, 0), 36.09375e9);
  EXPECT_DOUBLE_EQ(estimateBytes(70e9, 4, 128, 16, 8), 36.640625e9);
  EXPECT_DOUBLE_EQ(effectiveBitsPerValue(4, 128, 16, 8), 4.1875);
  // At G=32 an FP16 scale plus UINT8 zero costs 0.75 bit per weight.
  EXPECT_DOUBLE_EQ(effectiveBitsPerValue(4, 32, 16, 8) - 4.0, 0.75);
  EXPECT_DOUBLE_EQ(estimateBytes(70e9, 16, 128, 0, 0), 140e9);
}

TEST(LedgerTest, EstimateMatchesExactLedgerForFullGroups) {
  Expected<TensorLedger> l = computeLedger(4096, 4096, 128, 4, 16, 8);
  ASSERT_TRUE(bool(l));
  EXPECT_DOUBLE_EQ(estimateBytes(4096.0 * 4096.0, 4, 128, 16, 8),
                   double(l->rowAlignedTotalBytes));
  EXPECT_DOUBLE_EQ(l->bitsPerValue, effectiveBitsPerValue(4, 128, 16, 8));
}

TEST(LedgerTest, MaxAccumulationLength) {
  // M8.1 0x05B: symmetric INT8 [-127, 127] into INT32.
  Expected<int64_t> k = maxAccumulationLength({-127, 127}, {-127, 127}, 32);
  ASSERT_TRUE(bool(k)) << k.message();
  EXPECT_EQ(*k, 133144);
  EXPECT_EQ(*k, 2147483647LL / 16129);
  // Full two's-complement INT8: (-128)^2 = 16384.
  EXPECT_EQ(*maxAccumulationLength({-128, 127}, {-128, 127}, 32), 131071);
  // Centered affine UINT8 can reach 255 in magnitude.
  EXPECT_EQ(*maxAccumulationLength({-255, 255}, {-127, 127}, 32),
            2147483647LL / (255 * 127));
  EXPECT_EQ(*maxAccumulationLength({-8, 7}, {-8, 7}, 32), 33554431);
  EXPECT_EQ(*maxAccumulationLength({-8, 7}, {-8, 7}, 16), 511);
  EXPECT_EQ(*maxAccumulationLength({-2147483648LL, 2147483647LL},
                                   {-2147483648LL, 2147483647LL}, 64),
            1);
  // One product larger than the accumulator: no safe length.
  EXPECT_EQ(*maxAccumulationLength({0, 255}, {0, 255}, 16), 0);
  EXPECT_EQ(*maxAccumulationLength({0, 4294967295LL}, {0, 4294967295LL}, 64),
            0);
  EXPECT_FALSE(maxAccumulationLength({-127, 127}, {-127, 127}, 1));
  EXPECT_FALSE(maxAccumulationLength({-127, 127}, {-127, 127}, 65));
  EXPECT_FALSE(maxAccumulationLength({0, 0}, {-127, 127}, 32));
  EXPECT_FALSE(maxAccumulationLength({5, -5}, {-127, 127}, 32));
}

} // namespace
