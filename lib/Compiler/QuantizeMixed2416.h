//===- QuantizeMixed2416.h - Float weights to mixed 2/4/16 ------*- C++ -*-===//
//
// The converter of the mixed_2416 family (Mixed2416.h; seed M8.9 0x07D):
//   1. precision map: every first-level group's sensitivity is the error it
//      would add at 2 bits over 4 bits (squared, weighted per input channel
//      by E[x_k^2] when calibration statistics are given: a diagonal
//      Hessian proxy; plain range error otherwise). The most sensitive
//      groups become W4, as many as the rate budget pays for;
//   2. outliers: in each row, the W2 elements farthest from their group's
//      mean (weighted likewise) move to the sparse 16-bit stream, which
//      replaces them (they are reserved from the 2-bit regions);
//   3. first level: each group's range (outliers excluded, zero included)
//      gives s1; the second level quantizes each column of G2 scales to
//      unsigned codes qs with a real zero-point z2 and scale s2 (bf16);
//   4. codes and z1 are then computed with the decoded s1, so the codes fit
//      the scales the decoder will use.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_QUANTIZEMIXED2416_H
#define QTENSOR_LIB_COMPILER_QUANTIZEMIXED2416_H

#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <vector>

namespace qtensor::compiler {

struct Mixed2416Options {
  /// Bits per weight for the whole tensor (Mixed2416Rates::bitsPerWeight):
  /// codes, map, both qparam levels and the sparse stream.
  double budget = 3.0;
  /// Outliers per row, as a fraction of K (taken from W2 groups only).
  double outlierFraction = 0.005;
  int64_t firstGroupSize = 64;
  int64_t secondGroupSize = 16;
  FloatType elementType = FloatType::F16;
  /// s2 and z2 (bf16 by default: its range keeps small scales normal).
  FloatType secondType = FloatType::BF16;
  FloatType sparseType = FloatType::F16; ///< outlier values
  /// E[x_k^2] per input channel from calibration activations; empty: every
  /// channel weighs the same.
  std::vector<double> columnImportance;
};

struct Mixed2416Quantized {
  Mixed2416Descriptor descriptor;
  Mixed2416Streams streams;
  Mixed2416Rates rates;
};

/// The smallest bits per weight `d`'s tensor can take under `options`:
/// every group W2, with the planned outliers (floor(outlierFraction * K)
/// per row). A budget below it is refused; the plan checks it before any
/// value is read.
double mixed2416MinimumRate(const Mixed2416Descriptor &d,
                            const Mixed2416Options &options);

/// Quantizes a row-major [n, k] float weight. Errors: a shape the
/// descriptor refuses, a budget below the tensor's smallest rate (every
/// group W2, the planned outliers; the message gives that rate), a
/// non-finite weight or importance (named by position), an outlier beyond
/// the 16-bit range.
Expected<Mixed2416Quantized> quantizeMixed2416(const float *values, int64_t n,
                                               int64_t k,
                                               const Mixed2416Options &options);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_QUANTIZEMIXED2416_H
