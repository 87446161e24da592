//===- ReferenceDot.h - The float64 dot products of the reference -*- C++ -*-===//
//
// Every reference output (referenceLinear, absoluteProducts, the kernel
// error of L3 and the float64 forward of L4) is a float64 dot product over
// K. They are summed in kReferenceDotLanes lanes: element i goes to partial
// sum i % 16, and the partials are then added pairwise (lane l + 8 into l,
// then + 4, + 2, + 1). One order whatever the row blocking, the thread
// split, T or the CPU: the function is cloned per x86 level (SSE2, AVX2,
// AVX-512), which run the same multiplies and adds (never fused) in the
// same order, so their results are the same bits. Sixteen independent
// chains of adds keep the FPU busy where one chain in index order waited
// on the add latency at every element.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_REFERENCEDOT_H
#define QTENSOR_RUNTIME_REFERENCEDOT_H

#include <cstdint>

namespace qtensor::runtime {

inline constexpr int64_t kReferenceDotLanes = 16;
/// Rows of x one referenceDots call takes.
inline constexpr int64_t kReferenceDotRows = 4;

/// The dots of `rows` (1 to kReferenceDotRows) rows of x (row-major, row j
/// at x + j k) with w[0, k): dot[j]; and, where `mag` is not null, the sums
/// of |x w| in the same order: mag[j].
void referenceDots(const double *x, int64_t rows, int64_t k, const double *w,
                   double *dot, double *mag);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_REFERENCEDOT_H
