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

/// ggml's get_scale_min_k4: 6-bit scale and min of sub-block j (0..7) from
/// the 12 packed bytes of Q4_K/Q5_K.
inline void scaleMinK4(int j, const uint8_t *q, uint8_t &sc, uint8_t &m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

/// Q3_K's 16 6-bit scales (before the -32): low nibbles in bytes 0..7 (j < 8
/// low nibble of byte j, j >= 8 high nibble of byte j-8), high 2 bits in
/// bytes 8..11 (byte 8 + j%4, bit pair j/4).
inline int scaleQ3K(int j, const uint8_t *s) {
  const int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return low | (high << 4);
}

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
void decodeMXFP4(const uint8_t *src, uint64_t blocks, float *dst);
void decodeNVFP4(const uint8_t *src, uint64_t blocks, float *dst);

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
