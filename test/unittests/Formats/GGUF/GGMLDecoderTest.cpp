//===- GGMLDecoderTest.cpp - ggml type table and block decoders -----------===//

#include "GGUFTestSupport.h"

#include "qtensor/Formats/GGMLTypes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace qtensor;
using namespace qtensor::gguf_test;

namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

//===----------------------------------------------------------------------===//
// Type table
//===----------------------------------------------------------------------===//

TEST(GGMLTypes, TableMatchesGGMLAtThePinnedCommit) {
  // id, name, block elements, block bytes (ggml-common.h structs).
  struct Row {
    uint32_t id;
    const char *name;
    uint32_t block, bytes;
  };
  const Row rows[] = {
      {0, "F32", 1, 4},         {1, "F16", 1, 2},
      {2, "Q4_0", 32, 18},      {3, "Q4_1", 32, 20},
      {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
      {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},
      {10, "Q2_K", 256, 84},    {11, "Q3_K", 256, 110},
      {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
      {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},
      {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},
      {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
      {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},
      {22, "IQ2_S", 256, 82},   {23, "IQ4_XS", 256, 136},
      {24, "I8", 1, 1},         {25, "I16", 1, 2},
      {26, "I32", 1, 4},        {27, "I64", 1, 8},
      {28, "F64", 1, 8},        {29, "IQ1_M", 256, 56},
      {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},
      {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},
      {40, "NVFP4", 64, 36},
  };
  ASSERT_EQ(allGGMLTypes().size(), std::size(rows));
  for (const Row &r : rows) {
    SCOPED_TRACE(r.name);
    const GGMLTypeTraits *t = lookupGGMLType(r.id);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(static_cast<uint32_t>(t->type), r.id);
    EXPECT_EQ(t->name, r.name);
    EXPECT_EQ(t->blockSize, r.block);
    EXPECT_EQ(t->typeSize, r.bytes);
    EXPECT_EQ(ggmlTypeName(t->type), r.name);
    auto byName = ggmlTypeFromName(r.name);
    ASSERT_TRUE(byName);
    EXPECT_EQ(*byName, t->type);
  }
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 41u, ~0u}) {
    EXPECT_EQ(lookupGGMLType(id), nullptr) << id;
    auto e = ggmlTypeFromId(id);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.message(), "unknown ggml type " + std::to_string(id));
  }
  EXPECT_EQ(kGGMLTypeIdLimit, 41u);
  EXPECT_EQ(*ggmlTypeFromName("q4_K"), GGMLType::Q4_K); // ggml's spelling
  EXPECT_FALSE(ggmlTypeFromName("Q4_2"));
}

TEST(GGMLTypes, ByteSizesAreChecked) {
  EXPECT_EQ(*ggmlByteSize(GGMLType::Q4_0, 64), 36u);
  EXPECT_EQ(*ggmlByteSize(GGMLType::Q6_K, 512), 420u);
  EXPECT_EQ(*ggmlByteSize(GGMLType::F32, 0), 0u);
  EXPECT_FALSE(ggmlByteSize(GGMLType::Q4_0, 33));
  EXPECT_FALSE(ggmlByteSize(GGMLType::F64, uint64_t(1) << 61));
}

const GGMLType kDecodable[] = {
    GGMLType::F32,     GGMLType::F16,    GGMLType::BF16,  GGMLType::Q4_0,
    GGMLType::Q4_1,    GGMLType::Q5_0,   GGMLType::Q5_1,  GGMLType::Q8_0,
    GGMLType::Q2_K,    GGMLType::Q3_K,   GGMLType::Q4_K,  GGMLType::Q5_K,
    GGMLType::Q6_K,    GGMLType::IQ4_NL, GGMLType::TQ1_0, GGMLType::TQ2_0,
    GGMLType::IQ2_XXS, GGMLType::IQ2_XS, GGMLType::IQ2_S, GGMLType::IQ3_XXS,
    GGMLType::IQ3_S,   GGMLType::IQ1_S,  GGMLType::IQ1_M, GGMLType::IQ4_XS,
    GGMLType::MXFP4,   GGMLType::NVFP4};

TEST(GGMLTypes, OnlyTheListedTypesDecodeTheRestSayUnsupported) {
  size_t decodable = 0;
  for (const GGMLTypeTraits &t : allGGMLTypes()) {
    SCOPED_TRACE(std::string(t.name));
    bool listed = std::find(std::begin(kDecodable), std::end(kDecodable),
                            t.type) != std::end(kDecodable);
    EXPECT_EQ(isDecodable(t.type), listed);
    std::vector<uint8_t> src(t.typeSize, 0);
    std::vector<float> dst(t.blockSize, -1.0f);
    Status st =
        decodeRow(t.type, src.data(), src.size(), t.blockSize, dst.data());
    if (listed) {
      EXPECT_TRUE(st) << st.message();
      ++decodable;
      auto c = describeGGMLType(t.type);
      ASSERT_TRUE(c) << c.message();
      EXPECT_EQ(c->blockElements, t.blockSize);
      EXPECT_EQ(c->blockBytes, t.typeSize);
      EXPECT_EQ(t.blockSize % c->groupSize, 0u);
      EXPECT_FALSE(c->formula.empty());
    } else {
      ASSERT_FALSE(st);
      EXPECT_EQ(st.message(), "unsupported type " + std::string(t.name));
      EXPECT_EQ(dst[0], -1.0f) << "no guess was written";
      auto c = describeGGMLType(t.type);
      ASSERT_FALSE(c);
      EXPECT_EQ(c.message(), "unsupported type " + std::string(t.name));
      auto v = decodeTensor(t.type, src.data(), src.size(),
                            {static_cast<int64_t>(t.blockSize)});
      ASSERT_FALSE(v);
      EXPECT_EQ(v.message(), "unsupported type " + std::string(t.name));
    }
  }
  EXPECT_EQ(decodable, std::size(kDecodable));
}

TEST(GGMLTypes, BlockContractsDescribeTheStoredCodes) {
  auto q40 = *describeGGMLType(GGMLType::Q4_0);
  EXPECT_EQ(q40.kind, GGMLEncodingKind::LinearSymmetric);
  EXPECT_EQ(q40.codeBits, 4);
  EXPECT_TRUE(q40.codesSigned);
  EXPECT_EQ(q40.codeEncoding, SignedEncoding::OffsetBinary);
  EXPECT_EQ(q40.codeOffset, 8);
  EXPECT_EQ(q40.groupSize, 32u);
  EXPECT_EQ(q40.scaleBits, 16);
  EXPECT_FALSE(q40.hasMin);

  auto q41 = *describeGGMLType(GGMLType::Q4_1);
  EXPECT_EQ(q41.kind, GGMLEncodingKind::LinearAffine);
  EXPECT_FALSE(q41.codesSigned);
  EXPECT_TRUE(q41.hasMin);

  auto q80 = *describeGGMLType(GGMLType::Q8_0);
  EXPECT_EQ(q80.codeBits, 8);
  EXPECT_EQ(q80.codeEncoding, SignedEncoding::TwosComplement);
  EXPECT_EQ(q80.codeOffset, 0);

  auto q50 = *describeGGMLType(GGMLType::Q5_0);
  EXPECT_EQ(q50.codeBits, 5);
  EXPECT_EQ(q50.codeOffset, 16);

  for (GGMLType k : {GGMLType::Q2_K, GGMLType::Q3_K, GGMLType::Q4_K,
                     GGMLType::Q5_K, GGMLType::Q6_K}) {
    auto c = *describeGGMLType(k);
    EXPECT_EQ(c.blockElements, 256u);
    EXPECT_GT(c.subScaleBits, 0);
    EXPECT_EQ(c.scaleBits, 16);
  }
  EXPECT_EQ(describeGGMLType(GGMLType::Q2_K)->subScaleBits, 4);
  EXPECT_EQ(describeGGMLType(GGMLType::Q2_K)->groupSize, 16u);
  EXPECT_EQ(describeGGMLType(GGMLType::Q4_K)->subScaleBits, 6);
  EXPECT_EQ(describeGGMLType(GGMLType::Q4_K)->groupSize, 32u);
  EXPECT_EQ(describeGGMLType(GGMLType::Q6_K)->codeOffset, 32);
  EXPECT_TRUE(describeGGMLType(GGMLType::Q6_K)->subScalesSigned);

  auto nl = *describeGGMLType(GGMLType::IQ4_NL);
  EXPECT_EQ(nl.kind, GGMLEncodingKind::Codebook);
  ASSERT_EQ(nl.codebookSize, 16u);
  EXPECT_EQ(nl.codebook[0], -127);
  EXPECT_EQ(nl.codebook[15], 113);

  EXPECT_EQ(describeGGMLType(GGMLType::TQ1_0)->kind, GGMLEncodingKind::Ternary);
  EXPECT_EQ(describeGGMLType(GGMLType::TQ2_0)->codeOffset, 1);

  auto xs = *describeGGMLType(GGMLType::IQ4_XS);
  EXPECT_EQ(xs.kind, GGMLEncodingKind::Codebook);
  EXPECT_EQ(xs.codebook, nl.codebook);
  EXPECT_EQ(xs.subScaleBits, 6);
  EXPECT_TRUE(xs.subScalesSigned);
  for (GGMLType k :
       {GGMLType::IQ2_XXS, GGMLType::IQ2_XS, GGMLType::IQ2_S, GGMLType::IQ3_XXS,
        GGMLType::IQ3_S, GGMLType::IQ1_S, GGMLType::IQ1_M}) {
    auto c = *describeGGMLType(k);
    EXPECT_EQ(c.kind, GGMLEncodingKind::Lattice);
    EXPECT_EQ(c.codeBits, 0) << "a lattice index names a group, not a code";
    EXPECT_EQ(c.blockElements, 256u);
  }
  EXPECT_EQ(describeGGMLType(GGMLType::IQ2_XS)->groupSize, 16u);
  EXPECT_EQ(describeGGMLType(GGMLType::IQ1_S)->subScaleBits, 3);
}

//===----------------------------------------------------------------------===//
// Scalar conversions
//===----------------------------------------------------------------------===//

TEST(GGMLDecode, Fp16ToFp32IsExactForAll65536Inputs) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float got = fp16ToFp32(static_cast<uint16_t>(h));
    const bool negative = h & 0x8000;
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    if (exponent == 31) {
      if (mantissa == 0) {
        EXPECT_TRUE(std::isinf(got) && std::signbit(got) == negative) << h;
      } else {
        // NaN: sign and payload kept, quiet bit set.
        uint32_t want = (negative ? 0x80000000u : 0) | 0x7fc00000u |
                        (static_cast<uint32_t>(mantissa) << 13);
        EXPECT_EQ(bitsOf(got), want) << h;
      }
      continue;
    }
    // value = mantissa * 2^-24 (subnormal) or (1024 + mantissa) * 2^(e-25).
    double magnitude = exponent == 0
                           ? std::ldexp(static_cast<double>(mantissa), -24)
                           : std::ldexp(1024.0 + mantissa, exponent - 25);
    float want = static_cast<float>(negative ? -magnitude : magnitude);
    EXPECT_EQ(bitsOf(got), bitsOf(want)) << h; // also tells -0 from +0
  }
  EXPECT_EQ(fp16ToFp32(0x0001), std::ldexp(1.0f, -24)); // smallest subnormal
  EXPECT_EQ(fp16ToFp32(0x7BFF), 65504.0f);
}

TEST(GGMLDecode, Bf16IsTheTopHalfOfBinary32) {
  EXPECT_EQ(bf16ToFp32(0x3F80), 1.0f);
  EXPECT_EQ(bf16ToFp32(0xC040), -3.0f);
  EXPECT_EQ(bitsOf(bf16ToFp32(0x7FA1)), 0x7FA10000u); // NaN payload preserved
  EXPECT_EQ(bitsOf(bf16ToFp32(0x0001)), 0x00010000u); // binary32 subnormal
}

//===----------------------------------------------------------------------===//
// Hand-computed blocks (independent of any generator)
//===----------------------------------------------------------------------===//

TEST(GGMLDecode, Q4_0NibbleOrderAndOffset) {
  // d = 0.5 (fp16 0x3800); byte j = low nibble j, high nibble 15 - j.
  std::vector<uint8_t> b = {0x00, 0x38};
  for (int j = 0; j < 16; ++j)
    b.push_back(static_cast<uint8_t>(j | ((15 - j) << 4)));
  std::vector<float> y(32);
  ASSERT_TRUE(decodeRow(GGMLType::Q4_0, b.data(), b.size(), 32, y.data()));
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f);           // first half: low nibbles
    EXPECT_EQ(y[j + 16], (15 - j - 8) * 0.5f); // second half: high nibbles
  }
}

TEST(GGMLDecode, Q5_0HighBitsComeFromQh) {
  // d = 1; all low nibbles 0; qh bit j set for odd j: code 16 -> 0, 0 -> -16.
  std::vector<uint8_t> b = {0x00, 0x3C, 0xAA, 0xAA, 0xAA, 0xAA};
  b.resize(22, 0);
  std::vector<float> y(32);
  ASSERT_TRUE(decodeRow(GGMLType::Q5_0, b.data(), b.size(), 32, y.data()));
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(y[j], (j % 2) ? 0.0f : -16.0f) << j;
}

TEST(GGMLDecode, Q8_0AndIQ4_NLAndTQ2_0) {
  std::vector<uint8_t> q8 = {0x00, 0x40}; // d = 2
  for (int j = 0; j < 32; ++j)
    q8.push_back(static_cast<uint8_t>(static_cast<int8_t>(j * 8 - 128)));
  std::vector<float> y(256);
  ASSERT_TRUE(decodeRow(GGMLType::Q8_0, q8.data(), q8.size(), 32, y.data()));
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(y[j], 2.0f * (j * 8 - 128));

  std::vector<uint8_t> nl = {0x00, 0x3C}; // d = 1
  for (int j = 0; j < 16; ++j)
    nl.push_back(static_cast<uint8_t>(j | (j << 4)));
  ASSERT_TRUE(decodeRow(GGMLType::IQ4_NL, nl.data(), nl.size(), 32, y.data()));
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], kIQ4NLCodebook[j]);
    EXPECT_EQ(y[j + 16], kIQ4NLCodebook[j]);
  }

  // TQ2_0: byte m of each 32-byte run holds elements m, m+32, m+64, m+96.
  std::vector<uint8_t> tq(66, 0);
  tq[0] =
      0b10010000; // plane 0 -> 0 (-1), plane 1 -> 0, plane 2 -> 1, plane 3 -> 2
  tq[64] = 0x00;
  tq[65] = 0x3C; // d = 1
  ASSERT_TRUE(decodeRow(GGMLType::TQ2_0, tq.data(), tq.size(), 256, y.data()));
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[32], -1.0f);
  EXPECT_EQ(y[64], 0.0f);
  EXPECT_EQ(y[96], 1.0f);
  EXPECT_EQ(y[1], -1.0f);
}

TEST(GGMLDecode, TQ1_0TritsAreBase3Fractions) {
  // A byte encoding trits (t0..t4) is ceil(sum t_n 3^(4-n) * 256 / 243).
  auto encode = [](const int t[5]) {
    int q = 0;
    for (int n = 0; n < 5; ++n)
      q = q * 3 + t[n];
    return static_cast<uint8_t>((q * 256 + 242) / 243);
  };
  const int trits[5] = {2, 0, 1, 2, 1};
  std::vector<uint8_t> b(54, 0);
  b[0] = encode(trits);
  for (int m = 1; m < 48; ++m)
    b[m] = encode(trits); // every 5-trit byte the same
  b[52] = 0x00;
  b[53] = 0x3C; // d = 1
  std::vector<float> y(256);
  ASSERT_TRUE(decodeRow(GGMLType::TQ1_0, b.data(), b.size(), 256, y.data()));
  for (int n = 0; n < 5; ++n)
    EXPECT_EQ(y[n * 32], trits[n] - 1) << n; // first 32 bytes
  for (int n = 0; n < 5; ++n)
    EXPECT_EQ(y[160 + n * 16], trits[n] - 1) << n; // next 16 bytes
  for (int k = 240; k < 256; ++k)
    EXPECT_EQ(y[k], -1.0f); // qh bytes are 0: all trits 0
}

TEST(GGMLDecode, IQ2_XXSIsAScaledSignedLatticePoint) {
  // One super-block, d = 1.0; group 0 names grid rows 1 and 0 with sign
  // patterns 0 (all +) and 1 (ksigns 0x81: elements 0 and 7 negative), and
  // s = 2: db = (0.5 + 2) * 0.25.
  std::vector<uint8_t> block(66, 0);
  block[0] = 0x00;
  block[1] = 0x3C; // fp16 1.0
  block[2] = 1;    // grid index of elements 0..7
  block[3] = 0;    // elements 8..15
  const uint32_t aux = (1u << 7) | (2u << 28);
  for (int k = 0; k < 4; ++k)
    block[6 + k] = static_cast<uint8_t>(aux >> (8 * k));
  std::vector<float> y(256, -1.0f);
  ASSERT_TRUE(
      decodeRow(GGMLType::IQ2_XXS, block.data(), block.size(), 256, y.data()));
  const float db = 0.625f;
  // iq2xxs_grid[1] = 0x080808080808082b: element 0 is 0x2b, the rest 0x08.
  EXPECT_EQ(y[0], db * 43.0f);
  for (int j = 1; j < 8; ++j)
    EXPECT_EQ(y[j], db * 8.0f) << j;
  EXPECT_EQ(y[8], -db * 8.0f);
  for (int j = 9; j < 15; ++j)
    EXPECT_EQ(y[j], db * 8.0f) << j;
  EXPECT_EQ(y[15], -db * 8.0f);
  // Groups 1..7 have s = 0 and d * 0.125 * 8 = 1.
  EXPECT_EQ(y[32], 1.0f);
}

//===----------------------------------------------------------------------===//
// Generated fixtures (scripts/gen_ggml_decoder_vectors.py)
//===----------------------------------------------------------------------===//

TEST(GGMLDecode, FixturesAreBitExact) {
  const std::filesystem::path dir = QTENSOR_GGUF_VECTORS_DIR;
  std::ifstream in(dir / "index.json");
  ASSERT_TRUE(in) << "missing " << (dir / "index.json");
  nlohmann::json index = nlohmann::json::parse(in);
  const char *required[] = {"Q4_1",    "Q5_0",  "Q5_1",    "Q2_K",   "Q3_K",
                            "Q4_K",    "Q5_K",  "Q6_K",    "IQ4_NL", "TQ1_0",
                            "TQ2_0",   "BF16",  "IQ2_XXS", "IQ2_XS", "IQ2_S",
                            "IQ3_XXS", "IQ3_S", "IQ1_S",   "IQ1_M",  "IQ4_XS"};
  for (const char *name : required)
    EXPECT_TRUE(index["types"].contains(name)) << name;
  size_t checked = 0;
  for (const auto &[name, entry] : index["types"].items()) {
    SCOPED_TRACE(name);
    auto type = ggmlTypeFromName(name);
    ASSERT_TRUE(type) << type.message();
    const GGMLTypeTraits &t = ggmlTypeTraits(*type);
    std::vector<uint8_t> blocks =
        readBytes(dir / entry["blocks_file"].get<std::string>());
    std::vector<uint8_t> want =
        readBytes(dir / entry["values_file"].get<std::string>());
    ASSERT_EQ(hexDigest(blocks.data(), blocks.size()),
              entry["blocks_sha256"].get<std::string>());
    ASSERT_EQ(hexDigest(want.data(), want.size()),
              entry["values_sha256"].get<std::string>());
    const int64_t n = entry["n_values"].get<int64_t>();
    ASSERT_EQ(blocks.size(), static_cast<size_t>(n / t.blockSize * t.typeSize));
    ASSERT_EQ(want.size(), static_cast<size_t>(n) * 4);

    std::vector<float> got(static_cast<size_t>(n), 0.0f);
    ASSERT_TRUE(decodeRow(*type, blocks.data(), blocks.size(), n, got.data()));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0);
    size_t firstDiff = 0;
    while (firstDiff < got.size() &&
           std::memcmp(&got[firstDiff], &want[4 * firstDiff], 4) == 0)
      ++firstDiff;
    EXPECT_EQ(firstDiff, got.size()) << "first differing element";

    // The same bytes as a 2-D tensor (rows of one block) decode identically.
    auto tensor = decodeTensor(*type, blocks.data(), blocks.size(),
                               {static_cast<int64_t>(t.blockSize),
                                n / static_cast<int64_t>(t.blockSize)});
    ASSERT_TRUE(tensor) << tensor.message();
    EXPECT_EQ(std::memcmp(tensor->data(), want.data(), want.size()), 0);
    ++checked;
  }
  EXPECT_EQ(checked, std::size(required));
}

//===----------------------------------------------------------------------===//
// Argument checks
//===----------------------------------------------------------------------===//

TEST(GGMLDecode, RejectsBadSizesWithoutTouchingTheOutput) {
  std::vector<uint8_t> src(18 * 4, 0);
  std::vector<float> dst(128, -1.0f);
  Status partial =
      decodeRow(GGMLType::Q4_0, src.data(), src.size(), 33, dst.data());
  ASSERT_FALSE(partial);
  EXPECT_NE(partial.message().find("not a whole number of 32-element blocks"),
            std::string::npos)
      << partial.message();
  Status shortSrc =
      decodeRow(GGMLType::Q4_0, src.data(), src.size() - 1, 128, dst.data());
  ASSERT_FALSE(shortSrc);
  EXPECT_NE(shortSrc.message().find("need 72 bytes but only 71"),
            std::string::npos)
      << shortSrc.message();
  EXPECT_FALSE(
      decodeRow(GGMLType::Q4_0, src.data(), src.size(), -32, dst.data()));
  EXPECT_FALSE(decodeRow(GGMLType::Q4_0, nullptr, 72, 128, dst.data()));
  EXPECT_FALSE(decodeRow(static_cast<GGMLType>(4), src.data(), src.size(), 32,
                         dst.data()));
  EXPECT_EQ(dst[0], -1.0f);
  EXPECT_TRUE(decodeRow(GGMLType::Q4_0, nullptr, 0, 0, nullptr));

  auto badRow = decodeTensor(GGMLType::Q4_0, src.data(), src.size(), {16, 4});
  ASSERT_FALSE(badRow);
  EXPECT_NE(badRow.message().find("ne[0] = 16"), std::string::npos);
  auto negative = decodeTensor(GGMLType::F32, src.data(), src.size(), {4, -1});
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.message().find("negative"), std::string::npos);
  // A shape far larger than the bytes fails before allocating anything.
  auto huge = decodeTensor(GGMLType::F32, src.data(), src.size(),
                           {int64_t(1) << 40, int64_t(1) << 20});
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.message().find("bytes but only 72"), std::string::npos)
      << huge.message();
  auto overflow = decodeTensor(GGMLType::F32, src.data(), src.size(),
                               {int64_t(1) << 40, int64_t(1) << 40});
  ASSERT_FALSE(overflow);
  EXPECT_NE(overflow.message().find("overflows"), std::string::npos);
  auto empty = decodeTensor(GGMLType::Q6_K, nullptr, 0, {256, 0});
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_TRUE(empty->empty());
}

} // namespace
