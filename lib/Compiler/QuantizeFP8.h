//===- QuantizeFP8.h - Float weights to FP8 (E4M3) codes ---------*- C++ -*-===//
//
// `--quant fp8`: every weight an OCP E4M3 code (Codebook::E4M3, ui8 codes
// whose value is their float), one scale per output channel in the scale
// dtype of the affine path (f16, or bf16 under bf16 activations), as FP8
// weight-only checkpoints store them (weight_scale per channel).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_QUANTIZEFP8_H
#define QTENSOR_LIB_COMPILER_QUANTIZEFP8_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <vector>

namespace qtensor::compiler {

/// The logical descriptor of an [n, k] FP8 weight: ui8 codes indexing
/// E4M3, per-axis scales along N in `scaleType` (f16 or bf16).
QuantizedTensorDescriptor fp8Logical(int64_t n, int64_t k,
                                     FloatType elementType);

struct FP8Quantized {
  std::vector<int32_t> codes; ///< [n, k] E4M3 codes, never a NaN code
  std::vector<float> scales;  ///< [n], each a value of the scale dtype
};

/// Quantizes a row-major [n, k] float weight, rows in parallel: each row's
/// scale is amax / 448 rounded to the scale dtype (1 for an all-zero row;
/// the dtype's smallest positive value if it would round to 0), each code
/// the E4M3 value nearest x / s (ties to the smaller magnitude),
/// saturating at +-448. Errors name the first non-finite element.
Expected<FP8Quantized> quantizeFP8(const float *values, int64_t n, int64_t k,
                                   FloatType scaleType);

/// s * E4M3[q] for every element, in f32: exact (a 4-bit significand times
/// an 8- or 11-bit one).
std::vector<float> dequantizeFP8(const FP8Quantized &q, int64_t k);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_QUANTIZEFP8_H
