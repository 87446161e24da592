/*===- TestHostKernels.c - Host kernels with MLIR's C interface ---------===*
 *
 * A stand-in for an artifact's kernels-host.so in the runtime tests: decode
 * GEMVs over the decode_gemv layout (Numerics/KernelLayout.h: row-major
 * 32-bit words, code j of a word at bits [4j, 4j + 4), signed codes offset
 * binary), exported as `_mlir_ciface_<name>` taking pointers to strided
 * memref descriptors, exactly as `llvm.emit_c_interface` functions do. Every
 * access goes through the descriptor's aligned pointer, offset and strides,
 * so a descriptor built wrong gives a wrong result, not a lucky one.
 *
 * Written in C, compiled by CMake into a module library; the tests copy its
 * bytes into an artifact as kernels-host.so. Groups of 32 along K.
 *
 *===--------------------------------------------------------------------===*/

#include <stdint.h>
#include <string.h>

#define DESC(T, R)                                                             \
  struct {                                                                     \
    T *allocated;                                                              \
    T *aligned;                                                                \
    int64_t offset;                                                            \
    int64_t sizes[R];                                                          \
    int64_t strides[R];                                                        \
  }

typedef DESC(uint16_t, 2) MemRefU16x2;
typedef DESC(float, 1) MemRefF32x1;
typedef DESC(int32_t, 2) MemRefI32x2;
typedef DESC(uint8_t, 2) MemRefU8x2;
typedef DESC(float, 2) MemRefF32x2;

static float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31,
           man = h & 1023, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: normalize */
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 1024));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 1023) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Round to nearest even; enough for finite values in f16 range. */
static uint16_t floatToHalf(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
  int32_t exp = (int32_t)((bits >> 23) & 255) - 127 + 15;
  uint32_t man = bits & 0x7FFFFF;
  if (exp >= 31)
    return sign | 0x7C00;
  if (exp <= 0) {
    if (exp < -10)
      return sign;
    man |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return sign | (uint16_t)half;
  }
  uint32_t half = ((uint32_t)exp << 10) | (man >> 13), rest = man & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | (uint16_t)half;
}

/* acc[t][n] = sum_k x[t][k] * s[n][k / 32] * (q[n][k] - z[n][k / 32]) */
static void gemv(const MemRefU16x2 *x, const MemRefI32x2 *w,
                 const MemRefU16x2 *s, const MemRefU8x2 *z, int isSigned,
                 int64_t t, int64_t n, double *acc) {
  int64_t k = x->sizes[1];
  const uint16_t *xp = x->aligned + x->offset;
  const int32_t *wp = w->aligned + w->offset;
  const uint16_t *sp = s->aligned + s->offset;
  for (int64_t r = 0; r < t; ++r)
    for (int64_t o = 0; o < n; ++o) {
      double sum = 0;
      for (int64_t c = 0; c < k; ++c) {
        int64_t word = c / 8, shift = 4 * (c % 8);
        uint32_t field =
            ((uint32_t)wp[o * w->strides[0] + word * w->strides[1]] >> shift) &
            15u;
        int32_t q = isSigned ? (int32_t)field - 8 : (int32_t)field;
        int64_t g = c / 32;
        int32_t zero =
            z ? (int32_t)(z->aligned +
                          z->offset)[o * z->strides[0] + g * z->strides[1]]
              : 0;
        float scale = halfToFloat(sp[o * s->strides[0] + g * s->strides[1]]);
        float xv = halfToFloat(xp[r * x->strides[0] + c * x->strides[1]]);
        sum += (double)xv * (double)scale * (double)(q - zero);
      }
      acc[r * n + o] = sum;
    }
}

/* Each call's own scratch (on its stack): calls may run concurrently. */
enum { kMaxOut = 1 << 12 };

/* Symmetric si4, f16 output. */
void _mlir_ciface_test_gemv_w4s_g32_f16(MemRefU16x2 *x, MemRefI32x2 *w,
                                        MemRefU16x2 *s, MemRefU16x2 *y) {
  int64_t t = y->sizes[0], n = y->sizes[1];
  double scratch[kMaxOut];
  if (t * n > kMaxOut)
    return;
  gemv(x, w, s, 0, 1, t, n, scratch);
  for (int64_t r = 0; r < t; ++r)
    for (int64_t o = 0; o < n; ++o)
      (y->aligned + y->offset)[r * y->strides[0] + o * y->strides[1]] =
          floatToHalf((float)scratch[r * n + o]);
}

/* The same, wrong by +0.5 everywhere: a kernel bug the checks must see. */
void _mlir_ciface_test_gemv_w4s_g32_f16_wrong(MemRefU16x2 *x, MemRefI32x2 *w,
                                              MemRefU16x2 *s, MemRefU16x2 *y) {
  int64_t t = y->sizes[0], n = y->sizes[1];
  double scratch[kMaxOut];
  if (t * n > kMaxOut)
    return;
  gemv(x, w, s, 0, 1, t, n, scratch);
  for (int64_t r = 0; r < t; ++r)
    for (int64_t o = 0; o < n; ++o)
      (y->aligned + y->offset)[r * y->strides[0] + o * y->strides[1]] =
          floatToHalf((float)(scratch[r * n + o] + 0.5));
}

/* Asymmetric ui4 with u8 zero-points, an f32 bias, f32 output. */
void _mlir_ciface_test_gemv_w4a_g32_bias_f32(MemRefU16x2 *x, MemRefI32x2 *w,
                                             MemRefU16x2 *s, MemRefU8x2 *z,
                                             MemRefF32x1 *b, MemRefF32x2 *y) {
  int64_t t = y->sizes[0], n = y->sizes[1];
  double scratch[kMaxOut];
  if (t * n > kMaxOut)
    return;
  gemv(x, w, s, z, 0, t, n, scratch);
  for (int64_t r = 0; r < t; ++r)
    for (int64_t o = 0; o < n; ++o)
      (y->aligned + y->offset)[r * y->strides[0] + o * y->strides[1]] =
          (float)(scratch[r * n + o] +
                  (b->aligned + b->offset)[o * b->strides[0]]);
}
