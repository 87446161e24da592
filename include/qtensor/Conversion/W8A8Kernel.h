//===- W8A8Kernel.h - Int8 weights times int8 activations --------*- C++ -*-===//
//
// W8A8 (seed M8.1 0x05): activations quantized per token at run time
// (Numerics/ActivationQuant.h gives the arithmetic, bit for bit), weights
// int8 per group or per channel, and the product formed in integers:
//
//   y[t, n] = s_x[t] sum_c s_w[n, g(c)] A[t, n, c]
//   A[t, n, c] = sum_{k in chunk c} (q_x[t, k] - z_x[t]) (q_w[n, k] - z_w[n, g])
//              = sum q_x q_w' - z_x[t] sum q_w',   q_w' = q_w - z_w
//
// with the zero-point correction terms applied per 16-code chunk in i32.
// The accumulator-width bound: a chunk's A is at most 16 * 255 * 255 <
// 2^24 in magnitude, so it is exact in i32 and converts to f32 exactly;
// only the scaling and the sum over chunks round. Two kernels, both built
// from upstream dialects for sm_80/sm_90 and as host twins:
//
//   quantizer  x: memref<T x K x f16|bf16> -> xq: memref<T x K x i8>,
//              sx: memref<T x f32>, [zx: memref<T x i32>] (asymmetric);
//              one warp per token (lanes stride K; an xor butterfly of max
//              and min), grid (ceil(T / 4), 1, 1), block (128, 1, 1).
//   GEMV       xq, sx, [zx], w: memref<N x 4C x i32> (the decode_gemv W8
//              layout, C = K / 16), s: memref<N x G x f16|bf16|f32>,
//              [z: memref<N x G x i8>] (asymmetric weights), [b: memref<N x
//              out>], y: memref<T x N x out>; one warp per output row (as
//              the decode GEMV), grid (ceil(N / 4), 1, 1).
//
// K must be a multiple of 16 (whole chunks: no padded code may enter the
// correction sums), G a multiple of 16 or per-channel, T in [1, 16].
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_W8A8KERNEL_H
#define QTENSOR_CONVERSION_W8A8KERNEL_H

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Support/Expected.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor {

struct W8A8GemvSpec {
  bool weightSymmetric = true;     ///< signed codes, else u8 + zero-points
  bool activationSymmetric = true; ///< i8 codes, else u8 + a zero-point
  int64_t groupSize = 0;           ///< 0: per channel
  FloatType activation = FloatType::F16;
  std::optional<FloatType> scale; ///< weight scales; unset: the activation's
  FloatType output = FloatType::F32;
  bool bias = false;
  int64_t rows = 1;
  int64_t n = 0, k = 0;

  FloatType scaleType() const { return scale.value_or(activation); }
  int64_t groupsPerRow() const { return groupSize == 0 ? 1 : k / groupSize; }
  /// e.g. qt_w8a8_gemv_w8sym_a8sym_g128_f16_t1_n4096_k4096, suffixes as
  /// the decode GEMV's (`_scf32`, `_of16`, `_bias`).
  std::string name() const;
  /// e.g. qt_quantize_a8sym_f16_t1_k4096.
  std::string quantizerName() const;
  /// The W8 kernel layout its weights are packed in.
  KernelLayoutSpec layout() const;
};

/// Parses `w8a8_gemv:gG|gch:sym|asym:sym|asym:f16|bf16:tT:nN:kK[:OPT]...`
/// (weights, then activations) with OPT `scf16|scbf16|scf32`,
/// `of16|obf16|of32`, `bias`; validates.
Expected<W8A8GemvSpec> parseW8A8GemvSpec(std::string_view text);
Status validateW8A8GemvSpec(const W8A8GemvSpec &spec);

KernelAbi w8a8QuantizerAbi(const W8A8GemvSpec &spec);
KernelAbi w8a8GemvAbi(const W8A8GemvSpec &spec);
/// Builds both kernels (quantizer first).
mlir::LogicalResult buildW8A8Kernels(mlir::ModuleOp module,
                                     const W8A8GemvSpec &spec,
                                     KernelTarget target);

/// What a compiled artifact holds for one shape: the quantizer and GEMV
/// for every T of [1, 16] (`spec` with rows 1..16), the runtime running a
/// larger T in chunks. The GEMV's name without its rows names the set.
std::string w8a8InstanceName(const W8A8GemvSpec &spec);
std::vector<W8A8GemvSpec> w8a8GemvEntries(const W8A8GemvSpec &spec);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_W8A8KERNEL_H
