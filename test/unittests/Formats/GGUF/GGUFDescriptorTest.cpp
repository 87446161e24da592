//===- GGUFDescriptorTest.cpp - GGUF types as qtensor descriptors ---------===//
//
// The affine spelling keeps the stored codes: reconstructing a real Q4_0 /
// Q8_0 tensor (and gguf-py's vectors of every other spelled type) from its
// disassembled codes and scales through the reference affine decoder gives
// ggml's own dequantized values bit for bit.
//
//===----------------------------------------------------------------------===//

#include "GGUFTestSupport.h"

#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/GGUFDescriptor.h"

#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>

using namespace qtensor;

namespace {
void expectAffineMatchesDecoder(const std::string &file,
                                GGMLType expectedType) {
  if (!gguf_test::corpusPresent())
    GTEST_SKIP() << "corpus absent: " << gguf_test::corpusDir();
  auto gguf = GGUFFile::open((gguf_test::corpusDir() / file).string());
  ASSERT_TRUE(gguf) << gguf.message();
  int checked = 0;
  for (const GGUFTensorInfo &info : gguf->tensors()) {
    if (info.type != expectedType)
      continue;
    SCOPED_TRACE(std::string(info.name));
    auto desc = describeGGUFTensor(info);
    ASSERT_TRUE(desc) << desc.message();
    ASSERT_TRUE(desc->affine.has_value());
    EXPECT_EQ(desc->affine->shape,
              std::vector<int64_t>(info.ne.rbegin(), info.ne.rend()));
    auto parts = disassembleGGMLAffine(info);
    ASSERT_TRUE(parts) << parts.message();
    auto values = reconstructAffine(*desc->affine, parts->codes, parts->scales,
                                    parts->zeros);
    ASSERT_TRUE(values) << values.message();
    auto reference = gguf->decode(info);
    ASSERT_TRUE(reference) << reference.message();
    ASSERT_EQ(values->size(), reference->size());
    std::vector<float> asFloat(values->begin(), values->end());
    EXPECT_EQ(std::memcmp(asFloat.data(), reference->data(),
                          asFloat.size() * sizeof(float)),
              0);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}
} // namespace

TEST(GGUFDescriptor, Q4_0IsOffsetBinarySymmetricGroupsOf32) {
  if (!gguf_test::corpusPresent())
    GTEST_SKIP() << "corpus absent";
  auto gguf = GGUFFile::open(
      (gguf_test::corpusDir() / "gguf/tiny_llama/tiny-llama-Q4_0.gguf")
          .string());
  ASSERT_TRUE(gguf) << gguf.message();
  const GGUFTensorInfo *info = gguf->findTensor("blk.0.attn_k.weight");
  ASSERT_NE(info, nullptr);
  auto desc = describeGGUFTensor(*info);
  ASSERT_TRUE(desc) << desc.message();
  ASSERT_TRUE(desc->affine);
  const QuantizedTensorDescriptor &t = *desc->affine;
  EXPECT_EQ(t.shape, (std::vector<int64_t>{128, 256}));
  EXPECT_EQ(t.descriptor.code, (CodeType{4, true}));
  EXPECT_EQ(t.descriptor.encoding, SignedEncoding::OffsetBinary);
  EXPECT_EQ(t.descriptor.scheme, QuantScheme::Symmetric);
  EXPECT_EQ(t.descriptor.granularity, Granularity::Group);
  EXPECT_EQ(t.descriptor.axis, 1);
  EXPECT_EQ(t.descriptor.groupSize, 32);
  EXPECT_EQ(t.descriptor.scaleType, FloatType::F16);
  EXPECT_EQ(t.layout.family, "ggml_block");
  EXPECT_EQ(t.layout.encoding, "q4_0");
  EXPECT_EQ(t.layout.tile, (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(qparamShape(t.descriptor, t.shape), (std::vector<int64_t>{128, 8}));
}

TEST(GGUFDescriptor, Q4_0CodesReconstructBitExactly) {
  expectAffineMatchesDecoder("gguf/tiny_llama/tiny-llama-Q4_0.gguf",
                             GGMLType::Q4_0);
}

TEST(GGUFDescriptor, Q8_0CodesReconstructBitExactly) {
  expectAffineMatchesDecoder("gguf/tiny_llama/tiny-llama-Q8_0.gguf",
                             GGMLType::Q8_0);
}

// Q4_1 (scale and min): a hand-built block, x = d * q + m.
TEST(GGUFDescriptor, Q4_1IsScaleAndMin) {
  std::vector<uint8_t> block(20);
  block[0] = 0x00, block[1] = 0x38; // d = 0.5
  block[2] = 0x00, block[3] = 0xbc; // m = -1.0
  for (int j = 0; j < 16; ++j)
    block[4 + j] = uint8_t(j | ((15 - j) << 4));
  GGUFTensorInfo info{"w", GGMLType::Q4_1, {32}, 32, 20, 0, 0, block.data(), 0};
  auto desc = describeGGUFTensor(info);
  ASSERT_TRUE(desc) << desc.message();
  ASSERT_TRUE(desc->affine);
  EXPECT_EQ(desc->affine->descriptor.zeroPoint, ZeroPointKind::Min);
  auto parts = disassembleGGMLAffine(info);
  ASSERT_TRUE(parts) << parts.message();
  EXPECT_EQ(parts->codes[0], 0);
  EXPECT_EQ(parts->codes[16], 15);
  auto values = reconstructAffine(*desc->affine, parts->codes, parts->scales,
                                  parts->zeros);
  ASSERT_TRUE(values) << values.message();
  std::vector<float> reference(32);
  ASSERT_TRUE(decodeRow(GGMLType::Q4_1, block.data(), block.size(), 32,
                        reference.data()));
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(float((*values)[i]), reference[i]) << i;
  EXPECT_EQ(reference[0], -1.0f);
  EXPECT_EQ(reference[16], 6.5f);
}

// Every type with an affine spelling, on gguf-py's own dequantized vectors
// (test/unittests/Formats/GGUF/vectors): the disassembled codes and qparams
// reconstruct through the reference affine decoder to the same floats bit
// for bit, and the codes lie in the descriptor's range.
TEST(GGUFDescriptor, EveryAffineSpellingReconstructsGGUFPyVectors) {
  const std::filesystem::path dir = QTENSOR_GGUF_VECTORS_DIR;
  struct Want {
    GGMLType type;
    CodeType code;
    ZeroPointKind zeroPoint;
    int64_t group;
    FloatType scale;
    int64_t block;
    Codebook codebook = Codebook::None;
  };
  const Want wants[] = {
      {GGMLType::Q2_K, {2, false}, ZeroPointKind::Min, 16, FloatType::F32, 256},
      {GGMLType::Q3_K, {3, true}, ZeroPointKind::None, 16, FloatType::F32, 256},
      {GGMLType::Q4_1, {4, false}, ZeroPointKind::Min, 32, FloatType::F16, 32},
      {GGMLType::Q5_0, {5, true}, ZeroPointKind::None, 32, FloatType::F16, 32},
      {GGMLType::Q5_1, {5, false}, ZeroPointKind::Min, 32, FloatType::F16, 32},
      {GGMLType::Q4_K, {4, false}, ZeroPointKind::Min, 32, FloatType::F32, 256},
      {GGMLType::Q5_K, {5, false}, ZeroPointKind::Min, 32, FloatType::F32, 256},
      {GGMLType::Q6_K, {6, true}, ZeroPointKind::None, 16, FloatType::F32, 256},
      {GGMLType::IQ4_NL,
       {4, false},
       ZeroPointKind::None,
       32,
       FloatType::F16,
       32,
       Codebook::IQ4NL},
      {GGMLType::IQ4_XS,
       {4, false},
       ZeroPointKind::None,
       32,
       FloatType::F32,
       256,
       Codebook::IQ4NL},
  };
  for (const Want &want : wants) {
    const std::string name(ggmlTypeName(want.type));
    SCOPED_TRACE(name);
    std::vector<uint8_t> blocks =
        gguf_test::readBytes(dir / (name + ".blocks"));
    std::vector<uint8_t> values = gguf_test::readBytes(dir / (name + ".f32"));
    ASSERT_FALSE(blocks.empty());
    const uint64_t n = values.size() / 4;
    GGUFTensorInfo info{"w", want.type, {int64_t(n)},  n, blocks.size(),
                        0,   0,         blocks.data(), 0};
    auto desc = describeGGUFTensor(info);
    ASSERT_TRUE(desc) << desc.message();
    ASSERT_TRUE(desc->affine);
    const QuantizedTensorDescriptor &t = *desc->affine;
    EXPECT_EQ(t.descriptor.code, want.code);
    EXPECT_EQ(t.descriptor.zeroPoint, want.zeroPoint);
    EXPECT_EQ(t.descriptor.groupSize, want.group);
    EXPECT_EQ(t.descriptor.scaleType, want.scale);
    EXPECT_EQ(t.descriptor.codebook, want.codebook);
    EXPECT_EQ(t.layout.tile, (std::vector<int64_t>{want.block}));
    EXPECT_TRUE(hasAffineSpelling(want.type));
    auto parts = disassembleGGMLAffine(info);
    ASSERT_TRUE(parts) << parts.message();
    ASSERT_EQ(parts->codes.size(), n);
    ASSERT_EQ(parts->scales.size(), n / uint64_t(want.group));
    CodeBounds bounds = codeBounds(t.descriptor);
    for (int32_t q : parts->codes)
      ASSERT_TRUE(q >= bounds.min && q <= bounds.max) << q;
    auto rebuilt =
        reconstructAffine(t, parts->codes, parts->scales, parts->zeros);
    ASSERT_TRUE(rebuilt) << rebuilt.message();
    std::vector<float> asFloat(rebuilt->begin(), rebuilt->end());
    EXPECT_EQ(std::memcmp(asFloat.data(), values.data(), values.size()), 0);
    // The K-quants' stored second level decodes, second level first, to
    // the first level above bit for bit: what an artifact stores.
    EXPECT_EQ(t.descriptor.nested.has_value(), want.block == 256);
    if (!t.descriptor.nested)
      continue;
    ASSERT_EQ(parts->superScales.size(), n / 256);
    auto first = decodeNestedQParams(t.descriptor, t.shape, parts->scaleCodes,
                                     parts->superScales, parts->minCodes,
                                     parts->superMins);
    ASSERT_TRUE(first) << first.message();
    std::vector<float> scales(parts->scales.begin(), parts->scales.end());
    std::vector<float> mins(parts->zeros.begin(), parts->zeros.end());
    EXPECT_EQ(first->scales, scales);
    EXPECT_EQ(first->mins, mins);
  }
}

// A K-quant's affine spelling is its second level decoded first: Q4_K's
// sub-block j has scale d * sc_j and min -(dmin * m_j), 6-bit codes from
// the 12 packed bytes (j >= 4 takes its high bits from bytes j - 4, j).
TEST(GGUFDescriptor, Q4_KScalesAreTheSecondLevelDecodedFirst) {
  std::vector<uint8_t> block(144, 0);
  block[0] = 0x00, block[1] = 0x38; // d = 0.5
  block[2] = 0x00, block[3] = 0x3c; // dmin = 1.0
  block[4 + 0] = 0x80 | 3;          // sc_0 = 3, high bits of sc_4 = 2
  block[4 + 4] = 0x40 | 5;          // m_0 = 5, high bits of m_4 = 1
  block[4 + 8] = 0x27;              // sc_4 low 7, m_4 low 2
  block[16] = 0x21;                 // code 1 (sub-block 0), 2 (sub-block 1)
  GGUFTensorInfo info{"w", GGMLType::Q4_K, {256}, 256, 144, 0,
                      0,   block.data(),   0};
  auto parts = disassembleGGMLAffine(info);
  ASSERT_TRUE(parts) << parts.message();
  EXPECT_EQ(parts->scales[0], 1.5);      // 0.5 * 3
  EXPECT_EQ(parts->zeros[0], -5.0);      // -(1.0 * 5)
  EXPECT_EQ(parts->scales[4], 0.5 * 39); // sc_4 = 7 | 2 << 4
  EXPECT_EQ(parts->zeros[4], -1.0 * 18); // m_4 = 2 | 1 << 4
  EXPECT_EQ(parts->codes[0], 1);
  EXPECT_EQ(parts->codes[32], 2);
  // The two levels as stored: the codes and d, dmin.
  EXPECT_EQ(parts->scaleCodes[0], 3);
  EXPECT_EQ(parts->minCodes[0], 5);
  EXPECT_EQ(parts->scaleCodes[4], 39);
  EXPECT_EQ(parts->minCodes[4], 18);
  EXPECT_EQ(parts->superScales, std::vector<double>{0.5});
  EXPECT_EQ(parts->superMins, std::vector<double>{1.0});
  auto desc = describeGGUFTensor(info);
  ASSERT_TRUE(desc && desc->affine);
  const NestedQParams want{{6, false}, CodeType{6, false}, 256, FloatType::F16};
  EXPECT_EQ(desc->affine->descriptor.nested, want);
}

// The ternary and lattice types keep their block contract alone.
TEST(GGUFDescriptor, OtherTypesKeepTheirBlockContract) {
  std::vector<uint8_t> block(66, 0);
  GGUFTensorInfo info{"w", GGMLType::TQ2_0, {256}, 256, 66, 0,
                      0,   block.data(),    0};
  auto desc = describeGGUFTensor(info);
  ASSERT_TRUE(desc) << desc.message();
  EXPECT_FALSE(desc->affine.has_value());
  EXPECT_FALSE(hasAffineSpelling(GGMLType::TQ2_0));
  EXPECT_FALSE(hasAffineSpelling(GGMLType::IQ2_XXS));
  EXPECT_TRUE(hasAffineSpelling(GGMLType::IQ4_NL));
  EXPECT_TRUE(hasAffineSpelling(GGMLType::Q2_K));
  EXPECT_TRUE(hasAffineSpelling(GGMLType::Q3_K));
  auto parts = disassembleGGMLAffine(info);
  ASSERT_FALSE(parts);
  EXPECT_EQ(parts.message(), "tensor 'w': type TQ2_0 has no affine spelling");
}

TEST(GGUFDescriptor, UnsupportedTypeIsNamed) {
  GGUFTensorInfo info{"w", GGMLType::Q8_K, {256}, 256, 292, 0, 0, nullptr, 0};
  auto desc = describeGGUFTensor(info);
  ASSERT_FALSE(desc);
  EXPECT_EQ(desc.message(), "tensor 'w': unsupported type Q8_K");
}
