//===- PackingTest.cpp - Bit-stream packing parity ------------------------===//
//
// Seed M8.9 0x09B (pack/unpack parity: odd lengths, tails, min/max codes,
// every bit position), M8.9 0x03A (byte-aligned rows vs one tensor stream)
// and fixed byte-level vectors for the nibble order and signed encodings
// (M8.1 0x06).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/Packing.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace qtensor;

namespace {

using Bytes = std::vector<uint8_t>;
using Codes = std::vector<int32_t>;

Bytes pack(const Codes &codes, int64_t rows, int64_t cols, unsigned bits,
           bool isSigned, SignedEncoding encoding, BitOrder order,
           RowAlignment alignment) {
  Expected<Bytes> bytes = packCodes(codes.data(), rows, cols, bits, isSigned,
                                    encoding, order, alignment);
  EXPECT_TRUE(bool(bytes)) << (bytes ? "" : bytes.message());
  return bytes ? *bytes : Bytes{};
}

Bytes packRow(const Codes &codes, unsigned bits, bool isSigned,
              SignedEncoding encoding, BitOrder order) {
  return pack(codes, 1, int64_t(codes.size()), bits, isSigned, encoding, order,
              RowAlignment::Byte);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

const SignedEncoding kTwos = SignedEncoding::TwosComplement;
const SignedEncoding kOffset = SignedEncoding::OffsetBinary;

//===----------------------------------------------------------------------===//
// Fixed byte-level vectors
//===----------------------------------------------------------------------===//

TEST(PackingTest, NibbleOrderVectors) {
  EXPECT_EQ(packRow({1, 2, 3}, 4, false, kTwos, BitOrder::LsbFirst),
            (Bytes{0x21, 0x03}));
  EXPECT_EQ(packRow({1, 2, 3}, 4, false, kTwos, BitOrder::MsbFirst),
            (Bytes{0x12, 0x30}));
  // M8.1 0x06: byte = a | (b << 4) for the LsbFirst nibble pair (a, b).
  EXPECT_EQ(packRow({0xA, 0x5}, 4, false, kTwos, BitOrder::LsbFirst),
            (Bytes{0x5A}));
  EXPECT_EQ(packRow({15, 0}, 4, false, kTwos, BitOrder::LsbFirst),
            (Bytes{0x0F}));
}

TEST(PackingTest, SignedEncodingVectors) {
  EXPECT_EQ(packRow({-1}, 4, true, kTwos, BitOrder::LsbFirst), (Bytes{0x0F}));
  EXPECT_EQ(packRow({-1}, 4, true, kOffset, BitOrder::LsbFirst), (Bytes{0x07}));
  EXPECT_EQ(packRow({-8}, 4, true, kTwos, BitOrder::LsbFirst), (Bytes{0x08}));
  EXPECT_EQ(packRow({-8}, 4, true, kOffset, BitOrder::LsbFirst), (Bytes{0x00}));
  EXPECT_EQ(packRow({7}, 4, true, kOffset, BitOrder::LsbFirst), (Bytes{0x0F}));
  EXPECT_EQ(packRow({-1, 7}, 4, true, kTwos, BitOrder::LsbFirst),
            (Bytes{0x7F}));
  EXPECT_EQ(packRow({-1}, 4, true, kTwos, BitOrder::MsbFirst), (Bytes{0xF0}));
  EXPECT_EQ(packRow({-1}, 8, true, kTwos, BitOrder::LsbFirst), (Bytes{0xFF}));
  EXPECT_EQ(packRow({-1}, 8, true, kOffset, BitOrder::LsbFirst), (Bytes{0x7F}));
  EXPECT_EQ(packRow({-128, 127}, 8, true, kTwos, BitOrder::MsbFirst),
            (Bytes{0x80, 0x7F}));
  // 2-bit ternary-style codes {-1, 0, 1, -2}, two's complement, LsbFirst:
  // 0b11 | 0b00 << 2 | 0b01 << 4 | 0b10 << 6 = 0x93.
  EXPECT_EQ(packRow({-1, 0, 1, -2}, 2, true, kTwos, BitOrder::LsbFirst),
            (Bytes{0x93}));

  Expected<Codes> back =
      unpackCodes(Bytes{0x0F}.data(), 1, 1, 1, 4, true, kTwos,
                  BitOrder::LsbFirst, RowAlignment::Byte);
  ASSERT_TRUE(bool(back)) << back.message();
  EXPECT_EQ(*back, (Codes{-1})); // sign-extended
  Expected<Codes> offset =
      unpackCodes(Bytes{0x07}.data(), 1, 1, 1, 4, true, kOffset,
                  BitOrder::LsbFirst, RowAlignment::Byte);
  ASSERT_TRUE(bool(offset));
  EXPECT_EQ(*offset, (Codes{-1}));
}

TEST(PackingTest, ThreeBitCodesStraddleBytes) {
  // Stream 111 000 101: code 2 starts at bit 6 and ends in byte 1.
  EXPECT_EQ(packRow({7, 0, 5}, 3, false, kTwos, BitOrder::LsbFirst),
            (Bytes{0x47, 0x01}));
  EXPECT_EQ(packRow({7, 0, 5}, 3, false, kTwos, BitOrder::MsbFirst),
            (Bytes{0xE2, 0x80}));
  // Eight 3-bit codes fill exactly three bytes.
  EXPECT_EQ(
      packRow({7, 7, 7, 7, 7, 7, 7, 7}, 3, false, kTwos, BitOrder::LsbFirst),
      (Bytes{0xFF, 0xFF, 0xFF}));
}

TEST(PackingTest, TightVersusByteAlignedRows) {
  const Codes codes = {1, 2, 3, 4, 5, 6}; // [2, 3], 4 bits
  EXPECT_EQ(pack(codes, 2, 3, 4, false, kTwos, BitOrder::LsbFirst,
                 RowAlignment::Tight),
            (Bytes{0x21, 0x43, 0x65}));
  // Row 1 restarts on a byte boundary: its first code does not share a byte
  // with row 0's tail (M8.9 0x03A).
  EXPECT_EQ(pack(codes, 2, 3, 4, false, kTwos, BitOrder::LsbFirst,
                 RowAlignment::Byte),
            (Bytes{0x21, 0x03, 0x54, 0x06}));
  EXPECT_EQ(pack(codes, 2, 3, 4, false, kTwos, BitOrder::MsbFirst,
                 RowAlignment::Byte),
            (Bytes{0x12, 0x30, 0x45, 0x60}));
}

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

TEST(PackingTest, Sizes) {
  EXPECT_EQ(packedRowBytes(0, 4), 0);
  EXPECT_EQ(packedRowBytes(1, 4), 1);
  EXPECT_EQ(packedRowBytes(7, 4), 4);
  EXPECT_EQ(packedRowBytes(5, 3), 2);  // 15 bits
  EXPECT_EQ(packedRowBytes(13, 3), 5); // 39 bits
  EXPECT_EQ(packedRowBytes(8, 3), 3);
  EXPECT_EQ(packedRowBytes(5, 2), 2);
  EXPECT_EQ(packedRowBytes(3, 8), 3);
  EXPECT_EQ(packedRowBytes(std::numeric_limits<int64_t>::max(), 8),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(packedRowBytes(-1, 4), -1);
  EXPECT_EQ(packedRowBytes(4, 0), -1);
  EXPECT_EQ(packedRowBytes(4, 9), -1);

  // The M8.1 0x07 example: [3, 5] W4 is 8 bytes tight, 9 byte-aligned.
  EXPECT_EQ(*packedBytes(3, 5, 4, RowAlignment::Tight), 8u);
  EXPECT_EQ(*packedBytes(3, 5, 4, RowAlignment::Byte), 9u);
  EXPECT_EQ(*packedBytes(4096, 4096, 4, RowAlignment::Byte), 8388608u);
  EXPECT_EQ(*packedBytes(0, 5, 4, RowAlignment::Byte), 0u);
  Expected<uint64_t> tightOverflow =
      packedBytes(std::numeric_limits<int64_t>::max(),
                  std::numeric_limits<int64_t>::max(), 4, RowAlignment::Tight);
  ASSERT_FALSE(tightOverflow);
  EXPECT_TRUE(contains(tightOverflow.message(), "overflow"));
  EXPECT_FALSE(packedBytes(std::numeric_limits<int64_t>::max(), 16, 8,
                           RowAlignment::Byte));
  EXPECT_FALSE(packedBytes(int64_t(1) << 62, 8, 8, RowAlignment::Tight));
  EXPECT_FALSE(packedBytes(-1, 4, 4, RowAlignment::Byte));
  EXPECT_FALSE(packedBytes(4, 4, 0, RowAlignment::Byte));
  EXPECT_FALSE(packedBytes(4, 4, 9, RowAlignment::Byte));
}

//===----------------------------------------------------------------------===//
// Exhaustive round trips (M8.9 0x09B)
//===----------------------------------------------------------------------===//

struct Layout {
  unsigned bits;
  bool isSigned;
  SignedEncoding encoding;
  BitOrder order;
  RowAlignment alignment;
};

std::vector<Layout> allLayouts() {
  std::vector<Layout> layouts;
  for (unsigned bits = 1; bits <= 8; ++bits)
    for (bool isSigned : {false, true})
      for (SignedEncoding encoding : {kTwos, kOffset})
        for (BitOrder order : {BitOrder::LsbFirst, BitOrder::MsbFirst})
          for (RowAlignment alignment :
               {RowAlignment::Byte, RowAlignment::Tight})
            layouts.push_back({bits, isSigned, encoding, order, alignment});
  return layouts;
}

std::string describe(const Layout &l, int64_t rows, int64_t cols) {
  return std::to_string(l.bits) + (l.isSigned ? " signed" : " unsigned") +
         (l.encoding == kTwos ? " twos" : " offset") +
         (l.order == BitOrder::LsbFirst ? " lsb" : " msb") +
         (l.alignment == RowAlignment::Byte ? " byte" : " tight") + " [" +
         std::to_string(rows) + "x" + std::to_string(cols) + "]";
}

TEST(PackingTest, RoundTripsAllLayoutsAndOddLengths) {
  std::mt19937 rng(42);
  int checked = 0;
  for (const Layout &l : allLayouts()) {
    const int32_t lo = l.isSigned ? -(1 << (l.bits - 1)) : 0;
    const int32_t hi = l.isSigned ? (1 << (l.bits - 1)) - 1 : (1 << l.bits) - 1;
    std::uniform_int_distribution<int32_t> dist(lo, hi);
    for (int64_t rows : {1, 2, 3})
      for (int64_t cols : {1, 3, 5, 7, 13}) {
        Codes codes(size_t(rows * cols));
        for (int32_t &c : codes)
          c = dist(rng);
        codes.front() = lo; // minimum and maximum codes always appear
        codes.back() = hi;
        Expected<Bytes> bytes =
            packCodes(codes.data(), rows, cols, l.bits, l.isSigned, l.encoding,
                      l.order, l.alignment);
        ASSERT_TRUE(bool(bytes))
            << describe(l, rows, cols) << ": " << bytes.message();
        ASSERT_EQ(bytes->size(), *packedBytes(rows, cols, l.bits, l.alignment))
            << describe(l, rows, cols);
        Expected<Codes> back =
            unpackCodes(bytes->data(), bytes->size(), rows, cols, l.bits,
                        l.isSigned, l.encoding, l.order, l.alignment);
        ASSERT_TRUE(bool(back))
            << describe(l, rows, cols) << ": " << back.message();
        EXPECT_EQ(*back, codes) << describe(l, rows, cols);
        ++checked;
      }
  }
  EXPECT_EQ(checked, 8 * 2 * 2 * 2 * 2 * 15);
}

TEST(PackingTest, EveryBitPosition) {
  // A single unsigned code 1 walks through every slot; exactly one stream
  // bit is set, at the code's least significant bit.
  for (unsigned bits : {1u, 2u, 3u, 4u, 5u, 8u})
    for (BitOrder order : {BitOrder::LsbFirst, BitOrder::MsbFirst})
      for (RowAlignment alignment : {RowAlignment::Byte, RowAlignment::Tight})
        for (int64_t cols : {5, 13}) {
          const int64_t rows = 2;
          const int64_t rowBytes = packedRowBytes(cols, bits);
          for (int64_t slot = 0; slot < rows * cols; ++slot) {
            Codes codes(size_t(rows * cols), 0);
            codes[size_t(slot)] = 1;
            Bytes bytes =
                pack(codes, rows, cols, bits, false, kTwos, order, alignment);
            const int64_t r = slot / cols, c = slot % cols;
            const uint64_t start = alignment == RowAlignment::Byte
                                       ? uint64_t(r * rowBytes * 8 + c * bits)
                                       : uint64_t(slot * bits);
            const uint64_t lsb =
                order == BitOrder::LsbFirst ? start : start + bits - 1;
            const unsigned shift = order == BitOrder::LsbFirst
                                       ? unsigned(lsb % 8)
                                       : 7 - unsigned(lsb % 8);
            for (size_t i = 0; i < bytes.size(); ++i)
              EXPECT_EQ(bytes[i], i == lsb / 8 ? (1u << shift) : 0u)
                  << bits << " bits, slot " << slot << ", byte " << i;
            Expected<Codes> back =
                unpackCodes(bytes.data(), bytes.size(), rows, cols, bits, false,
                            kTwos, order, alignment);
            ASSERT_TRUE(bool(back)) << back.message();
            EXPECT_EQ(*back, codes) << bits << " bits, slot " << slot;
          }
        }
}

TEST(PackingTest, AllOnesSlotAmongZeros) {
  // The maximum code in one slot, all others zero, for every width: the
  // packed stream holds exactly `bits` set bits and unpacks back.
  for (unsigned bits = 1; bits <= 8; ++bits)
    for (BitOrder order : {BitOrder::LsbFirst, BitOrder::MsbFirst})
      for (int64_t slot = 0; slot < 7; ++slot) {
        Codes codes(7, 0);
        codes[size_t(slot)] = (1 << bits) - 1;
        Bytes bytes = packRow(codes, bits, false, kTwos, order);
        unsigned ones = 0;
        for (uint8_t b : bytes)
          ones += unsigned(__builtin_popcount(b));
        EXPECT_EQ(ones, bits);
        Expected<Codes> back =
            unpackCodes(bytes.data(), bytes.size(), 1, 7, bits, false, kTwos,
                        order, RowAlignment::Byte);
        ASSERT_TRUE(bool(back));
        EXPECT_EQ(*back, codes);
      }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(PackingTest, OutOfRangeCodesNameTheIndex) {
  const Codes codes = {1, 2, 16, 3};
  Expected<Bytes> bad = packCodes(codes.data(), 2, 2, 4, false, kTwos,
                                  BitOrder::LsbFirst, RowAlignment::Byte);
  ASSERT_FALSE(bad);
  EXPECT_TRUE(contains(bad.message(), "index 2")) << bad.message();
  EXPECT_TRUE(contains(bad.message(), "row 1, column 0")) << bad.message();
  EXPECT_TRUE(contains(bad.message(), "[0, 15]")) << bad.message();
  const Codes negative = {-1};
  EXPECT_FALSE(packCodes(negative.data(), 1, 1, 4, false, kTwos,
                         BitOrder::LsbFirst, RowAlignment::Byte));
  const Codes tooBig = {8};
  Expected<Bytes> signedBad = packCodes(tooBig.data(), 1, 1, 4, true, kOffset,
                                        BitOrder::LsbFirst, RowAlignment::Byte);
  ASSERT_FALSE(signedBad);
  EXPECT_TRUE(contains(signedBad.message(), "[-8, 7]"));
  const Codes tooSmall = {-9};
  EXPECT_FALSE(packCodes(tooSmall.data(), 1, 1, 4, true, kTwos,
                         BitOrder::LsbFirst, RowAlignment::Byte));
  const Codes ok = {1};
  EXPECT_FALSE(packCodes(ok.data(), 1, 1, 0, false, kTwos, BitOrder::LsbFirst,
                         RowAlignment::Byte));
  EXPECT_FALSE(packCodes(ok.data(), 1, 1, 9, false, kTwos, BitOrder::LsbFirst,
                         RowAlignment::Byte));
  EXPECT_FALSE(packCodes(nullptr, 1, 1, 4, false, kTwos, BitOrder::LsbFirst,
                         RowAlignment::Byte));
  Expected<Bytes> empty = packCodes(nullptr, 0, 5, 4, false, kTwos,
                                    BitOrder::LsbFirst, RowAlignment::Byte);
  ASSERT_TRUE(bool(empty));
  EXPECT_TRUE(empty->empty());
}

TEST(PackingTest, UnpackChecksSizeAndPadding) {
  const Bytes bytes = {0x21, 0x03};
  Expected<Codes> shortBuffer =
      unpackCodes(bytes.data(), 1, 1, 3, 4, false, kTwos, BitOrder::LsbFirst,
                  RowAlignment::Byte);
  ASSERT_FALSE(shortBuffer);
  EXPECT_TRUE(contains(shortBuffer.message(), "need exactly 2"))
      << shortBuffer.message();
  const Bytes longBuffer = {0x21, 0x03, 0x00};
  EXPECT_FALSE(unpackCodes(longBuffer.data(), 3, 1, 3, 4, false, kTwos,
                           BitOrder::LsbFirst, RowAlignment::Byte));
  // The unused high nibble of byte 1 must be zero.
  const Bytes dirty = {0x21, 0x43};
  Expected<Codes> padded = unpackCodes(dirty.data(), 2, 1, 3, 4, false, kTwos,
                                       BitOrder::LsbFirst, RowAlignment::Byte);
  ASSERT_FALSE(padded);
  EXPECT_TRUE(contains(padded.message(), "row 0")) << padded.message();
  EXPECT_TRUE(contains(padded.message(), "padding")) << padded.message();
  Expected<Codes> tightPadded =
      unpackCodes(dirty.data(), 2, 1, 3, 4, false, kTwos, BitOrder::LsbFirst,
                  RowAlignment::Tight);
  ASSERT_FALSE(tightPadded);
  EXPECT_TRUE(contains(tightPadded.message(), "padding"));
  // The same bytes are a valid [1, 4] tensor.
  Expected<Codes> four = unpackCodes(dirty.data(), 2, 1, 4, 4, false, kTwos,
                                     BitOrder::LsbFirst, RowAlignment::Tight);
  ASSERT_TRUE(bool(four));
  EXPECT_EQ(*four, (Codes{1, 2, 3, 4}));
  EXPECT_FALSE(unpackCodes(nullptr, 2, 1, 3, 4, false, kTwos,
                           BitOrder::LsbFirst, RowAlignment::Byte));
  EXPECT_FALSE(unpackCodes(bytes.data(), 2, 1, 3, 9, false, kTwos,
                           BitOrder::LsbFirst, RowAlignment::Byte));
}

} // namespace
