//===- ReferenceDot.cpp - The float64 dot products of the reference -------===//

#include "qtensor/Runtime/ReferenceDot.h"

#include <cassert>

// The clones must not fuse a multiply into the next add (FMA at AVX2 and
// above): each level then rounds exactly as SSE2 does.
#pragma STDC FP_CONTRACT OFF

namespace {

/// Eight lanes; two of them hold a row's sixteen partial sums. Loaded from
/// any double-aligned address.
typedef double Lanes8
    __attribute__((ext_vector_type(8), aligned(8), may_alias));

#define QTENSOR_LOAD8(p) (*reinterpret_cast<const Lanes8 *>(p))

static_assert(qtensor::runtime::kReferenceDotLanes == 16,
              "a row's partial sums are two Lanes8 (sumLanes' order)");

/// The lanes' pairwise sum: l + 8, then + 4, + 2, + 1.
inline __attribute__((always_inline)) double sumLanes(Lanes8 low, Lanes8 high) {
  const Lanes8 s = low + high;
  double t[8];
  for (int l = 0; l < 8; ++l)
    t[l] = s[l];
  for (int width = 4; width >= 1; width /= 2)
    for (int l = 0; l < width; ++l)
      t[l] += t[l + width];
  return t[0];
}

template <int R, bool Magnitudes>
inline __attribute__((always_inline)) void
dotsOf(const double *x, int64_t k, const double *w, double *dot, double *mag) {
  Lanes8 acc[R][2] = {}, abs[R][2] = {};
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const Lanes8 w0 = QTENSOR_LOAD8(w + i), w1 = QTENSOR_LOAD8(w + i + 8);
    for (int j = 0; j < R; ++j) {
      const double *xj = x + j * k + i;
      const Lanes8 p0 = QTENSOR_LOAD8(xj) * w0;
      const Lanes8 p1 = QTENSOR_LOAD8(xj + 8) * w1;
      acc[j][0] += p0;
      acc[j][1] += p1;
      if (Magnitudes) {
        abs[j][0] += __builtin_elementwise_abs(p0);
        abs[j][1] += __builtin_elementwise_abs(p1);
      }
    }
  }
  // The tail: element i still goes to lane i % 16.
  for (int64_t lane = 0; i < k; ++i, ++lane)
    for (int j = 0; j < R; ++j) {
      const double p = x[j * k + i] * w[i];
      acc[j][lane / 8][lane % 8] += p;
      if (Magnitudes)
        abs[j][lane / 8][lane % 8] += __builtin_fabs(p);
    }
  for (int j = 0; j < R; ++j) {
    dot[j] = sumLanes(acc[j][0], acc[j][1]);
    if (Magnitudes)
      mag[j] = sumLanes(abs[j][0], abs[j][1]);
  }
}

template <int R>
inline __attribute__((always_inline)) void
dotsOf(const double *x, int64_t k, const double *w, double *dot, double *mag) {
  if (mag)
    dotsOf<R, true>(x, k, w, dot, mag);
  else
    dotsOf<R, false>(x, k, w, dot, nullptr);
}

} // namespace

#if defined(__x86_64__) && defined(__ELF__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void qtensor::runtime::referenceDots(const double *x, int64_t rows, int64_t k,
                                     const double *w, double *dot,
                                     double *mag) {
  assert(rows >= 1 && rows <= kReferenceDotRows);
  switch (rows) {
  case 4:
    return dotsOf<4>(x, k, w, dot, mag);
  case 3:
    return dotsOf<3>(x, k, w, dot, mag);
  case 2:
    return dotsOf<2>(x, k, w, dot, mag);
  default:
    return dotsOf<1>(x, k, w, dot, mag);
  }
}
