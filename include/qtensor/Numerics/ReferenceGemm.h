//===- ReferenceGemm.h - Slow reference quantized linear --------*- C++ -*-===//
//
// The integer reference for Y = X W^T with per-row activation parameters and
// group-wise weight parameters (seed M8.1 0x05, 0x05A, 0x05C). Because the
// weight scale changes every G values it cannot leave the K reduction: each
// group forms its own exact INT64 partial accumulator of
// (q_x - z_x)(q_w - z_w), which is then scaled by s_x * s_w[n, g] and summed.
// The activation zero-point is kept unless it is 0 (0x05A). This is an
// oracle for operator parity (M8.9 0x09D), not a fast kernel.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_REFERENCEGEMM_H
#define QTENSOR_NUMERICS_REFERENCEGEMM_H

#include "qtensor/Numerics/Groupwise.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <vector>

namespace qtensor {

/// Per-row (per-token) quantized activations X: [M, K].
struct QuantizedActivations {
  int64_t rows = 0;                ///< M
  int64_t cols = 0;                ///< K
  std::vector<int32_t> codes;      ///< [M, K] row-major
  std::vector<double> scales;      ///< [M]
  std::vector<int32_t> zeroPoints; ///< [M], or empty for symmetric (all 0)
};

/// Group-wise quantized weights W: [N, K]; the same object quantizeGroupwise
/// produces. Only the shapes, codes, scales and zero-points are read here.
using GroupwiseQuantizedWeights = GroupwiseQuantized;

/// Y: [M, N] row-major, Y[m, n] = sum_g s_x[m] * s_w[n, g] * A[m, n, g] with
/// A[m, n, g] = sum over the group's valid k (including a short tail) of
/// (q_x[m, k] - z_x[m]) * (q_w[n, k] - z_w[n, g]) in exact INT64 arithmetic.
/// Errors on mismatched K, inconsistent shapes or vector sizes, nonfinite
/// scales, and INT64 accumulator overflow (naming m, n and the group).
Expected<std::vector<double>>
referenceQuantizedLinear(const QuantizedActivations &x,
                         const GroupwiseQuantizedWeights &w);

/// The cross-check path (M8.1 0x05C, 0x06B family 1): dequantize both
/// operands to double, X_hat = s_x (q_x - z_x), W_hat = s_w (q_w - z_w), and
/// return X_hat @ W_hat^T: [M, N]. Same validation as above.
Expected<std::vector<double>>
referenceDequantizedLinear(const QuantizedActivations &x,
                           const GroupwiseQuantizedWeights &w);

} // namespace qtensor

#endif // QTENSOR_NUMERICS_REFERENCEGEMM_H
