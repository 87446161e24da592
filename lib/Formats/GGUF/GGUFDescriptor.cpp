//===- GGUFDescriptor.cpp - GGUF tensors as qtensor descriptors -----------===//

#include "qtensor/Formats/GGUFDescriptor.h"

using namespace qtensor;

namespace {
constexpr int64_t kBlock = 32;

struct AffineSpelling {
  CodeType code;
  SignedEncoding encoding;
  ZeroPointKind zeroPoint;
  const char *layoutEncoding;
  uint32_t blockBytes;
};

std::optional<AffineSpelling> affineSpelling(GGMLType type) {
  switch (type) {
  case GGMLType::Q4_0:
    return AffineSpelling{{4, true},
                          SignedEncoding::OffsetBinary,
                          ZeroPointKind::None,
                          "q4_0",
                          18};
  case GGMLType::Q4_1:
    return AffineSpelling{{4, false},
                          SignedEncoding::TwosComplement,
                          ZeroPointKind::Min,
                          "q4_1",
                          20};
  case GGMLType::Q8_0:
    return AffineSpelling{{8, true},
                          SignedEncoding::TwosComplement,
                          ZeroPointKind::None,
                          "q8_0",
                          34};
  default:
    return std::nullopt;
  }
}

uint16_t readU16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
} // namespace

Expected<GGUFTensorDescriptor>
qtensor::describeGGUFTensor(const GGUFTensorInfo &tensor) {
  auto block = describeGGMLType(tensor.type);
  if (!block)
    return makeError("tensor '", std::string(tensor.name),
                     "': ", block.message());
  GGUFTensorDescriptor result;
  result.block = *block;
  result.shape.assign(tensor.ne.rbegin(), tensor.ne.rend());
  auto spelling = affineSpelling(tensor.type);
  if (!spelling || result.shape.empty())
    return result;

  QuantizedTensorDescriptor t;
  t.shape = result.shape;
  t.elementType = FloatType::F32; // ggml dequantizes to f32
  AffineDescriptor &d = t.descriptor;
  d.code = spelling->code;
  d.encoding = spelling->encoding;
  d.zeroPoint = spelling->zeroPoint;
  d.scheme = d.zeroPoint == ZeroPointKind::None ? QuantScheme::Symmetric
                                                : QuantScheme::Asymmetric;
  d.granularity = Granularity::Group;
  d.axis = static_cast<int64_t>(t.shape.size()) - 1;
  d.groupSize = kBlock;
  d.tail = TailRule::Exact;
  d.scaleType = FloatType::F16;
  t.layout.family = "ggml_block";
  t.layout.version = 1;
  t.layout.encoding = spelling->layoutEncoding;
  t.layout.tile.assign(t.shape.size(), 1);
  t.layout.tile.back() = kBlock;
  t.layout.padding.assign(t.shape.size(), 0);
  if (Status s = verifyTensorDescriptor(t); !s)
    return makeError("tensor '", std::string(tensor.name), "': ", s.message());
  result.affine = std::move(t);
  return result;
}

Expected<GGMLAffineParts>
qtensor::disassembleGGMLAffine(const GGUFTensorInfo &tensor) {
  auto spelling = affineSpelling(tensor.type);
  if (!spelling)
    return makeError("tensor '", std::string(tensor.name), "': type ",
                     std::string(ggmlTypeName(tensor.type)),
                     " has no affine spelling");
  uint64_t blocks = tensor.elementCount / kBlock;
  if (tensor.elementCount % kBlock != 0 ||
      tensor.byteSize != blocks * spelling->blockBytes)
    return makeError("tensor '", std::string(tensor.name),
                     "': ", tensor.byteSize, " bytes do not hold ", blocks,
                     " blocks of ", spelling->blockBytes, " bytes");
  GGMLAffineParts parts;
  parts.codes.resize(tensor.elementCount);
  parts.scales.resize(blocks);
  if (tensor.type == GGMLType::Q4_1)
    parts.zeros.resize(blocks);
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint8_t *p = tensor.data + b * spelling->blockBytes;
    int32_t *codes = parts.codes.data() + b * kBlock;
    parts.scales[b] = fp16ToFp32(readU16(p));
    switch (tensor.type) {
    case GGMLType::Q4_0:
      for (int j = 0; j < 16; ++j) {
        codes[j] = (p[2 + j] & 0x0F) - 8;
        codes[j + 16] = (p[2 + j] >> 4) - 8;
      }
      break;
    case GGMLType::Q4_1:
      parts.zeros[b] = fp16ToFp32(readU16(p + 2));
      for (int j = 0; j < 16; ++j) {
        codes[j] = p[4 + j] & 0x0F;
        codes[j + 16] = p[4 + j] >> 4;
      }
      break;
    default: // Q8_0
      for (int j = 0; j < 32; ++j)
        codes[j] = static_cast<int8_t>(p[2 + j]);
      break;
    }
  }
  return parts;
}
