//===- Activations.cpp - Deterministic test activations -------------------===//

#include "qtensor/Runtime/Activations.h"

#include "qtensor/Support/CheckedMath.h"

#include <cmath>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {
uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
} // namespace

Expected<HostTensor>
qtensor::runtime::deterministicActivations(FloatType dtype, int64_t rows,
                                           int64_t cols, uint64_t seed,
                                           std::string_view stream) {
  if (rows < 1 || cols < 1)
    return makeError("activations of shape [", rows, ", ", cols,
                     "]: both dimensions must be positive");
  auto count = checkedElementCount(
      std::vector<uint64_t>{uint64_t(rows), uint64_t(cols)}, uint64_t(1) << 32);
  if (!count)
    return makeError("activations of shape [", rows, ", ", cols,
                     "] are too large");
  uint64_t state = seed ^ fnv1a64(stream);
  std::vector<double> values(static_cast<size_t>(*count));
  for (double &v : values)
    v = std::ldexp(double(splitmix64(state) >> 11), -52) - 1.0;
  return HostTensor::fromDoubles(dtype, rows, cols, values);
}
