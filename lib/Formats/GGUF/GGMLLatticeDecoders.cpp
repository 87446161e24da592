//===- GGMLLatticeDecoders.cpp - ggml's IQ (lattice/codebook) decoders ----===//
//
// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M and IQ4_XS, mirroring
// ggml's dequantize_row_iq*. Each group of 8 (or 4) codes is one point of a
// lattice table (GGMLGrids.inc), scaled by a per-32 (or per-16) scale and
// signed by a sign pattern. Every value is formed in ggml's order, each step
// rounded to float32: the scale first (d * (0.5 + s) * 0.25 and the like),
// then scale * grid, then the sign (exact).
//
//===----------------------------------------------------------------------===//

#include "GGMLDecoders.h"

using namespace qtensor;
using namespace qtensor::ggml_detail;

namespace {

#include "GGMLGrids.inc"

constexpr int QK_K = 256;

/// Element j (0..7) of a 64-bit lattice row, as ggml reads it (byte j).
inline float gridByte(uint64_t row, int j) {
  return static_cast<float>(static_cast<uint8_t>(row >> (8 * j)));
}
inline float gridByte32(uint32_t row, int j) {
  return static_cast<float>(static_cast<uint8_t>(row >> (8 * j)));
}
/// IQ1 rows hold int8 -1/0/+1.
inline float gridTrit(uint64_t row, int j) {
  return static_cast<float>(static_cast<int8_t>(row >> (8 * j)));
}
inline float sign(uint8_t signs, int j) {
  return (signs >> j) & 1 ? -1.0f : 1.0f;
}
/// The IQ2/IQ3_XXS scale of a 4-bit s: d * (0.5 + s) * unit, in ggml's
/// order.
inline float halfStepScale(float d, unsigned s, float unit) {
  return d * (0.5f + static_cast<float>(s)) * unit;
}
/// Eight values of a 64-bit lattice row: db * grid * sign.
inline void signedRow8(float *y, float db, uint64_t row, uint8_t signs) {
  for (int j = 0; j < 8; ++j)
    y[j] = db * gridByte(row, j) * sign(signs, j);
}

} // namespace

// block_iq2_xxs {half d; u16 qs[32]}: per 32 elements two u32 words; the
// first holds four grid indices (bytes), the second four 7-bit sign indices
// and a 4-bit scale (top). x = d*(0.5+s)*0.25 * grid * sign.
void ggml_detail::decodeIQ2_XXS(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t i = 0; i < blocks; ++i, src += 66) {
    const float d = readF16(src);
    const uint8_t *qs = src + 2;
    for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
      const uint8_t *grid8 = qs + 8 * ib32;
      const uint32_t aux = readU32(qs + 8 * ib32 + 4);
      const float db = halfStepScale(d, aux >> 28, 0.25f);
      for (int l = 0; l < 4; ++l, y += 8)
        signedRow8(y, db, kIQ2XXSGrid[grid8[l]],
                   kIQ2Signs[(aux >> (7 * l)) & 127]);
    }
  }
}

// block_iq2_xs {half d; u16 qs[32]; u8 scales[8]}: each u16 is a 9-bit grid
// index and a 7-bit sign index; two 4-bit scales per 32 elements (one per
// 16).
void ggml_detail::decodeIQ2_XS(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t i = 0; i < blocks; ++i, src += 74) {
    const float d = readF16(src);
    const uint8_t *qs = src + 2;
    const uint8_t *scales = src + 2 + 64;
    for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
      const float db[2] = {halfStepScale(d, scales[ib32] & 0xF, 0.25f),
                           halfStepScale(d, scales[ib32] >> 4, 0.25f)};
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint16_t q = readU16(qs + 2 * (4 * ib32 + l));
        signedRow8(y, db[l / 2], kIQ2XSGrid[q & 511], kIQ2Signs[q >> 9]);
      }
    }
  }
}

// block_iq2_s {half d; u8 qs[64]; u8 qh[8]; u8 scales[8]}: qs[0..32) are the
// low 8 bits of 10-bit grid indices (high 2 bits in qh), qs[32..64) explicit
// sign bytes.
void ggml_detail::decodeIQ2_S(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t i = 0; i < blocks; ++i, src += 82) {
    const float d = readF16(src);
    const uint8_t *qs = src + 2;
    const uint8_t *signs = qs + QK_K / 8;
    const uint8_t *qh = src + 2 + QK_K / 4;
    const uint8_t *scales = qh + QK_K / 32;
    for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
      const float db[2] = {halfStepScale(d, scales[ib32] & 0xF, 0.25f),
                           halfStepScale(d, scales[ib32] >> 4, 0.25f)};
      for (int l = 0; l < 4; ++l, y += 8) {
        const int index = qs[l] | ((qh[ib32] << (8 - 2 * l)) & 0x300);
        signedRow8(y, db[l / 2], kIQ2SGrid[index], signs[l]);
      }
      qs += 4;
      signs += 4;
    }
  }
}

// block_iq3_xxs {half d; u8 qs[96]}: qs[0..64) are grid indices (4 values
// each), then one u32 per 32 elements with four 7-bit sign indices and a
// 4-bit scale. x = d*(0.5+s)*0.5 * grid * sign.
void ggml_detail::decodeIQ3_XXS(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t i = 0; i < blocks; ++i, src += 98) {
    const float d = readF16(src);
    const uint8_t *qs = src + 2;
    const uint8_t *scalesAndSigns = qs + QK_K / 4;
    for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
      const uint32_t aux = readU32(scalesAndSigns + 4 * ib32);
      const float db = halfStepScale(d, aux >> 28, 0.5f);
      for (int l = 0; l < 4; ++l) {
        const uint8_t signs = kIQ2Signs[(aux >> (7 * l)) & 127];
        const uint32_t row1 = kIQ3XXSGrid[qs[2 * l]];
        const uint32_t row2 = kIQ3XXSGrid[qs[2 * l + 1]];
        for (int j = 0; j < 4; ++j) {
          y[j] = db * gridByte32(row1, j) * sign(signs, j);
          y[j + 4] = db * gridByte32(row2, j) * sign(signs, j + 4);
        }
        y += 8;
      }
      qs += 8;
    }
  }
}

// block_iq3_s {half d; u8 qs[64]; u8 qh[8]; u8 signs[32]; u8 scales[4]}:
// 9-bit grid indices (bit 8 in qh), explicit sign bytes, a 4-bit scale per
// 32 elements. x = d*(1+2s) * grid * sign.
void ggml_detail::decodeIQ3_S(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t i = 0; i < blocks; ++i, src += 110) {
    const float d = readF16(src);
    const uint8_t *qs = src + 2;
    const uint8_t *qh = qs + QK_K / 4;
    const uint8_t *signs = qh + QK_K / 32;
    const uint8_t *scales = signs + QK_K / 8;
    for (int ib32 = 0; ib32 < QK_K / 32; ib32 += 2) {
      const float dbs[2] = {
          d * static_cast<float>(1 + 2 * (scales[ib32 / 2] & 0xF)),
          d * static_cast<float>(1 + 2 * (scales[ib32 / 2] >> 4))};
      for (int half = 0; half < 2; ++half) {
        const float db = dbs[half];
        for (int l = 0; l < 4; ++l) {
          const uint32_t row1 =
              kIQ3SGrid[qs[2 * l] | ((qh[half] << (8 - 2 * l)) & 256)];
          const uint32_t row2 =
              kIQ3SGrid[qs[2 * l + 1] | ((qh[half] << (7 - 2 * l)) & 256)];
          for (int j = 0; j < 4; ++j) {
            y[j] = db * gridByte32(row1, j) * sign(signs[l], j);
            y[j + 4] = db * gridByte32(row2, j) * sign(signs[l], j + 4);
          }
          y += 8;
        }
        qs += 8;
        signs += 4;
      }
      qh += 2;
    }
  }
}

// block_iq1_s {half d; u8 qs[32]; u16 qh[8]}: 11-bit indices into the
// ternary grid (8 low bits in qs, 3 high bits per group of 8 in qh), a 3-bit
// scale and the sign of a shared delta per 32. x = d*(2s+1) * (grid + delta).
void ggml_detail::decodeIQ1_S(const uint8_t *src, uint64_t blocks, float *y) {
  constexpr float kDelta = 0.125f; // IQ1S_DELTA
  for (uint64_t i = 0; i < blocks; ++i, src += 50) {
    const float d = readF16(src);
    const uint8_t *qs = src + 2;
    const uint8_t *qhBytes = src + 2 + QK_K / 8;
    for (int ib = 0; ib < QK_K / 32; ++ib) {
      const uint16_t qh = readU16(qhBytes + 2 * ib);
      const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
      const float delta = qh & 0x8000 ? -kDelta : kDelta;
      for (int l = 0; l < 4; ++l) {
        const uint64_t row = kIQ1SGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)];
        for (int j = 0; j < 8; ++j)
          y[j] = dl * (gridTrit(row, j) + delta);
        y += 8;
      }
      qs += 4;
    }
  }
}

// block_iq1_m {u8 qs[32]; u8 qh[16]; u8 scales[8]}: as IQ1_S, but with 3-bit
// scales per 16 elements and a delta sign per 8; the fp16 d is spread over
// the top nibbles of the four u16 scale words.
void ggml_detail::decodeIQ1_M(const uint8_t *src, uint64_t blocks, float *y) {
  constexpr float kDelta = 0.125f;
  for (uint64_t i = 0; i < blocks; ++i, src += 56) {
    const uint8_t *qs = src;
    const uint8_t *qh = src + QK_K / 8;
    const uint8_t *scaleBytes = qh + QK_K / 16;
    uint16_t sc[4];
    for (int k = 0; k < 4; ++k)
      sc[k] = readU16(scaleBytes + 2 * k);
    const uint16_t dBits =
        static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) |
                              ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
    const float d = fp16ToFp32(dBits);
    for (int ib = 0; ib < QK_K / 32; ++ib) {
      const float dl1 =
          d * static_cast<float>(
                  2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1);
      const float dl2 =
          d * static_cast<float>(
                  2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1);
      const int index[4] = {
          qs[0] | ((qh[0] << 8) & 0x700), qs[1] | ((qh[0] << 4) & 0x700),
          qs[2] | ((qh[1] << 8) & 0x700), qs[3] | ((qh[1] << 4) & 0x700)};
      const float delta[4] = {
          qh[0] & 0x08 ? -kDelta : kDelta, qh[0] & 0x80 ? -kDelta : kDelta,
          qh[1] & 0x08 ? -kDelta : kDelta, qh[1] & 0x80 ? -kDelta : kDelta};
      for (int l = 0; l < 4; ++l) {
        const uint64_t row = kIQ1SGrid[index[l]];
        const float dl = l < 2 ? dl1 : dl2;
        for (int j = 0; j < 8; ++j)
          y[j] = dl * (gridTrit(row, j) + delta[l]);
        y += 8;
      }
      qs += 4;
      qh += 2;
    }
  }
}

// block_iq4_xs {half d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}: IQ4_NL's
// codebook with a 6-bit scale (minus 32) per 32 elements.
void ggml_detail::decodeIQ4_XS(const uint8_t *src, uint64_t blocks, float *y) {
  for (uint64_t i = 0; i < blocks; ++i, src += 136) {
    const float d = readF16(src);
    const uint16_t scalesH = readU16(src + 2);
    const uint8_t *scalesL = src + 4;
    const uint8_t *qs = src + 8;
    for (int ib = 0; ib < QK_K / 32; ++ib) {
      const int ls = ((scalesL[ib / 2] >> (4 * (ib % 2))) & 0xF) |
                     (((scalesH >> (2 * ib)) & 3) << 4);
      decodeIQ4Nibbles(qs, d * static_cast<float>(ls - 32), y);
      y += 32;
      qs += 16;
    }
  }
}
