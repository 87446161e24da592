//===- Activations.h - Deterministic test activations -----------*- C++ -*-===//
//
// `qtc run` without --input and the parity ladder's operator level feed
// kernels pseudo-random activations that anyone can regenerate from the
// seed and the op's name (docs/runtime.md):
//
//   state = seed XOR fnv1a64(stream)       stream: the op's manifest name
//   next  = splitmix64(state)              (Steele et al., 2014)
//   x     = (next >> 11) * 2^-52 - 1       uniform in [-1, 1), 2^-52 steps
//
// in row-major order, each value then rounded to nearest even in the
// activation dtype. Uniform [-1, 1) keeps |x| like a normalized hidden
// state's and exercises both signs of every product.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_ACTIVATIONS_H
#define QTENSOR_RUNTIME_ACTIVATIONS_H

#include "qtensor/Runtime/OpKernel.h"

#include <cstdint>
#include <string_view>

namespace qtensor::runtime {

/// The default seed of `qtc run` and `qtc verify`.
constexpr uint64_t kDefaultActivationSeed = 0x5EED;

Expected<HostTensor> deterministicActivations(FloatType dtype, int64_t rows,
                                              int64_t cols, uint64_t seed,
                                              std::string_view stream);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_ACTIVATIONS_H
