//===- Ledger.h - Storage ledgers and accumulator bounds --------*- C++ -*-===//
//
// Exact storage accounting for a row-bounded group-wise tensor (seed M8.1
// 0x07, M8.9 0x03A-0x03B), the full-group estimate used for whole-model
// numbers (M8.1 0x07A), and the worst-case accumulation length an integer
// accumulator can hold (M8.1 0x05B).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_LEDGER_H
#define QTENSOR_NUMERICS_LEDGER_H

#include "qtensor/Numerics/CodeRange.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>

namespace qtensor {

/// The logical storage of one [N, K] tensor with group size G along K, one
/// scale (and optionally one zero-point) per group. These are logical payload
/// numbers: tile padding, permutations and headers are not included
/// (M8.9 0x03C-0x03D).
struct TensorLedger {
  int64_t rows = 0;       ///< N
  int64_t cols = 0;       ///< K
  int64_t groupSize = 0;  ///< G
  unsigned codeBits = 0;  ///< b_q
  unsigned scaleBits = 0; ///< b_s
  unsigned zeroBits = 0;  ///< b_z (0: symmetric, no zero-point stored)

  uint64_t numValues = 0;    ///< P = N * K
  int64_t groupsPerRow = 0;  ///< ceil(K / G)
  uint64_t numGroups = 0;    ///< N * ceil(K / G): row-bounded, not ceil(P / G)
  uint64_t logicalBits = 0;  ///< P * b_q + numGroups * (b_s + b_z)
  double bitsPerValue = 0.0; ///< logicalBits / P

  uint64_t tightCodeBytes = 0;       ///< ceil(P * b_q / 8), one bit stream
  uint64_t rowAlignedCodeBytes = 0;  ///< N * ceil(K * b_q / 8)
  uint64_t scaleBytes = 0;           ///< ceil(numGroups * b_s / 8)
  uint64_t zeroBytes = 0;            ///< ceil(numGroups * b_z / 8)
  uint64_t metadataBytes = 0;        ///< scaleBytes + zeroBytes
  uint64_t tightTotalBytes = 0;      ///< tightCodeBytes + metadataBytes
  uint64_t rowAlignedTotalBytes = 0; ///< rowAlignedCodeBytes + metadataBytes
};

/// Computes the ledger. N, K, G must be positive; codeBits in [1, 32];
/// scaleBits and zeroBits in [0, 64]. Every product is overflow-checked.
/// For N=3, K=5, G=4, W4 with FP16 scales: 6 groups, 156 logical bits,
/// 10.4 bits/value, 20 bytes tight vs 21 bytes row-aligned (M8.1 0x07).
Expected<TensorLedger> computeLedger(int64_t rows, int64_t cols,
                                     int64_t groupSize, unsigned codeBits,
                                     unsigned scaleBits, unsigned zeroBits);

/// The full-group approximation of bits per value (M8.1 0x07):
///   b_q + (b_s + b_z) / G.
double effectiveBitsPerValue(unsigned codeBits, double groupSize,
                             unsigned scaleBits, unsigned zeroBits);

/// Approximate bytes for P values under the full-group approximation,
/// P * (b_q + (b_s + b_z) / G) / 8. For whole-model estimates where tail
/// groups are negligible (M8.1 0x07A: 70e9 params, W4, G=128, FP16 scale and
/// 8-bit zero -> 36.640625e9 bytes). Only meaningful for P >= 0, G > 0.
double estimateBytes(double numValues, unsigned codeBits, double groupSize,
                     unsigned scaleBits, unsigned zeroBits);

/// The largest K such that K products a * b with a in `a` and b in `b` always
/// fit a signed `accumulatorBits` accumulator (M8.1 0x05B):
///   floor((2^(acc-1) - 1) / max|a * b|).
/// For affine operands pass the range of the values actually multiplied, i.e.
/// the centered codes q - z. accumulatorBits must be in [2, 64]. Symmetric
/// INT8 [-127, 127] into INT32 gives 133144. Returns 0 when even one product
/// does not fit.
Expected<int64_t> maxAccumulationLength(CodeRange a, CodeRange b,
                                        unsigned accumulatorBits);

} // namespace qtensor

#endif // QTENSOR_NUMERICS_LEDGER_H
