//===- QuantizeFP4.h - Float weights to MXFP4 and NVFP4 ---------*- C++ -*-===//
//
// `--quant mxfp4 | nvfp4`: every weight becomes an E2M1 code (Codebook::
// E2M1) under a one-byte float scale per group along K: an e8m0 power of
// two per 32 (OCP MX v1.0's MXFP4) or an unsigned e4m3 per 16 (NVFP4 as
// ggml stores it, without a per-tensor f32 scale). The scale is exact in
// f32, so the logical form is the affine one with `scale = f32`.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_QUANTIZEFP4_H
#define QTENSOR_LIB_COMPILER_QUANTIZEFP4_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <vector>

namespace qtensor::compiler {

enum class FP4Format : uint8_t { MXFP4, NVFP4 };

/// "mxfp4" / "nvfp4".
const char *toString(FP4Format f);

/// Elements per scale: 32 (MXFP4) or 16 (NVFP4).
int64_t fp4GroupSize(FP4Format f);

/// The logical descriptor of an [n, k] weight in `f`; `k` must be a whole
/// number of groups (tail exact), checked by quantizeFP4 and the verifier.
QuantizedTensorDescriptor fp4Logical(FP4Format f, int64_t n, int64_t k,
                                     FloatType elementType);

struct FP4Quantized {
  std::vector<int32_t> codes; ///< [n, k] E2M1 codes, 0 to 15
  std::vector<float> scales;  ///< [n, k / G], each a value of the format
};

/// Quantizes a row-major [n, k] float weight, rows in parallel. Each
/// group's scale is whichever of the two codes nearest amax / 6 (MXFP4:
/// OCP's 2^(floor(log2 amax) - 2) and twice it) gives the smaller squared
/// error; each element the nearest E2M1 value of x / s, ties to the even
/// code, saturating at +-6. Errors name the first non-finite element.
Expected<FP4Quantized> quantizeFP4(FP4Format f, const float *values, int64_t n,
                                   int64_t k);

/// s * E2M1[q] for every element of `q` ([n, k]), in f32: exact, as each
/// scale has at most 4 significant bits and each value at most 2.
std::vector<float> dequantizeFP4(const FP4Quantized &q, int64_t k);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_QUANTIZEFP4_H
