//===- KernelSpec.h - What one generated kernel is specialized for -*- C++ -*-===//
//
// The static configuration the kernel generators specialize a quantized
// linear kernel for (seed M8.9 0x07A): family, code width, symmetry, group
// size, activation dtype, rows T, the weight shape [N, K] and the split-K
// factor. A spec has a one-line text form used by pass options and a
// canonical kernel name used for symbols and `.ptx` file names. Validation
// happens here, before any IR is built, so that bad options get a sentence
// rather than a crash in the NVPTX backend.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_KERNELSPEC_H
#define QTENSOR_CONVERSION_KERNELSPEC_H

#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace qtensor {

enum class KernelFamily : uint8_t {
  DecodeGemv, ///< T = 1..16 rows: 128-bit code loads, warp-shuffle reduction
  PrefillMma, ///< tensor-core GEMM: mma.sync m16n8k16, cp.async staging
};

enum class ActivationType : uint8_t { F16, BF16 };

struct QuantKernelSpec {
  KernelFamily family = KernelFamily::DecodeGemv;
  unsigned bits = 4;      ///< 4 or 8
  bool symmetric = true;  ///< signed codes, no zero-points
  int64_t groupSize = 128; ///< 32, 64, 128, or 0 for per-channel (G = K)
  ActivationType activation = ActivationType::F16;
  int64_t rows = 1;  ///< T
  int64_t n = 0;     ///< output features (weight rows)
  int64_t k = 0;     ///< input features (weight columns)
  int64_t splitK = 1;

  /// The group size the kernel indexes with: K for per-channel.
  int64_t effectiveGroupSize() const { return groupSize == 0 ? k : groupSize; }
  int64_t groupsPerRow() const;
  /// Codes one decode lane reads per 128-bit load: 128 / bits.
  int64_t chunkCodes() const { return 128 / bits; }
  /// The kernel-native layout this kernel reads its codes in.
  KernelLayoutSpec layout() const;
  /// e.g. qt_decode_gemv_w4sym_g128_f16_t4_n4096_k4096_s1
  std::string name() const;
};

/// Threads per block and output rows per block of the decode kernel: one
/// warp per output feature.
constexpr int64_t kDecodeWarpsPerBlock = 4;
constexpr int64_t kWarpSize = 32;

/// Parses `family:wB:gG|gch:sym|asym:f16|bf16:tT:nN:kK[:sS]`, e.g.
/// `decode_gemv:w4:g128:sym:f16:t4:n4096:k4096:s2`, and validates it.
Expected<QuantKernelSpec> parseQuantKernelSpec(std::string_view text);

/// Checks the limits of the generated kernels; the message names the field.
Status validateQuantKernelSpec(const QuantKernelSpec &spec);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_KERNELSPEC_H
