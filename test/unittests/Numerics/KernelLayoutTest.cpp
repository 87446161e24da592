//===- KernelLayoutTest.cpp - Kernel-native layouts preserve codes --------===//
//
// Seed M8.9 0x08B: unpacking a kernel layout gives back the logical codes
// exactly, for every code width, sign and tail. Beyond the round trip, the
// position function is checked to be a bijection onto the buffer's fields,
// decode_gemv is cross-checked against the plain bit-stream packer, and
// prefill_mma is read the way the tensor-core kernel reads it (half2 magic
// numbers per mma.sync B fragment).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Numerics/Packing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace qtensor;

namespace {

using Bytes = std::vector<uint8_t>;
using Codes = std::vector<int32_t>;

constexpr KernelLayoutKind kDecode = KernelLayoutKind::DecodeGemv;
constexpr KernelLayoutKind kPrefill = KernelLayoutKind::PrefillMma;

struct Variant {
  KernelLayoutKind kind;
  unsigned bits;
  bool isSigned;
};

std::vector<Variant> allVariants() {
  std::vector<Variant> out;
  for (KernelLayoutKind kind : {kDecode, kPrefill})
    for (unsigned bits : {4u, 8u})
      for (bool isSigned : {false, true})
        out.push_back({kind, bits, isSigned});
  // 2-, 3-, 5- and 6-bit codes (ggml Q2_K, Q3_K, Q5_x, Q6_K): one per
  // byte field, in either layout.
  for (KernelLayoutKind kind : {kDecode, kPrefill})
    for (unsigned bits : {2u, 3u, 5u, 6u})
      for (bool isSigned : {false, true})
        out.push_back({kind, bits, isSigned});
  return out;
}

std::string name(const Variant &v) {
  return std::string(kernelLayoutId(v.kind).family) + " W" +
         std::to_string(v.bits) + (v.isSigned ? " signed" : " unsigned");
}

/// Random codes over the full range, with the extremes forced in so every
/// bit of a field is exercised.
Codes randomCodes(int64_t rows, int64_t cols, unsigned bits, bool isSigned,
                  uint32_t seed) {
  const int32_t lo = isSigned ? -(1 << (bits - 1)) : 0;
  const int32_t hi = isSigned ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  Codes codes(static_cast<size_t>(rows * cols));
  for (int32_t &c : codes)
    c = dist(rng);
  codes.front() = lo;
  codes.back() = hi;
  return codes;
}

uint32_t word(const Bytes &bytes, uint64_t index) {
  return uint32_t(bytes[4 * index]) | uint32_t(bytes[4 * index + 1]) << 8 |
         uint32_t(bytes[4 * index + 2]) << 16 |
         uint32_t(bytes[4 * index + 3]) << 24;
}

/// IEEE half bits -> double (normal numbers only: the magic values are).
double halfValue(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  const double magnitude = std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
  return (h & 0x8000) ? -magnitude : magnitude;
}

// Shapes with tails in both dimensions, exact multiples, and a single code.
const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {1, 31}, {3, 33}, {7, 100}, {64, 128}, {65, 129}, {33, 4100}};

TEST(KernelLayoutTest, RoundTripPreservesCodesForEveryVariantAndTail) {
  uint32_t seed = 1;
  for (const Variant &v : allVariants()) {
    for (auto [rows, cols] : kShapes) {
      SCOPED_TRACE(name(v) + " [" + std::to_string(rows) + ", " +
                   std::to_string(cols) + "]");
      KernelLayoutSpec spec{v.kind, v.bits, v.isSigned};
      Codes codes = randomCodes(rows, cols, v.bits, v.isSigned, seed++);
      Expected<Bytes> packed = packKernelLayout(spec, codes.data(), rows, cols);
      ASSERT_TRUE(bool(packed)) << packed.message();
      Expected<KernelLayoutGeometry> g = kernelLayoutGeometry(spec, rows, cols);
      ASSERT_TRUE(bool(g));
      EXPECT_EQ(packed->size(), g->bytes);
      Expected<Codes> unpacked =
          unpackKernelLayout(spec, packed->data(), packed->size(), rows, cols);
      ASSERT_TRUE(bool(unpacked)) << unpacked.message();
      EXPECT_EQ(*unpacked, codes);
    }
  }
}

TEST(KernelLayoutTest, PositionsAreABijectionOntoTheBuffer) {
  for (const Variant &v : allVariants()) {
    SCOPED_TRACE(name(v));
    KernelLayoutSpec spec{v.kind, v.bits, v.isSigned};
    Expected<KernelLayoutGeometry> g = kernelLayoutGeometry(spec, 70, 100);
    ASSERT_TRUE(bool(g));
    std::set<std::pair<uint64_t, unsigned>> seen;
    for (int64_t r = 0; r < g->paddedRows; ++r)
      for (int64_t c = 0; c < g->paddedCols; ++c) {
        KernelLayoutPosition at = kernelLayoutPosition(spec, *g, r, c);
        ASSERT_LT(at.word, g->bytes / 4);
        ASSERT_EQ(at.shift % spec.fieldBits(), 0u);
        ASSERT_LT(at.shift, 32u);
        ASSERT_TRUE(seen.insert({at.word, at.shift}).second)
            << "row " << r << " column " << c << " collides";
      }
    // Every field of every word is used exactly once.
    EXPECT_EQ(seen.size(), g->bytes * 8 / spec.fieldBits());
  }
}

// packKernelLayout writes decode_gemv a word at a time, not through the
// position function: the bytes must be the ones the position function
// places, for every width, sign and tail.
TEST(KernelLayoutTest, PackedBytesSitWhereThePositionFunctionSays) {
  uint32_t seed = 100;
  for (const Variant &v : allVariants()) {
    for (auto [rows, cols] : kShapes) {
      SCOPED_TRACE(name(v) + " [" + std::to_string(rows) + ", " +
                   std::to_string(cols) + "]");
      KernelLayoutSpec spec{v.kind, v.bits, v.isSigned};
      Codes codes = randomCodes(rows, cols, v.bits, v.isSigned, seed++);
      Expected<Bytes> packed = packKernelLayout(spec, codes.data(), rows, cols);
      ASSERT_TRUE(bool(packed)) << packed.message();
      Expected<KernelLayoutGeometry> g = kernelLayoutGeometry(spec, rows, cols);
      ASSERT_TRUE(bool(g));
      Bytes expected(g->bytes, 0);
      const int64_t offset = v.isSigned ? int64_t(1) << (v.bits - 1) : 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          KernelLayoutPosition at = kernelLayoutPosition(spec, *g, r, c);
          uint32_t field = uint32_t(codes[r * cols + c] + offset) << at.shift;
          for (int i = 0; i < 4; ++i)
            expected[at.word * 4 + i] |= uint8_t(field >> (8 * i));
        }
      EXPECT_EQ(*packed, expected);
    }
  }
}

TEST(KernelLayoutTest, GeometryPadsToTheKernelTiles) {
  Expected<KernelLayoutGeometry> d4 =
      kernelLayoutGeometry({kDecode, 4, false}, 3, 33);
  ASSERT_TRUE(bool(d4));
  EXPECT_EQ(d4->paddedRows, 3);
  EXPECT_EQ(d4->paddedCols, 64); // 32 W4 codes per 16-byte chunk
  EXPECT_EQ(d4->chunksPerRow, 2);
  EXPECT_EQ(d4->bytes, 3u * 32u);
  Expected<KernelLayoutGeometry> d8 =
      kernelLayoutGeometry({kDecode, 8, false}, 3, 33);
  ASSERT_TRUE(bool(d8));
  EXPECT_EQ(d8->paddedCols, 48); // 16 W8 codes per chunk
  Expected<KernelLayoutGeometry> p4 =
      kernelLayoutGeometry({kPrefill, 4, true}, 65, 17);
  ASSERT_TRUE(bool(p4));
  EXPECT_EQ(p4->paddedRows, 128); // n64 panels
  EXPECT_EQ(p4->paddedCols, 32);  // k16 steps
  EXPECT_EQ(p4->bytes, 2u * 2u * 512u);
  Expected<KernelLayoutGeometry> p8 =
      kernelLayoutGeometry({kPrefill, 8, true}, 33, 16);
  ASSERT_TRUE(bool(p8));
  EXPECT_EQ(p8->paddedRows, 64); // n32 panels
  EXPECT_EQ(p8->bytes, 2u * 512u);
}

TEST(KernelLayoutTest, DecodeLayoutIsTheLsbStreamWithChunkPaddedRows) {
  // The plain bit-stream packer is the oracle: decode_gemv must equal it on
  // the zero-padded [N, Kp] tensor with offset-binary signed codes.
  for (unsigned bits : {4u, 8u}) {
    for (bool isSigned : {false, true}) {
      const int64_t rows = 5, cols = 45;
      KernelLayoutSpec spec{kDecode, bits, isSigned};
      Codes codes = randomCodes(rows, cols, bits, isSigned, 7 + bits);
      Expected<KernelLayoutGeometry> g = kernelLayoutGeometry(spec, rows, cols);
      ASSERT_TRUE(bool(g));
      // Padding is stored as field 0: the offset-binary code -2^(b-1).
      const int32_t pad = isSigned ? -(1 << (bits - 1)) : 0;
      Codes padded(static_cast<size_t>(rows * g->paddedCols), pad);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          padded[r * g->paddedCols + c] = codes[r * cols + c];
      Expected<Bytes> oracle = packCodes(
          padded.data(), rows, g->paddedCols, bits, isSigned,
          SignedEncoding::OffsetBinary, BitOrder::LsbFirst, RowAlignment::Byte);
      ASSERT_TRUE(bool(oracle)) << oracle.message();
      Expected<Bytes> packed = packKernelLayout(spec, codes.data(), rows, cols);
      ASSERT_TRUE(bool(packed));
      EXPECT_EQ(*packed, *oracle) << "W" << bits << (isSigned ? "s" : "u");
    }
  }
}

TEST(KernelLayoutTest, DecodeFixedVector) {
  Codes codes = {1, 2, 3, 4, 5, 6, 7, 8};
  Expected<Bytes> packed = packKernelLayout({kDecode, 4, false}, codes.data(),
                                            1, int64_t(codes.size()));
  ASSERT_TRUE(bool(packed));
  ASSERT_EQ(packed->size(), 16u);
  EXPECT_EQ(word(*packed, 0), 0x87654321u);
  for (int i = 1; i < 4; ++i)
    EXPECT_EQ(word(*packed, i), 0u);
  // Signed W4: -8 is stored as field 0, 7 as field 15.
  Codes signedCodes = {-8, 7};
  packed = packKernelLayout({kDecode, 4, true}, signedCodes.data(), 1, 2);
  ASSERT_TRUE(bool(packed));
  EXPECT_EQ(word(*packed, 0), 0xF0u);
}

/// Reads a prefill panel the way the tensor-core kernel does: each lane
/// loads its 16 bytes and builds half2 registers with the magic number
/// 0x6400 (1024.0); lo/hi minus 1024 must be the fragment's codes.
void checkPrefillFragments(unsigned bits, bool isSigned) {
  SCOPED_TRACE("W" + std::to_string(bits) + (isSigned ? " signed" : ""));
  const int64_t rows = 70, cols = 40; // tails in both dimensions
  KernelLayoutSpec spec{kPrefill, bits, isSigned};
  Codes codes = randomCodes(rows, cols, bits, isSigned, 99 + bits);
  Expected<Bytes> packed = packKernelLayout(spec, codes.data(), rows, cols);
  ASSERT_TRUE(bool(packed));
  Expected<KernelLayoutGeometry> g = kernelLayoutGeometry(spec, rows, cols);
  ASSERT_TRUE(bool(g));
  const int32_t offset = isSigned ? 1 << (bits - 1) : 0;
  const int64_t panelRows = 256 / bits;
  auto expected = [&](int64_t n, int64_t k) -> int32_t {
    return n < rows && k < cols ? codes[n * cols + k] + offset : 0;
  };
  const int64_t slabs = g->paddedRows / panelRows;
  for (int64_t slab = 0; slab < slabs; ++slab) {
    for (int64_t step = 0; step < g->chunksPerRow; ++step) {
      const uint64_t panel = uint64_t(slab * g->chunksPerRow + step);
      for (int lane = 0; lane < 32; ++lane) {
        const int64_t k0 = step * 16 + 2 * (lane % 4);
        for (int j = 0; j < 4; ++j) {
          const uint32_t w = word(*packed, panel * 128 + lane * 4 + j);
          // (tile, register) of each half2 the kernel builds from word j.
          std::vector<std::pair<int64_t, int>> pairs;
          std::vector<uint32_t> halves;
          if (bits == 4) {
            for (int i = 0; i < 4; ++i) {
              halves.push_back(((w >> (4 * i)) & 0x000F000Fu) | 0x64006400u);
              pairs.push_back({2 * j + i / 2, i % 2});
            }
          } else {
            for (int i = 0; i < 2; ++i) {
              halves.push_back(((w >> (8 * i)) & 0x00FF00FFu) | 0x64006400u);
              pairs.push_back({j, i});
            }
          }
          for (size_t p = 0; p < halves.size(); ++p) {
            const int64_t n = slab * panelRows + 8 * pairs[p].first + lane / 4;
            const int64_t k = k0 + 8 * pairs[p].second;
            const double lo = halfValue(uint16_t(halves[p])) - 1024.0;
            const double hi = halfValue(uint16_t(halves[p] >> 16)) - 1024.0;
            ASSERT_EQ(lo, expected(n, k)) << "lane " << lane << " n " << n;
            ASSERT_EQ(hi, expected(n, k + 1)) << "lane " << lane << " n " << n;
          }
        }
      }
    }
  }
}

TEST(KernelLayoutTest, PrefillPanelsHoldMmaFragmentsInHalf2MagicOrder) {
  for (unsigned bits : {4u, 8u})
    for (bool isSigned : {false, true})
      checkPrefillFragments(bits, isSigned);
}

TEST(KernelLayoutTest, LayoutIdsRoundTrip) {
  for (KernelLayoutKind kind : {kDecode, kPrefill}) {
    KernelLayoutId id = kernelLayoutId(kind);
    KernelLayoutKind parsed;
    ASSERT_TRUE(parseKernelLayoutFamily(id.family, parsed));
    EXPECT_EQ(parsed, kind);
    EXPECT_EQ(id.version, 1u);
    EXPECT_EQ(id.encoding, "offset_binary");
  }
  KernelLayoutKind unused;
  EXPECT_FALSE(parseKernelLayoutFamily("logical", unused));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(KernelLayoutTest, RejectsUnsupportedWidthsAndShapes) {
  Codes codes(8, 0);
  Expected<Bytes> seven =
      packKernelLayout({kDecode, 7, false}, codes.data(), 1, 8);
  ASSERT_FALSE(bool(seven));
  EXPECT_TRUE(contains(seven.message(),
                       "2-, 3-, 4-, 5-, 6- or 8-bit codes, got 7 bits"));
  Expected<Bytes> sevenPrefill =
      packKernelLayout({kPrefill, 7, true}, codes.data(), 1, 8);
  ASSERT_FALSE(bool(sevenPrefill));
  EXPECT_TRUE(contains(sevenPrefill.message(),
                       "prefill_mma holds 2-, 3-, 4-, 5-, 6- or 8-bit codes, "
                       "got 7 bits"));
  Expected<Bytes> empty =
      packKernelLayout({kPrefill, 4, false}, codes.data(), 0, 8);
  ASSERT_FALSE(bool(empty));
  EXPECT_TRUE(contains(empty.message(), "must be positive"));
  Expected<KernelLayoutGeometry> huge = kernelLayoutGeometry(
      {kDecode, 8, false}, int64_t(1) << 40, int64_t(1) << 40);
  ASSERT_FALSE(bool(huge));
  EXPECT_TRUE(contains(huge.message(), "overflows"));
}

TEST(KernelLayoutTest, RejectsOutOfRangeCodesByPosition) {
  Codes codes = {0, 1, 16, 2};
  Expected<Bytes> packed =
      packKernelLayout({kDecode, 4, false}, codes.data(), 2, 2);
  ASSERT_FALSE(bool(packed));
  EXPECT_TRUE(contains(packed.message(), "row 1, column 0 is 16"))
      << packed.message();
  Codes signedCodes = {-9};
  packed = packKernelLayout({kPrefill, 4, true}, signedCodes.data(), 1, 1);
  ASSERT_FALSE(bool(packed));
  EXPECT_TRUE(contains(packed.message(), "signed 4-bit range [-8, 7]"));
}

// A 6-bit code sits in the low bits of its byte; a byte above 63 is not a
// code the descriptor allows, and an untrusted artifact holding one fails.
TEST(KernelLayoutTest, ByteFieldsOfNarrowCodesRejectHighBits) {
  KernelLayoutSpec spec{kDecode, 6, true};
  Codes codes = {-32, 31, 0};
  Expected<Bytes> packed = packKernelLayout(spec, codes.data(), 1, 3);
  ASSERT_TRUE(bool(packed)) << packed.message();
  ASSERT_EQ(packed->size(), 16u); // one 16-byte chunk
  EXPECT_EQ((*packed)[0], 0);     // -32 + 32
  EXPECT_EQ((*packed)[1], 63);
  EXPECT_EQ((*packed)[2], 32);
  Bytes corrupt = *packed;
  corrupt[1] = 64;
  Expected<Codes> bad =
      unpackKernelLayout(spec, corrupt.data(), corrupt.size(), 1, 3);
  ASSERT_FALSE(bool(bad));
  EXPECT_TRUE(contains(bad.message(), "field 64 at row 0, column 1, above "
                                      "the largest 6-bit code field 63"))
      << bad.message();
  Codes tooWide = {32};
  EXPECT_FALSE(bool(packKernelLayout(spec, tooWide.data(), 1, 1)));
}

TEST(KernelLayoutTest, PrefillByteFieldsSitWhereW8CodesDo) {
  // A 5-bit code takes the byte a W8 code of the same position takes, in
  // panels of n32: the tensor-core GEMM reads both with one conversion.
  KernelLayoutSpec five{kPrefill, 5, false}, eight{kPrefill, 8, false};
  Expected<KernelLayoutGeometry> g5 = kernelLayoutGeometry(five, 40, 48);
  Expected<KernelLayoutGeometry> g8 = kernelLayoutGeometry(eight, 40, 48);
  ASSERT_TRUE(g5 && g8);
  EXPECT_EQ(g5->paddedRows, 64);
  EXPECT_EQ(g5->bytes, g8->bytes);
  for (int64_t r : {0, 7, 31, 39})
    for (int64_t c : {0, 1, 9, 47}) {
      KernelLayoutPosition a = kernelLayoutPosition(five, *g5, r, c);
      KernelLayoutPosition b = kernelLayoutPosition(eight, *g8, r, c);
      EXPECT_EQ(a.word, b.word);
      EXPECT_EQ(a.shift, b.shift);
    }
}

// Whole words inside a row take decode_gemv's word-at-a-time loops: a bad
// code or field there is still the first one in row-major order.
TEST(KernelLayoutTest, DecodeWordLoopsNameTheFirstBadElement) {
  Codes codes = randomCodes(2, 64, 4, false, 9);
  codes[64 + 20] = 17;
  codes[64 + 9] = -1;
  Expected<Bytes> packed =
      packKernelLayout({kDecode, 4, false}, codes.data(), 2, 64);
  ASSERT_FALSE(bool(packed));
  EXPECT_TRUE(contains(packed.message(), "row 1, column 9 is -1"))
      << packed.message();

  KernelLayoutSpec six{kDecode, 6, false};
  Codes sixCodes = randomCodes(2, 32, 6, false, 3);
  Expected<Bytes> ok = packKernelLayout(six, sixCodes.data(), 2, 32);
  ASSERT_TRUE(bool(ok)) << ok.message();
  Expected<Codes> back = unpackKernelLayout(six, ok->data(), ok->size(), 2, 32);
  ASSERT_TRUE(bool(back)) << back.message();
  EXPECT_EQ(*back, sixCodes);
  Bytes corrupt = *ok;
  corrupt[32 + 17] = 200; // row 1, column 17
  corrupt[32 + 5] = 64;   // row 1, column 5: reported first
  Expected<Codes> bad =
      unpackKernelLayout(six, corrupt.data(), corrupt.size(), 2, 32);
  ASSERT_FALSE(bool(bad));
  EXPECT_TRUE(contains(bad.message(), "field 64 at row 1, column 5"))
      << bad.message();
}

TEST(KernelLayoutTest, UnpackRejectsWrongSizeAndNonzeroPadding) {
  for (KernelLayoutKind kind : {kDecode, kPrefill}) {
    KernelLayoutSpec spec{kind, 4, false};
    Codes codes = randomCodes(3, 33, 4, false, 5);
    Expected<Bytes> packed = packKernelLayout(spec, codes.data(), 3, 33);
    ASSERT_TRUE(bool(packed));
    Expected<Codes> shortRead =
        unpackKernelLayout(spec, packed->data(), packed->size() - 1, 3, 33);
    ASSERT_FALSE(bool(shortRead));
    EXPECT_TRUE(contains(shortRead.message(), "need exactly"));
    // Set the field of padded column 40 in row 2: unpack must refuse it.
    Expected<KernelLayoutGeometry> g = kernelLayoutGeometry(spec, 3, 33);
    ASSERT_TRUE(bool(g));
    KernelLayoutPosition at = kernelLayoutPosition(spec, *g, 2, 40);
    Bytes corrupt = *packed;
    corrupt[4 * at.word + at.shift / 8] |= uint8_t(1u << (at.shift % 8));
    Expected<Codes> bad =
        unpackKernelLayout(spec, corrupt.data(), corrupt.size(), 3, 33);
    ASSERT_FALSE(bool(bad));
    EXPECT_TRUE(
        contains(bad.message(), "nonzero padding field at row 2, column 40"))
        << bad.message();
  }
}

} // namespace
