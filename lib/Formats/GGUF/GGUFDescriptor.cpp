//===- GGUFDescriptor.cpp - GGUF tensors as qtensor descriptors -----------===//
//
// Built with -ffp-contract=off (CMakeLists.txt): the reconstruction check
// below must round each product and sum as ggml's reference C does.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/GGUFDescriptor.h"

#include "qtensor/Descriptor/GGMLSpellings.h"
#include "qtensor/Descriptor/ScaleFormat.h"

#include "GGMLDecoders.h"

#include "qtensor/Support/ThreadPool.h"

#include <cctype>
#include <cstring>
#include <mutex>
#include <string>

using namespace qtensor;
using namespace qtensor::ggml_detail;

namespace {

/// A K-quant block's stored second level: scale (and min) codes per group,
/// d (and dmin) per block. Null pointers for the other types.
struct NestedOut {
  int32_t *scaleCodes = nullptr, *minCodes = nullptr;
  double *superScale = nullptr, *superMin = nullptr;
};

/// One block's codes (C order), scales and mins (one per group).
void disassembleBlock(GGMLType type, const uint8_t *p, int32_t *codes,
                      double *scales, double *mins, const NestedOut &nested) {
  switch (type) {
  case GGMLType::Q4_0:
    scales[0] = readF16(p);
    for (int j = 0; j < 16; ++j) {
      codes[j] = (p[2 + j] & 0x0F) - 8;
      codes[j + 16] = (p[2 + j] >> 4) - 8;
    }
    return;
  case GGMLType::Q4_1:
    scales[0] = readF16(p);
    mins[0] = readF16(p + 2);
    for (int j = 0; j < 16; ++j) {
      codes[j] = p[4 + j] & 0x0F;
      codes[j + 16] = p[4 + j] >> 4;
    }
    return;
  case GGMLType::Q5_0:
  case GGMLType::Q5_1: {
    const bool hasMin = type == GGMLType::Q5_1;
    scales[0] = readF16(p);
    if (hasMin)
      mins[0] = readF16(p + 2);
    const uint8_t *rest = p + (hasMin ? 4 : 2);
    const uint32_t qh = readU32(rest);
    const uint8_t *qs = rest + 4;
    const int offset = hasMin ? 0 : 16;
    for (int j = 0; j < 16; ++j) {
      codes[j] = ((qs[j] & 0x0F) | int((qh >> j) & 1u) << 4) - offset;
      codes[j + 16] = ((qs[j] >> 4) | int((qh >> (j + 16)) & 1u) << 4) - offset;
    }
    return;
  }
  case GGMLType::Q8_0:
    scales[0] = readF16(p);
    for (int j = 0; j < 32; ++j)
      codes[j] = static_cast<int8_t>(p[2 + j]);
    return;
  case GGMLType::IQ4_NL: // indices into kvalues_iq4nl, low nibbles first
    scales[0] = readF16(p);
    for (int j = 0; j < 16; ++j) {
      codes[j] = p[2 + j] & 0x0F;
      codes[j + 16] = p[2 + j] >> 4;
    }
    return;
  // MXFP4 and NVFP4: their leading scale bytes are decoded (and checked)
  // by the caller; here only the codes.
  case GGMLType::MXFP4: // e8m0 e, then nibbles as Q4_0 indexing E2M1
    for (int j = 0; j < 16; ++j) {
      codes[j] = p[1 + j] & 0x0F;
      codes[j + 16] = p[1 + j] >> 4;
    }
    return;
  case GGMLType::NVFP4: // four ue4m3 d, then 8 bytes of nibbles per 16
    for (int g = 0; g < 4; ++g) {
      for (int l = 0; l < 8; ++l) {
        codes[16 * g + l] = p[4 + 8 * g + l] & 0x0F;
        codes[16 * g + 8 + l] = p[4 + 8 * g + l] >> 4;
      }
    }
    return;
  case GGMLType::IQ4_XS: {
    // d, scales_h (2 high bits per sub-block), scales_l (4 low bits per
    // sub-block), then IQ4_NL's nibbles per 32; s_j = d * (ls_j - 32).
    const float d = readF16(p);
    const uint32_t high = uint32_t(p[2]) | uint32_t(p[3]) << 8;
    const uint8_t *low = p + 4, *qs = p + 8;
    *nested.superScale = d;
    for (int g = 0; g < 8; ++g, qs += 16) {
      const int ls = ((low[g / 2] >> (4 * (g % 2))) & 0xF) |
                     int((high >> (2 * g)) & 3u) << 4;
      nested.scaleCodes[g] = ls - 32;
      scales[g] = d * static_cast<float>(ls - 32);
      for (int j = 0; j < 16; ++j) {
        codes[32 * g + j] = qs[j] & 0x0F;
        codes[32 * g + j + 16] = qs[j] >> 4;
      }
    }
    return;
  }
  case GGMLType::Q4_K:
  case GGMLType::Q5_K: {
    // The second level first: d * sc_j and dmin * m_j, each an exact f32
    // product of an f16 and a 6-bit integer; the min enters negated.
    const bool five = type == GGMLType::Q5_K;
    const float d = readF16(p), dmin = readF16(p + 2);
    *nested.superScale = d;
    *nested.superMin = dmin;
    const uint8_t *packed = p + 4;
    const uint8_t *qh = p + 16;
    const uint8_t *ql = p + (five ? 48 : 16);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      scaleMinK4(j, packed, sc, m);
      nested.scaleCodes[j] = sc;
      nested.minCodes[j] = m;
      scales[j] = d * static_cast<float>(sc);
      mins[j] = -(dmin * static_cast<float>(m));
      const uint8_t *bytes = ql + 32 * (j / 2);
      const int shift = 4 * (j % 2);
      for (int l = 0; l < 32; ++l) {
        int q = (bytes[l] >> shift) & 0xF;
        if (five && (qh[l] >> j) & 1)
          q += 16;
        codes[32 * j + l] = q;
      }
    }
    return;
  }
  case GGMLType::Q2_K: {
    // Sixteen groups of 16: a byte per group holds the 4-bit scale code
    // (low) and min code (high) under f16 d and dmin; codes are 2-bit
    // fields of 32-byte rows, four shifts per 128 elements.
    const float d = readF16(p + 80), dmin = readF16(p + 82);
    *nested.superScale = d;
    *nested.superMin = dmin;
    for (int j = 0; j < 16; ++j) {
      nested.scaleCodes[j] = p[j] & 0xF;
      nested.minCodes[j] = p[j] >> 4;
      scales[j] = d * static_cast<float>(p[j] & 0xF);
      mins[j] = -(dmin * static_cast<float>(p[j] >> 4));
    }
    const uint8_t *q = p + 16;
    for (int n = 0; n < 256; n += 128, q += 32)
      for (int shift = 0; shift < 8; shift += 2)
        for (int half = 0; half < 2; ++half)
          for (int l = 0; l < 16; ++l)
            *codes++ = (q[l + 16 * half] >> shift) & 3;
    return;
  }
  case GGMLType::Q3_K: {
    // Sixteen groups of 16 with signed 6-bit scale codes (stored + 32)
    // under an f16 d; a code is 2 low bits minus 4 where its hmask bit is
    // clear: si3, [-4, 3].
    const uint8_t *hm = p, *q = p + 32, *packed = p + 96;
    const float d = readF16(p + 108);
    *nested.superScale = d;
    for (int j = 0; j < 16; ++j) {
      nested.scaleCodes[j] = scaleQ3K(j, packed) - 32;
      scales[j] = d * static_cast<float>(nested.scaleCodes[j]);
    }
    uint8_t mask = 1;
    for (int n = 0; n < 256; n += 128, q += 32)
      for (int shift = 0; shift < 8; shift += 2, mask = uint8_t(mask << 1))
        for (int half = 0; half < 2; ++half)
          for (int l = 0; l < 16; ++l) {
            const int i = l + 16 * half;
            *codes++ = ((q[i] >> shift) & 3) - ((hm[i] & mask) ? 0 : 4);
          }
    return;
  }
  case GGMLType::Q6_K: {
    const uint8_t *ql = p, *qh = p + 128;
    const int8_t *sc = reinterpret_cast<const int8_t *>(p + 192);
    const float d = readF16(p + 208);
    *nested.superScale = d;
    for (int g = 0; g < 16; ++g) {
      nested.scaleCodes[g] = sc[g];
      scales[g] = d * static_cast<float>(sc[g]);
    }
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, codes += 128)
      for (int l = 0; l < 32; ++l) {
        codes[l] = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) - 32;
        codes[l + 32] = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        codes[l + 64] = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        codes[l + 96] = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      }
    return;
  }
  default:
    return;
  }
}

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
  auto spelling = ggmlAffineSpellingOf(tensor.type);
  if (!spelling || result.shape.empty())
    return result;

  QuantizedTensorDescriptor t;
  t.shape = result.shape;
  t.elementType = FloatType::F32; // ggml dequantizes to f32
  t.descriptor =
      spelledDescriptor(*spelling, static_cast<int64_t>(t.shape.size()) - 1);
  t.layout.family = "ggml_block";
  t.layout.version = 1;
  t.layout.encoding = spelling->encoding;
  t.layout.tile.assign(t.shape.size(), 1);
  t.layout.tile.back() = spelling->blockElements;
  t.layout.padding.assign(t.shape.size(), 0);
  if (Status s = verifyTensorDescriptor(t); !s)
    return makeError("tensor '", std::string(tensor.name), "': ", s.message());
  result.affine = std::move(t);
  return result;
}

const GGMLAffineSpelling *qtensor::ggmlAffineSpellingOf(GGMLType type) {
  std::string encoding(ggmlTypeName(type)); // the table's: lower case
  for (char &c : encoding)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return findGGMLAffineSpelling(encoding);
}

bool qtensor::hasAffineSpelling(GGMLType type) {
  return ggmlAffineSpellingOf(type) != nullptr;
}

Expected<GGMLAffineParts>
qtensor::disassembleGGMLAffine(const GGUFTensorInfo &tensor) {
  auto spelling = ggmlAffineSpellingOf(tensor.type);
  if (!spelling)
    return makeError("tensor '", std::string(tensor.name), "': type ",
                     std::string(ggmlTypeName(tensor.type)),
                     " has no affine spelling");
  const int64_t perBlock = spelling->blockElements;
  const int64_t groups = perBlock / spelling->group;
  uint64_t blocks = tensor.elementCount / uint64_t(perBlock);
  if (tensor.elementCount % uint64_t(perBlock) != 0 ||
      tensor.byteSize != blocks * spelling->blockBytes)
    return makeError("tensor '", std::string(tensor.name),
                     "': ", tensor.byteSize, " bytes do not hold ", blocks,
                     " blocks of ", spelling->blockBytes, " bytes");
  const bool hasMin = spelling->zeroPoint == ZeroPointKind::Min;
  const std::vector<float> &table = codebookValues(spelling->codebook);
  GGMLAffineParts parts;
  parts.codes.resize(tensor.elementCount);
  parts.scales.resize(blocks * uint64_t(groups));
  if (hasMin)
    parts.zeros.resize(parts.scales.size());
  const bool nested = spelling->nested.has_value();
  if (nested) {
    parts.scaleCodes.resize(parts.scales.size());
    parts.superScales.resize(blocks);
    if (hasMin) {
      parts.minCodes.resize(parts.scales.size());
      parts.superMins.resize(blocks);
    }
  }
  // The proof that nothing was re-quantized: every element, reconstructed
  // from these parts as s * q (+ m) or s * table[q] in f32, equals ggml's own decoding of
  // the block bit for bit. Blocks are independent: ranges of them run on
  // the thread pool, and the first failing block (lowest index) is named,
  // as one pass would.
  std::mutex failureMutex;
  uint64_t failedBlock = blocks;
  std::string failure;
  auto fail = [&](uint64_t b, const std::string &why) {
    std::lock_guard<std::mutex> lock(failureMutex);
    if (b < failedBlock) {
      failedBlock = b;
      failure = why;
    }
  };
  defaultThreadPool().parallelRanges(
      int64_t(blocks), int64_t(tensor.elementCount), int64_t(1) << 18,
      [&](int64_t b0, int64_t b1) {
        std::vector<float> decoded(size_t(perBlock), 0.0f);
        for (uint64_t b = uint64_t(b0); b < uint64_t(b1); ++b) {
          const uint8_t *p = tensor.data + b * spelling->blockBytes;
          int32_t *codes = parts.codes.data() + b * uint64_t(perBlock);
          double *scales = parts.scales.data() + b * uint64_t(groups);
          double *mins =
              hasMin ? parts.zeros.data() + b * uint64_t(groups) : nullptr;
          NestedOut second;
          if (nested) {
            second.scaleCodes = parts.scaleCodes.data() + b * uint64_t(groups);
            second.superScale = parts.superScales.data() + b;
            if (hasMin) {
              second.minCodes = parts.minCodes.data() + b * uint64_t(groups);
              second.superMin = parts.superMins.data() + b;
            }
          }
          std::string why;
          // A float-coded scale leads the block, one byte per group,
          // decoded here: one that names no scale (NaN, a sign) is refused.
          for (int64_t g = 0; spelling->scaleFormat != ScaleFormat::Plain &&
                              why.empty() && g < groups;
               ++g) {
            Expected<float> s = decodeScaleCode(spelling->scaleFormat, p[g]);
            if (s)
              scales[g] = *s;
            else
              why = "tensor '" + std::string(tensor.name) + "': block " +
                    std::to_string(b) + " (byte offset " +
                    std::to_string(b * spelling->blockBytes + uint64_t(g)) +
                    " of its data): " + s.message();
          }
          if (!why.empty())
            return fail(b, why);
          disassembleBlock(tensor.type, p, codes, scales, mins, second);
          if (Status s = decodeRow(tensor.type, p, spelling->blockBytes,
                                   perBlock, decoded.data());
              !s)
            why = s.message();
          for (int64_t i = 0; why.empty() && i < perBlock; ++i) {
            const int64_t g = i / spelling->group;
            const float value1 = table.empty()
                                     ? static_cast<float>(codes[i])
                                     : table[size_t(codes[i])]; // codes[i] < 16
            const float product = static_cast<float>(scales[g]) * value1;
            const float value =
                hasMin ? product + static_cast<float>(mins[g]) : product;
            if (std::memcmp(&value, &decoded[size_t(i)], sizeof(float)) != 0)
              why = "tensor '" + std::string(tensor.name) + "': block " +
                    std::to_string(b) + " element " + std::to_string(i) +
                    ": codes and qparams give " + std::to_string(value) +
                    ", ggml decodes " + std::to_string(decoded[size_t(i)]) +
                    " (the affine spelling of " +
                    std::string(ggmlTypeName(tensor.type)) +
                    " would not preserve it)";
          }
          if (!why.empty())
            return fail(b, why);
        }
      });
  if (failedBlock < blocks)
    return makeError(failure);
  return parts;
}
