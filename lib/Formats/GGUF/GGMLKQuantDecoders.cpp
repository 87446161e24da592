//===- GGMLKQuantDecoders.cpp - 256-element super-block decoders ----------===//
//
// K-quants (Q2_K..Q6_K) and ternary (TQ1_0, TQ2_0), mirroring ggml's
// dequantize_row_* for each. Evaluation order matters for bit-exactness:
// sub-block scale products are formed first (d * s_j, dmin * m_j), then
// multiplied by the code, then the min is subtracted, each step rounded to
// float32 (compiled with -ffp-contract=off).
//
//===----------------------------------------------------------------------===//

#include "GGMLDecoders.h"

using namespace qtensor;
using namespace qtensor::ggml_detail;

namespace {

/// The effective scale d * s_j and min dmin * m_j of Q4_K/Q5_K sub-block j,
/// each one float product as in ggml.
inline void subBlockScaleMin(int j, const uint8_t *scales, float d, float dmin,
                             float &scale, float &min) {
  uint8_t sc, m;
  scaleMinK4(j, scales, sc, m);
  scale = d * static_cast<float>(sc);
  min = dmin * static_cast<float>(m);
}

} // namespace

// block_q2_K {u8 scales[16]; u8 qs[64]; half d; half dmin}.
void ggml_detail::decodeQ2_K(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t b = 0; b < blocks; ++b, src += 84) {
    const uint8_t *scales = src;
    const uint8_t *q = src + 16;
    const float d = readF16(src + 80);
    const float dmin = readF16(src + 82);
    int is = 0;
    for (int n = 0; n < 256; n += 128) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int half = 0; half < 2; ++half) {
          const uint8_t sc = scales[is++];
          const float dl = d * static_cast<float>(sc & 0xF);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 0; l < 16; ++l) {
            const int code = (q[l + 16 * half] >> shift) & 3;
            const float p = dl * static_cast<float>(code);
            *y++ = p - ml;
          }
        }
      }
      q += 32;
    }
  }
}

// block_q3_K {u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d}.
void ggml_detail::decodeQ3_K(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t b = 0; b < blocks; ++b, src += 110) {
    const uint8_t *hm = src;
    const uint8_t *q = src + 32;
    const uint8_t *packed = src + 96;
    const float dAll = readF16(src + 108);
    int is = 0;
    uint8_t mask = 1;
    for (int n = 0; n < 256; n += 128) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int half = 0; half < 2; ++half) {
          const float dl =
              dAll * static_cast<float>(scaleQ3K(is++, packed) - 32);
          for (int l = 0; l < 16; ++l) {
            const int idx = l + 16 * half;
            const int code =
                ((q[idx] >> shift) & 3) - ((hm[idx] & mask) ? 0 : 4);
            *y++ = dl * static_cast<float>(code);
          }
        }
        mask = static_cast<uint8_t>(mask << 1);
      }
      q += 32;
    }
  }
}

// block_q4_K {half d; half dmin; u8 scales[12]; u8 qs[128]}.
void ggml_detail::decodeQ4_K(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t b = 0; b < blocks; ++b, src += 144) {
    const float d = readF16(src);
    const float dmin = readF16(src + 2);
    const uint8_t *scales = src + 4;
    const uint8_t *q = src + 16;
    for (int j = 0; j < 4; ++j, q += 32) {
      float d1, m1, d2, m2;
      subBlockScaleMin(2 * j, scales, d, dmin, d1, m1);
      subBlockScaleMin(2 * j + 1, scales, d, dmin, d2, m2);
      for (int l = 0; l < 32; ++l) {
        const float p = d1 * static_cast<float>(q[l] & 0xF);
        *y++ = p - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const float p = d2 * static_cast<float>(q[l] >> 4);
        *y++ = p - m2;
      }
    }
  }
}

// block_q5_K {half d; half dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}.
void ggml_detail::decodeQ5_K(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t b = 0; b < blocks; ++b, src += 176) {
    const float d = readF16(src);
    const float dmin = readF16(src + 2);
    const uint8_t *scales = src + 4;
    const uint8_t *qh = src + 16;
    const uint8_t *ql = src + 48;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < 4; ++j, ql += 32) {
      float d1, m1, d2, m2;
      subBlockScaleMin(2 * j, scales, d, dmin, d1, m1);
      subBlockScaleMin(2 * j + 1, scales, d, dmin, d2, m2);
      for (int l = 0; l < 32; ++l) {
        const int code = (ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0);
        const float p = d1 * static_cast<float>(code);
        *y++ = p - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int code = (ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0);
        const float p = d2 * static_cast<float>(code);
        *y++ = p - m2;
      }
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

// block_q6_K {u8 ql[128]; u8 qh[64]; int8 scales[16]; half d}:
// y = (d * scale) * q, in that order.
void ggml_detail::decodeQ6_K(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t b = 0; b < blocks; ++b, src += 210) {
    const uint8_t *ql = src;
    const uint8_t *qh = src + 128;
    const int8_t *sc = reinterpret_cast<const int8_t *>(src + 192);
    const float d = readF16(src + 208);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        const float s1 = d * static_cast<float>(sc[is + 0]);
        const float s2 = d * static_cast<float>(sc[is + 2]);
        const float s3 = d * static_cast<float>(sc[is + 4]);
        const float s4 = d * static_cast<float>(sc[is + 6]);
        y[l + 0] = s1 * static_cast<float>(q1);
        y[l + 32] = s2 * static_cast<float>(q2);
        y[l + 64] = s3 * static_cast<float>(q3);
        y[l + 96] = s4 * static_cast<float>(q4);
      }
    }
  }
}

namespace {
/// Trit n of a TQ1_0 byte: the byte is a base-3 fixed-point fraction, so
/// multiplying by 3^n (mod 256) shifts trit n to the top and *3 >> 8 reads it.
inline int tq1Trit(uint8_t byte, int pow3) {
  const uint8_t q = static_cast<uint8_t>(byte * pow3);
  return static_cast<int>((static_cast<uint16_t>(q) * 3) >> 8);
}
} // namespace

// block_tq1_0 {u8 qs[48]; u8 qh[4]; half d}: 32 bytes x 5 trits, then
// 16 bytes x 5 trits, then 4 bytes x 4 trits; y = (t - 1) * d.
void ggml_detail::decodeTQ1_0(const uint8_t *src, uint64_t blocks, float *y) {
  static const int pow3[6] = {1, 3, 9, 27, 81, 243};
  for (uint64_t b = 0; b < blocks; ++b, src += 54) {
    const uint8_t *qs = src;
    const uint8_t *qh = src + 48;
    const float d = readF16(src + 52);
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 32; ++m)
        *y++ = static_cast<float>(tq1Trit(qs[m], pow3[n]) - 1) * d;
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 16; ++m)
        *y++ = static_cast<float>(tq1Trit(qs[32 + m], pow3[n]) - 1) * d;
    for (int n = 0; n < 4; ++n)
      for (int j = 0; j < 4; ++j)
        *y++ = static_cast<float>(tq1Trit(qh[j], pow3[n]) - 1) * d;
  }
}

// block_tq2_0 {u8 qs[64]; half d}: per 32 bytes, 4 planes of 2-bit codes.
void ggml_detail::decodeTQ2_0(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t b = 0; b < blocks; ++b, src += 66) {
    const float d = readF16(src + 64);
    for (int j = 0; j < 64; j += 32)
      for (int l = 0; l < 4; ++l)
        for (int m = 0; m < 32; ++m) {
          const int q = (src[j + m] >> (l * 2)) & 3;
          *y++ = static_cast<float>(q - 1) * d;
        }
  }
}
