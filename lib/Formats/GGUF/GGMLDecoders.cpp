//===- GGMLDecoders.cpp - Plain types, 32-element blocks, dispatch -------===//
//
// Each decoder mirrors ggml's dequantize_row_* (ggml-quants.c) operation for
// operation: integer codes convert to float exactly, and every product or sum
// is rounded on its own (this file is compiled with -ffp-contract=off).
//
//===----------------------------------------------------------------------===//

#include "GGMLDecoders.h"

#include "qtensor/Support/CheckedMath.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace qtensor;
using namespace qtensor::ggml_detail;

float qtensor::fp16ToFp32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    // Infinity, or NaN with its payload and the quiet bit set.
    bits = sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x00400000u : 0);
  } else if (exponent != 0) {
    bits = sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign; // signed zero
  } else {
    // Subnormal: value = mantissa * 2^-24; normalize into binary32.
    uint32_t e = 127 - 15 + 1;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float qtensor::bf16ToFp32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void ggml_detail::decodeF32(const uint8_t *src, uint64_t n, float *dst) {
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t bits = readU32(src + 4 * i);
    std::memcpy(dst + i, &bits, sizeof(float));
  }
}

namespace {
/// All 65536 conversions, computed once by fp16ToFp32: whole F16 tensors
/// decode by lookup (exact by construction) instead of the branchy
/// conversion, which mispredicts on real weight distributions.
const float *fp16Table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h)
      t[h] = fp16ToFp32(static_cast<uint16_t>(h));
    return t;
  }();
  return table.data();
}
} // namespace

void ggml_detail::decodeF16(const uint8_t *src, uint64_t n, float *dst) {
  const float *table = fp16Table();
  for (uint64_t i = 0; i < n; ++i)
    dst[i] = table[readU16(src + 2 * i)];
}

void ggml_detail::decodeBF16(const uint8_t *src, uint64_t n, float *dst) {
  for (uint64_t i = 0; i < n; ++i)
    dst[i] = bf16ToFp32(readU16(src + 2 * i));
}

// block_q4_0 {half d; u8 qs[16]}: y[j] = ((qs[j] & 15) - 8) * d,
// y[j+16] = ((qs[j] >> 4) - 8) * d.
void ggml_detail::decodeQ4_0(const uint8_t *src, uint64_t blocks, float *dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += 18, dst += 32) {
    const float d = readF16(src);
    const uint8_t *qs = src + 2;
    for (int j = 0; j < 16; ++j) {
      const int x0 = (qs[j] & 0x0F) - 8;
      const int x1 = (qs[j] >> 4) - 8;
      dst[j] = static_cast<float>(x0) * d;
      dst[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

// block_q4_1 {half d; half m; u8 qs[16]}: y = u * d + m.
void ggml_detail::decodeQ4_1(const uint8_t *src, uint64_t blocks, float *dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += 20, dst += 32) {
    const float d = readF16(src);
    const float m = readF16(src + 2);
    const uint8_t *qs = src + 4;
    for (int j = 0; j < 16; ++j) {
      const int x0 = qs[j] & 0x0F;
      const int x1 = qs[j] >> 4;
      const float p0 = static_cast<float>(x0) * d;
      const float p1 = static_cast<float>(x1) * d;
      dst[j] = p0 + m;
      dst[j + 16] = p1 + m;
    }
  }
}

// block_q5_0 {half d; u8 qh[4]; u8 qs[16]}: bit 4 of element j is bit j of qh.
void ggml_detail::decodeQ5_0(const uint8_t *src, uint64_t blocks, float *dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += 22, dst += 32) {
    const float d = readF16(src);
    const uint32_t qh = readU32(src + 2);
    const uint8_t *qs = src + 6;
    for (int j = 0; j < 16; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      const int x0 = ((qs[j] & 0x0F) | h0) - 16;
      const int x1 = ((qs[j] >> 4) | h1) - 16;
      dst[j] = static_cast<float>(x0) * d;
      dst[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

// block_q5_1 {half d; half m; u8 qh[4]; u8 qs[16]}: y = u * d + m.
void ggml_detail::decodeQ5_1(const uint8_t *src, uint64_t blocks, float *dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += 24, dst += 32) {
    const float d = readF16(src);
    const float m = readF16(src + 2);
    const uint32_t qh = readU32(src + 4);
    const uint8_t *qs = src + 8;
    for (int j = 0; j < 16; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      const int x0 = (qs[j] & 0x0F) | h0;
      const int x1 = (qs[j] >> 4) | h1;
      const float p0 = static_cast<float>(x0) * d;
      const float p1 = static_cast<float>(x1) * d;
      dst[j] = p0 + m;
      dst[j + 16] = p1 + m;
    }
  }
}

// block_q8_0 {half d; int8 qs[32]}: y = q * d.
void ggml_detail::decodeQ8_0(const uint8_t *src, uint64_t blocks, float *dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += 34, dst += 32) {
    const float d = readF16(src);
    for (int j = 0; j < 32; ++j) {
      const int8_t q = static_cast<int8_t>(src[2 + j]);
      dst[j] = static_cast<float>(q) * d;
    }
  }
}

// block_iq4_nl {half d; u8 qs[16]}: y = d * kvalues_iq4nl[nibble].
void ggml_detail::decodeIQ4_NL(const uint8_t *src, uint64_t blocks,
                               float *dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += 18, dst += 32) {
    decodeIQ4Nibbles(src + 2, readF16(src), dst);
  }
}

// ggml's GGML_E8M0_TO_FP32_HALF: 2^(e-128), subnormal below e = 2; like
// ggml, no NaN (the descriptor's reader refuses e = 255 separately).
static float e8m0Half(uint8_t e) {
  const uint32_t bits =
      e < 2 ? uint32_t(0x00200000) << e : uint32_t(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// gguf-py's NVFP4.ue4m3_to_fp32: bits 3-6 the exponent (bit 7 ignored),
// 0 and 0x7f read as 0, and the half that the doubled table needs.
static float ue4m3Half(uint8_t x) {
  if (x == 0 || x == 0x7F)
    return 0.0f;
  const int exp = (x >> 3) & 0xF, man = x & 7;
  const float raw = exp == 0 ? std::ldexp(float(man), -9)
                             : std::ldexp(float(8 + man), exp - 10);
  return raw * 0.5f;
}

// block_mxfp4 {u8 e; u8 qs[16]}: y = kvalues_mxfp4[nibble] * 2^(e-128).
void ggml_detail::decodeMXFP4(const uint8_t *src, uint64_t blocks, float *dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += 17, dst += 32) {
    const float d = e8m0Half(src[0]);
    for (int j = 0; j < 16; ++j) {
      dst[j] = float(kMXFP4Codebook[src[1 + j] & 0x0F]) * d;
      dst[j + 16] = float(kMXFP4Codebook[src[1 + j] >> 4]) * d;
    }
  }
}

// block_nvfp4 {u8 d[4]; u8 qs[32]}: sub-block j holds qs[8j, 8j + 8),
// elements 0-7 in the low nibbles and 8-15 in the high ones.
void ggml_detail::decodeNVFP4(const uint8_t *src, uint64_t blocks, float *dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += 36, dst += 64)
    for (int j = 0; j < 4; ++j) {
      const float d = ue4m3Half(src[j]);
      const uint8_t *qs = src + 4 + 8 * j;
      for (int l = 0; l < 8; ++l) {
        dst[16 * j + l] = d * float(kMXFP4Codebook[qs[l] & 0x0F]);
        dst[16 * j + 8 + l] = d * float(kMXFP4Codebook[qs[l] >> 4]);
      }
    }
}

Status qtensor::decodeRow(GGMLType type, const uint8_t *src, size_t srcBytes,
                          int64_t n, float *dst) {
  const GGMLTypeTraits *traits = lookupGGMLType(static_cast<uint32_t>(type));
  if (!traits)
    return makeError("unknown ggml type ", static_cast<uint32_t>(type));
  if (!isDecodable(type))
    return makeError("unsupported type ", traits->name);
  if (n < 0)
    return makeError("cannot decode a negative element count ", n, " of ",
                     traits->name);
  const uint64_t count = static_cast<uint64_t>(n);
  auto needed = ggmlByteSize(type, count);
  if (!needed)
    return needed.error();
  if (*needed > srcBytes)
    return makeError(traits->name, ": ", count, " elements need ", *needed,
                     " bytes but only ", static_cast<uint64_t>(srcBytes),
                     " are available");
  if (count == 0)
    return Status::ok();
  if (!src || !dst)
    return makeError(traits->name, ": null source or destination buffer");

  const uint64_t blocks = count / traits->blockSize;
  switch (type) {
  case GGMLType::F32:
    decodeF32(src, count, dst);
    break;
  case GGMLType::F16:
    decodeF16(src, count, dst);
    break;
  case GGMLType::BF16:
    decodeBF16(src, count, dst);
    break;
  case GGMLType::Q4_0:
    decodeQ4_0(src, blocks, dst);
    break;
  case GGMLType::Q4_1:
    decodeQ4_1(src, blocks, dst);
    break;
  case GGMLType::Q5_0:
    decodeQ5_0(src, blocks, dst);
    break;
  case GGMLType::Q5_1:
    decodeQ5_1(src, blocks, dst);
    break;
  case GGMLType::Q8_0:
    decodeQ8_0(src, blocks, dst);
    break;
  case GGMLType::IQ4_NL:
    decodeIQ4_NL(src, blocks, dst);
    break;
  case GGMLType::MXFP4:
    decodeMXFP4(src, blocks, dst);
    break;
  case GGMLType::NVFP4:
    decodeNVFP4(src, blocks, dst);
    break;
  case GGMLType::Q2_K:
    decodeQ2_K(src, blocks, dst);
    break;
  case GGMLType::Q3_K:
    decodeQ3_K(src, blocks, dst);
    break;
  case GGMLType::Q4_K:
    decodeQ4_K(src, blocks, dst);
    break;
  case GGMLType::Q5_K:
    decodeQ5_K(src, blocks, dst);
    break;
  case GGMLType::Q6_K:
    decodeQ6_K(src, blocks, dst);
    break;
  case GGMLType::TQ1_0:
    decodeTQ1_0(src, blocks, dst);
    break;
  case GGMLType::TQ2_0:
    decodeTQ2_0(src, blocks, dst);
    break;
  case GGMLType::IQ2_XXS:
    decodeIQ2_XXS(src, blocks, dst);
    break;
  case GGMLType::IQ2_XS:
    decodeIQ2_XS(src, blocks, dst);
    break;
  case GGMLType::IQ2_S:
    decodeIQ2_S(src, blocks, dst);
    break;
  case GGMLType::IQ3_XXS:
    decodeIQ3_XXS(src, blocks, dst);
    break;
  case GGMLType::IQ3_S:
    decodeIQ3_S(src, blocks, dst);
    break;
  case GGMLType::IQ1_S:
    decodeIQ1_S(src, blocks, dst);
    break;
  case GGMLType::IQ1_M:
    decodeIQ1_M(src, blocks, dst);
    break;
  case GGMLType::IQ4_XS:
    decodeIQ4_XS(src, blocks, dst);
    break;
  default:
    return makeError("unsupported type ", traits->name);
  }
  return Status::ok();
}

Expected<std::vector<float>>
qtensor::decodeTensor(GGMLType type, const uint8_t *src, size_t srcBytes,
                      const std::vector<int64_t> &ne) {
  const GGMLTypeTraits *traits = lookupGGMLType(static_cast<uint32_t>(type));
  if (!traits)
    return makeError("unknown ggml type ", static_cast<uint32_t>(type));
  if (!isDecodable(type))
    return makeError("unsupported type ", traits->name);
  uint64_t count = 1;
  for (size_t i = 0; i < ne.size(); ++i) {
    if (ne[i] < 0)
      return makeError(traits->name, " tensor: ne[", i, "] = ", ne[i],
                       " is negative");
    auto next = checkedMul(count, static_cast<uint64_t>(ne[i]));
    if (!next || *next > static_cast<uint64_t>(INT64_MAX))
      return makeError(traits->name,
                       " tensor: element count overflows int64 at ne[", i, "]");
    count = *next;
  }
  const uint64_t rowLength = ne.empty() ? 1 : static_cast<uint64_t>(ne[0]);
  if (rowLength % traits->blockSize != 0)
    return makeError(traits->name, " tensor: ne[0] = ", rowLength,
                     " is not a multiple of the block size ",
                     traits->blockSize);
  auto needed = ggmlByteSize(type, count);
  if (!needed)
    return needed.error();
  if (*needed > srcBytes)
    return makeError(traits->name, " tensor of ", count, " elements needs ",
                     *needed, " bytes but only ",
                     static_cast<uint64_t>(srcBytes), " are available");
  // count is now bounded by the readable source bytes, so this allocation is
  // proportional to data that exists.
  if (count > std::numeric_limits<size_t>::max() / sizeof(float))
    return makeError(traits->name, " tensor of ", count,
                     " elements is too large to decode in memory");
  std::vector<float> out(static_cast<size_t>(count));
  Status st =
      decodeRow(type, src, srcBytes, static_cast<int64_t>(count), out.data());
  if (!st)
    return st.error();
  return out;
}
