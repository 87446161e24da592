//===- QuantizedStorageTest.cpp - Stored codes <-> logical codes ----------===//

#include "qtensor/Formats/QuantizedStorage.h"

#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Support/Sha256.h"
#include "qtensor/Support/Xxh3.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace qtensor;
using namespace qtensor::artifact;

namespace {

QuantizedTensorDescriptor weight(int64_t n, int64_t k, unsigned bits,
                                 bool isSigned, const char *family) {
  QuantizedTensorDescriptor t;
  t.shape = {n, k};
  t.descriptor.code = CodeType{bits, isSigned};
  t.descriptor.scheme =
      isSigned ? QuantScheme::Symmetric : QuantScheme::Asymmetric;
  t.descriptor.zeroPoint =
      isSigned ? ZeroPointKind::None : ZeroPointKind::Integer;
  t.descriptor.granularity = Granularity::Group;
  t.descriptor.axis = 1;
  t.descriptor.groupSize = 32;
  t.layout.family = family;
  if (std::string(family) != "logical")
    t.layout.encoding = "offset_binary";
  return t;
}

std::vector<int32_t> codesFor(const QuantizedTensorDescriptor &t) {
  CodeBounds b = codeBounds(t.descriptor);
  std::vector<int32_t> codes(t.shape[0] * t.shape[1]);
  for (size_t i = 0; i < codes.size(); ++i)
    codes[i] = static_cast<int32_t>(b.min + (i * 7919) % (b.max - b.min + 1));
  return codes;
}

} // namespace

// Every storage layout gives the logical codes back exactly, with tails.
TEST(QuantizedStorage, RoundTripsEveryLayout) {
  for (const char *family : {"logical", "decode_gemv", "prefill_mma"})
    for (unsigned bits : {4u, 8u})
      for (bool isSigned : {true, false})
        for (auto [n, k] : {std::pair<int64_t, int64_t>{3, 40}, {70, 96}}) {
          auto t = weight(n, k, bits, isSigned, family);
          auto codes = codesFor(t);
          auto bytes = packStoredCodes(t, codes);
          ASSERT_TRUE(bytes) << family << ": " << bytes.message();
          auto shape = storedCodeShape(t);
          ASSERT_TRUE(shape);
          int64_t expected = 1;
          for (int64_t d : *shape)
            expected *= d;
          EXPECT_EQ(static_cast<int64_t>(bytes->size()), expected) << family;
          auto back = unpackStoredCodes(t, bytes->data(), bytes->size());
          ASSERT_TRUE(back) << family << ": " << back.message();
          EXPECT_EQ(*back, codes) << family << " " << bits << " " << isSigned;
        }
}

// Any run of rows reads back exactly the rows the whole unpack gives, in
// every layout, across prefill_mma's panel boundaries (64 rows of W4, 32
// of W8) and its padded last panel, and with permuted (act-order) columns.
TEST(QuantizedStorage, UnpacksAnyRunOfRows) {
  for (const char *family : {"logical", "decode_gemv", "prefill_mma"})
    for (unsigned bits : {4u, 8u})
      for (bool permuted : {false, true}) {
        auto t = weight(150, 96, bits, false, family);
        if (permuted) {
          std::vector<int64_t> perm(96);
          for (int64_t i = 0; i < 96; ++i)
            perm[size_t(i)] = (i * 37) % 96;
          t.descriptor.permutation = perm;
        }
        auto codes = codesFor(t);
        auto bytes = packStoredCodes(t, codes);
        ASSERT_TRUE(bytes) << family << ": " << bytes.message();
        const int64_t unit = storedCodeRowUnit(t);
        EXPECT_EQ(unit, std::string(family) != "prefill_mma" ? 1
                        : bits == 4                          ? 64
                                                             : 32)
            << family << " " << bits;
        for (auto [first, count] : {std::pair<int64_t, int64_t>{0, 150},
                                    {0, 1},
                                    {63, 2},
                                    {64, 64},
                                    {100, 50},
                                    {149, 1},
                                    {31, 0}}) {
          auto rows = unpackStoredCodeRows(t, bytes->data(), bytes->size(),
                                           first, count);
          ASSERT_TRUE(rows) << family << ": " << rows.message();
          std::vector<int32_t> want(codes.begin() + first * 96,
                                    codes.begin() + (first + count) * 96);
          EXPECT_EQ(*rows, want)
              << family << " " << bits << " rows " << first << " + " << count;
        }
      }
}

// The row reader checks the whole buffer's size, the rows asked for, and
// names a bad code by its element in the whole tensor.
TEST(QuantizedStorage, RowReaderRefusesBadRequestsAndNamesElements) {
  auto t = weight(70, 32, 4, true, "decode_gemv");
  auto codes = codesFor(t);
  auto bytes = packStoredCodes(t, codes);
  ASSERT_TRUE(bytes);
  auto outside = unpackStoredCodeRows(t, bytes->data(), bytes->size(), 60, 11);
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.message().find("rows [60, 71) are outside [0, 70)"),
            std::string::npos)
      << outside.message();
  auto truncated =
      unpackStoredCodeRows(t, bytes->data(), bytes->size() - 16, 0, 1);
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.message().find(
                "hold " + std::to_string(bytes->size() - 16) + " bytes"),
            std::string::npos)
      << truncated.message();
  // -8 is outside narrow si4: element 41 * 32 + 5 of the whole tensor.
  for (int32_t &c : codes)
    c = 0;
  codes[41 * 32 + 5] = -8;
  bytes = packStoredCodes(t, codes);
  ASSERT_TRUE(bytes);
  t.descriptor.narrowRange = true;
  auto bad = unpackStoredCodeRows(t, bytes->data(), bytes->size(), 40, 3);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("element 1317 (row 41, column 5)"),
            std::string::npos)
      << bad.message();
  EXPECT_TRUE(unpackStoredCodeRows(t, bytes->data(), bytes->size(), 42, 28));
}

// What L1 and L2 stream: blocks of whole units in row order whose codes
// are the whole unpack's, whose repacking is exactly their stored byte
// range, and whose reconstruction digest is the whole tensor's.
TEST(QuantizedStorage, RowBlocksRepackToTheirBytesAndDigestTheWhole) {
  for (const char *family : {"logical", "decode_gemv", "prefill_mma"})
    for (unsigned bits : {4u, 8u}) {
      auto t = weight(150, 96, bits, false, family);
      auto codes = codesFor(t);
      auto bytes = packStoredCodes(t, codes);
      ASSERT_TRUE(bytes) << family << ": " << bytes.message();
      const int64_t unit = storedCodeRowUnit(t);
      int64_t next = 0;
      uint64_t nextByte = 0;
      Status walked = forEachStoredRowBlock(
          t, bytes->data(), bytes->size(), 96 * 40,
          [&](int64_t first, int64_t count,
              const std::vector<int32_t> &block) -> Status {
            EXPECT_EQ(first, next);
            EXPECT_EQ(first % unit, 0);
            next = first + count;
            EXPECT_TRUE(std::equal(block.begin(), block.end(),
                                   codes.begin() + first * 96));
            auto range = storedRowsByteRange(t, first, count);
            EXPECT_TRUE(range) << range.message();
            if (!range)
              return range.error();
            EXPECT_EQ(range->first, nextByte);
            nextByte = range->first + range->second;
            QuantizedTensorDescriptor part = t;
            part.shape[0] = count;
            auto repacked = packStoredCodes(part, block);
            EXPECT_TRUE(repacked) << repacked.message();
            if (repacked)
              EXPECT_TRUE(repacked->size() == range->second &&
                          std::equal(repacked->begin(), repacked->end(),
                                     bytes->begin() + range->first))
                  << family << " " << bits << " rows " << first;
            return Status::ok();
          });
      ASSERT_TRUE(walked) << walked.message();
      EXPECT_EQ(next, 150);
      EXPECT_EQ(nextByte, bytes->size()) << family << " " << bits;
      std::vector<double> scales(150 * 3), zeros(150 * 3);
      for (size_t i = 0; i < scales.size(); ++i) {
        scales[i] = 0.125 * double(i + 1);
        zeros[i] = double(i % 16);
      }
      for (DigestForm form : {DigestForm::Sha256, DigestForm::Xxh3}) {
        auto whole = reconstructionDigest(t, codes, scales, zeros, form);
        auto stored = storedReconstructionDigest(
            t, bytes->data(), bytes->size(), scales, zeros, form);
        ASSERT_TRUE(whole && stored) << family;
        EXPECT_EQ(*stored, *whole) << family << " " << bits;
      }
    }
  auto t = weight(150, 96, 4, true, "prefill_mma");
  EXPECT_FALSE(storedRowsByteRange(t, 1, 64));  // not a panel's first row
  EXPECT_FALSE(storedRowsByteRange(t, 0, 65));  // ends inside a panel
  EXPECT_TRUE(storedRowsByteRange(t, 128, 22)); // the padded last panel
}

TEST(QuantizedStorage, RefusesLayoutsItDoesNotStore) {
  auto t = weight(4, 32, 4, true, "ggml_block");
  auto bytes = packStoredCodes(t, codesFor(t));
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.message().find("ggml_block"), std::string::npos);
  auto wrongVersion = weight(4, 32, 4, true, "decode_gemv");
  wrongVersion.layout.version = 2;
  EXPECT_FALSE(packStoredCodes(wrongVersion, codesFor(wrongVersion)));
}

// A tensor large enough to be packed in row blocks on the thread pool gives
// the bytes of the one serial pack, and a bad code in a late block is named
// by its row in the whole tensor.
TEST(QuantizedStorage, PackingInRowBlocksIsThePackOfTheWhole) {
  auto t = weight(1024, 1024, 4, true, "decode_gemv");
  auto codes = codesFor(t);
  auto bytes = packStoredCodes(t, codes);
  ASSERT_TRUE(bytes) << bytes.message();
  auto serial = packKernelLayout({KernelLayoutKind::DecodeGemv, 4, true},
                                 codes.data(), 1024, 1024);
  ASSERT_TRUE(serial) << serial.message();
  EXPECT_EQ(*bytes, *serial);
  codes[size_t(900) * 1024 + 17] = 8;
  codes[size_t(1000) * 1024 + 3] = -9;
  auto bad = packStoredCodes(t, codes);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("row 900, column 17 is 8"), std::string::npos)
      << bad.message();
}

// A code outside the descriptor's range (here -8 under narrow si4) is
// named by element, row and column.
TEST(QuantizedStorage, UnpackChecksTheDescriptorsRange) {
  auto t = weight(2, 32, 4, true, "logical");
  auto codes = codesFor(t);
  for (int32_t &c : codes)
    c = 0;
  codes[37] = -8;
  auto bytes = packStoredCodes(t, codes);
  ASSERT_TRUE(bytes);
  t.descriptor.narrowRange = true;
  auto back = unpackStoredCodes(t, bytes->data(), bytes->size());
  ASSERT_FALSE(back);
  EXPECT_NE(back.message().find("element 37 (row 1, column 5)"),
            std::string::npos)
      << back.message();
}

// E4M3's NaN codes (0x7f, 0xff) unpack from any layout, and are refused
// by element, row and column: they name no weight.
TEST(QuantizedStorage, UnpackRefusesNaNCodesOfACodebook) {
  for (const char *family : {"logical", "decode_gemv"}) {
    auto t = weight(2, 32, 8, false, family);
    t.descriptor.scheme = QuantScheme::Symmetric;
    t.descriptor.zeroPoint = ZeroPointKind::None;
    t.descriptor.codebook = Codebook::E4M3;
    std::vector<int32_t> codes(64, 0x38);
    codes[40] = 0xFF;
    auto bytes = packStoredCodes(t, codes);
    ASSERT_TRUE(bytes) << bytes.message();
    auto back = unpackStoredCodes(t, bytes->data(), bytes->size());
    ASSERT_FALSE(back) << family;
    EXPECT_NE(back.message().find("code 255 at element 40 (row 1, column 8) "
                                  "is NaN in codebook e4m3"),
              std::string::npos)
        << back.message();
  }
}

TEST(QuantizedStorage, ReadsQParams) {
  uint16_t halves[2] = {floatToHalfBits(0.5f), floatToHalfBits(-2.0f)};
  auto v = readQParams(safetensors::DType::F16,
                       reinterpret_cast<const uint8_t *>(halves), 4);
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, (std::vector<double>{0.5, -2.0}));
  uint8_t zeros[3] = {0, 8, 255};
  auto z = readQParams(safetensors::DType::U8, zeros, 3);
  ASSERT_TRUE(z);
  EXPECT_EQ(*z, (std::vector<double>{0, 8, 255}));
  EXPECT_FALSE(readQParams(safetensors::DType::F16, zeros, 3)); // odd bytes
  EXPECT_FALSE(readQParams(safetensors::DType::F64, zeros, 0));
}

// The digest depends on every code and scale, not on the layout.
TEST(QuantizedStorage, ReconstructionDigestSeesEveryValue) {
  for (DigestForm form : {DigestForm::Sha256, DigestForm::Xxh3}) {
    auto t = weight(2, 64, 4, true, "logical");
    auto codes = codesFor(t);
    std::vector<double> scales(4, 0.25);
    auto a = reconstructionDigest(t, codes, scales, {}, form);
    ASSERT_TRUE(a) << a.message();
    auto kernel = t;
    kernel.layout.family = "decode_gemv";
    EXPECT_EQ(*reconstructionDigest(kernel, codes, scales, {}, form), *a);
    codes[100] = codes[100] == 0 ? 1 : 0;
    EXPECT_NE(*reconstructionDigest(t, codes, scales, {}, form), *a);
    codes[100] = codesFor(t)[100];
    scales[3] = 0.5;
    EXPECT_NE(*reconstructionDigest(t, codes, scales, {}, form), *a);
  }
}

// Both forms by their definitions (QuantizedStorage.h), computed here from
// the f32 bytes; 4200 x 1024 values, which the stored form reads in row
// blocks of 2^22 codes.
TEST(QuantizedStorage, ReconstructionDigestFormsAsDefined) {
  for (const char *family : {"logical", "prefill_mma"}) {
    auto t = weight(4200, 1024, 4, false, family);
    auto codes = codesFor(t);
    std::vector<double> scales(size_t(4200) * 32), zeros(scales.size());
    for (size_t i = 0; i < scales.size(); ++i) {
      scales[i] = 0.001 * double(i % 97 + 1);
      zeros[i] = double(i % 16);
    }
    auto f32 = reconstructionF32Bytes(t, codes, scales, zeros);
    ASSERT_TRUE(f32) << f32.message();
    const std::string sha = *sha256Hex(f32->data(), f32->size());
    auto xxhStream = Xxh3Stream::create();
    ASSERT_TRUE(xxhStream);
    ASSERT_TRUE(xxhStream->update(f32->data(), f32->size()));
    const std::string xxh = xxhStream->finishHex();
    EXPECT_EQ(xxh.size(), 32u);
    EXPECT_EQ(
        *reconstructionDigest(t, codes, scales, zeros, DigestForm::Sha256),
        sha);
    EXPECT_EQ(*reconstructionDigest(t, codes, scales, zeros, DigestForm::Xxh3),
              xxh);
    auto bytes = packStoredCodes(t, codes);
    ASSERT_TRUE(bytes) << bytes.message();
    EXPECT_EQ(*storedReconstructionDigest(t, bytes->data(), bytes->size(),
                                          scales, zeros, DigestForm::Xxh3),
              xxh)
        << family;
  }
}

// XXH3-128 as xxHash defines it: the empty input's published checksum
// (0x99aa06d3014798d8'6001c324468d497f, high half first), and pieces
// giving the checksum of the whole.
TEST(QuantizedStorage, Xxh3StreamIsXxh128) {
  auto empty = Xxh3Stream::create();
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->finishHex(), "99aa06d3014798d86001c324468d497f");
  std::vector<uint8_t> bytes(100000);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = uint8_t(i * 131 + 7);
  auto whole = Xxh3Stream::create(), pieces = Xxh3Stream::create();
  ASSERT_TRUE(whole && pieces);
  ASSERT_TRUE(whole->update(bytes.data(), bytes.size()));
  for (size_t at = 0; at < bytes.size(); at += 777)
    ASSERT_TRUE(pieces->update(bytes.data() + at,
                               std::min<size_t>(777, bytes.size() - at)));
  EXPECT_EQ(pieces->finishHex(), whole->finishHex());
}
