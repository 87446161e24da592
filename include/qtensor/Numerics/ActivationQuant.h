//===- ActivationQuant.h - Dynamic per-token int8 activations ----*- C++ -*-===//
//
// The reference of W8A8's activation quantizer (seed M8.1 0x05): each row
// (token) of X gets its own scale, and with the asymmetric form a zero-point,
// computed from that row alone at run time. The arithmetic is f32 and
// spelled out so that the generated kernel (Conversion/W8A8Kernel.h) can
// match it bit for bit:
//
//   symmetric:  a = max |x|;  s = a / 127 (s = 1 when a = 0);
//               q = clamp(rne(x / s), -127, 127)
//   asymmetric: lo = min(min x, 0), hi = max(max x, 0);
//               s = (hi - lo) / 255 (s = 1 when hi = lo);
//               z = clamp(rne(-lo / s), 0, 255);
//               q = clamp(rne(x / s) + z, 0, 255)
//
// where every operation rounds once to f32 (division included) and rne is
// round-half-to-even. The result is QuantizedActivations, the input of the
// integer reference GEMM (ReferenceGemm.h).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_ACTIVATIONQUANT_H
#define QTENSOR_NUMERICS_ACTIVATIONQUANT_H

#include "qtensor/Numerics/ReferenceGemm.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <vector>

namespace qtensor {

/// The activations the host GEMM's int8 path scales together (ggml Q8_0's
/// block): each gets s = max |x| / 127 and q = clamp(rne(x / s), -127,
/// 127), the symmetric rule above applied per block instead of per row.
constexpr int64_t kActivationBlock = 32;
/// The longest row that kernel takes: its int8 copy of X lives on the
/// stack, beside the f32 rows its T > 1 path decodes (128 KiB each).
constexpr int64_t kMaxQuantizedActivationRow = 32768;

/// X [rows, cols] with every row quantized per kActivationBlock columns
/// (the last block may be short) and dequantized, s q in float64: the X a
/// kernel with int8 activations multiplies, for the parity checks. `x`
/// holds f16 or bf16 values (exact in f32); a non-finite value is kept
/// as it is, as the kernel's output is then not finite either.
std::vector<double> blockQuantizedActivations(const std::vector<double> &x,
                                              int64_t rows, int64_t cols);

/// X [rows, cols] with every row (token) quantized by the rule above and
/// dequantized, s (q - z) in float64: the X a W8A8 GEMV multiplies, for
/// the parity checks. `x` holds f16 or bf16 values (exact in f32); a row
/// with a non-finite value becomes NaN, as the kernel's outputs do.
std::vector<double> tokenQuantizedActivations(const std::vector<double> &x,
                                              int64_t rows, int64_t cols,
                                              bool symmetric);

/// Quantizes X: [rows, cols] row-major f32 values. Errors on a non-positive
/// shape or a non-finite value (naming its row and column).
Expected<QuantizedActivations> quantizeActivationsPerToken(const float *x,
                                                           int64_t rows,
                                                           int64_t cols,
                                                           bool symmetric);

/// rne(v) in f32 for |v| <= 2^22: (v + 1.5 2^23) - 1.5 2^23, the form the
/// kernels use (no rounding-mode state, no libm call on the GPU).
/// Both operations round (no -ffast-math in this project), so this is
/// not folded to v.
inline float roundHalfEvenF32(float v) {
  const float biased = v + 12582912.0f;
  return biased - 12582912.0f;
}

} // namespace qtensor

#endif // QTENSOR_NUMERICS_ACTIVATIONQUANT_H
