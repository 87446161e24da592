//===- GGMLDecoders.h - Per-block decoders (library-internal) ---*- C++ -*-===//
//
// One function per decodable type: decodes `blocks` whole blocks from `src`
// into `dst`. Callers (decodeRow) have checked the sizes. Multi-byte fields
// are read little-endian byte by byte, independent of the host.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_FORMATS_GGUF_GGMLDECODERS_H
#define QTENSOR_LIB_FORMATS_GGUF_GGMLDECODERS_H

#include "qtensor/Formats/GGMLTypes.h"

#include <cstdint>

namespace qtensor::ggml_detail {

inline uint16_t readU16(const uint8_t *p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t readU32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}
inline float readF16(const uint8_t *p) { return fp16ToFp32(readU16(p)); }

/// 32 values of IQ4_NL's codebook from 16 bytes of nibbles (low nibbles
/// first): y = scale * kvalues_iq4nl[u] (IQ4_NL, and IQ4_XS per 32).
inline void decodeIQ4Nibbles(const uint8_t *qs, float scale, float *y) {
  for (int j = 0; j < 16; ++j) {
    y[j] = scale * static_cast<float>(kIQ4NLCodebook[qs[j] & 0x0F]);
    y[j + 16] = scale * static_cast<float>(kIQ4NLCodebook[qs[j] >> 4]);
  }
}

using BlockDecoder = void (*)(const uint8_t *src, uint64_t blocks, float *dst);

// Simple 32-element blocks and plain types (GGMLDecoders.cpp).
void decodeF32(const uint8_t *src, uint64_t n, float *dst);
void decodeF16(const uint8_t *src, uint64_t n, float *dst);
void decodeBF16(const uint8_t *src, uint64_t n, float *dst);
void decodeQ4_0(const uint8_t *src, uint64_t blocks, float *dst);
void decodeQ4_1(const uint8_t *src, uint64_t blocks, float *dst);
void decodeQ5_0(const uint8_t *src, uint64_t blocks, float *dst);
void decodeQ5_1(const uint8_t *src, uint64_t blocks, float *dst);
void decodeQ8_0(const uint8_t *src, uint64_t blocks, float *dst);
void decodeIQ4_NL(const uint8_t *src, uint64_t blocks, float *dst);

// 256-element super-blocks (GGMLKQuantDecoders.cpp).
void decodeQ2_K(const uint8_t *src, uint64_t blocks, float *dst);
void decodeQ3_K(const uint8_t *src, uint64_t blocks, float *dst);
void decodeQ4_K(const uint8_t *src, uint64_t blocks, float *dst);
void decodeQ5_K(const uint8_t *src, uint64_t blocks, float *dst);
void decodeQ6_K(const uint8_t *src, uint64_t blocks, float *dst);
void decodeTQ1_0(const uint8_t *src, uint64_t blocks, float *dst);
void decodeTQ2_0(const uint8_t *src, uint64_t blocks, float *dst);

// Lattice and codebook super-blocks (GGMLLatticeDecoders.cpp).
void decodeIQ2_XXS(const uint8_t *src, uint64_t blocks, float *dst);
void decodeIQ2_XS(const uint8_t *src, uint64_t blocks, float *dst);
void decodeIQ2_S(const uint8_t *src, uint64_t blocks, float *dst);
void decodeIQ3_XXS(const uint8_t *src, uint64_t blocks, float *dst);
void decodeIQ3_S(const uint8_t *src, uint64_t blocks, float *dst);
void decodeIQ1_S(const uint8_t *src, uint64_t blocks, float *dst);
void decodeIQ1_M(const uint8_t *src, uint64_t blocks, float *dst);
void decodeIQ4_XS(const uint8_t *src, uint64_t blocks, float *dst);

} // namespace qtensor::ggml_detail

#endif // QTENSOR_LIB_FORMATS_GGUF_GGMLDECODERS_H
