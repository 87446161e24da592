//===- GGUFDescriptorTest.cpp - GGUF types as qtensor descriptors ---------===//
//
// The affine spelling keeps the stored codes: reconstructing a real Q4_0 /
// Q8_0 tensor from its disassembled codes and scales through the reference
// affine decoder gives ggml's own dequantized values bit for bit.
//
//===----------------------------------------------------------------------===//

#include "GGUFTestSupport.h"

#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/GGUFDescriptor.h"

#include <cstring>
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

// K-quants keep their block contract (nested scales); no affine spelling.
TEST(GGUFDescriptor, KQuantsKeepTheirBlockContract) {
  std::vector<uint8_t> block(144, 0);
  GGUFTensorInfo info{"w", GGMLType::Q4_K, {256}, 256, 144, 0,
                      0,   block.data(),   0};
  auto desc = describeGGUFTensor(info);
  ASSERT_TRUE(desc) << desc.message();
  EXPECT_FALSE(desc->affine.has_value());
  EXPECT_EQ(desc->block.kind, GGMLEncodingKind::KQuantAffine);
  EXPECT_EQ(desc->block.subScaleBits, 6);
  EXPECT_EQ(desc->block.scaleBits, 16);
  auto parts = disassembleGGMLAffine(info);
  ASSERT_FALSE(parts);
  EXPECT_EQ(parts.message(), "tensor 'w': type Q4_K has no affine spelling");
}

TEST(GGUFDescriptor, UnsupportedTypeIsNamed) {
  GGUFTensorInfo info{"w", GGMLType::IQ2_XXS, {256}, 256, 66, 0, 0, nullptr, 0};
  auto desc = describeGGUFTensor(info);
  ASSERT_FALSE(desc);
  EXPECT_EQ(desc.message(), "tensor 'w': unsupported type IQ2_XXS");
}
