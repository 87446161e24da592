//===- Ledger.cpp - Storage ledgers and accumulator bounds ----------------===//
//
// Seed M8.1 0x05B, 0x07, 0x07A and M8.9 0x03A-0x03B.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/Ledger.h"

#include "NumericsDetail.h"

#include <limits>

namespace qtensor {

using numerics_detail::addOverflow;
using numerics_detail::ceilDiv;
using numerics_detail::mulOverflow;

Expected<TensorLedger> computeLedger(int64_t rows, int64_t cols,
                                     int64_t groupSize, unsigned codeBits,
                                     unsigned scaleBits, unsigned zeroBits) {
  if (rows <= 0)
    return makeError("row count N must be positive, got ", rows);
  if (cols <= 0)
    return makeError("column count K must be positive, got ", cols);
  if (groupSize <= 0)
    return makeError("group size G must be positive, got ", groupSize);
  if (codeBits < 1 || codeBits > 32)
    return makeError("code width must be in [1, 32] bits, got ", codeBits);
  if (scaleBits > 64)
    return makeError("scale width must be in [0, 64] bits, got ", scaleBits);
  if (zeroBits > 64)
    return makeError("zero-point width must be in [0, 64] bits, got ",
                     zeroBits);

  TensorLedger l;
  l.rows = rows;
  l.cols = cols;
  l.groupSize = groupSize;
  l.codeBits = codeBits;
  l.scaleBits = scaleBits;
  l.zeroBits = zeroBits;
  l.groupsPerRow = cols / groupSize + (cols % groupSize != 0 ? 1 : 0);

  const uint64_t n = static_cast<uint64_t>(rows);
  const uint64_t k = static_cast<uint64_t>(cols);
  uint64_t codeStreamBits, rowBits, metaBitsPerGroup, metaBits, scaleStream,
      zeroStream;
  bool overflow =
      mulOverflow(n, k, l.numValues) ||
      mulOverflow(n, static_cast<uint64_t>(l.groupsPerRow), l.numGroups) ||
      mulOverflow(l.numValues, uint64_t(codeBits), codeStreamBits) ||
      mulOverflow(k, uint64_t(codeBits), rowBits) ||
      mulOverflow(l.numGroups, uint64_t(scaleBits), scaleStream) ||
      mulOverflow(l.numGroups, uint64_t(zeroBits), zeroStream);
  metaBitsPerGroup = uint64_t(scaleBits) + zeroBits;
  overflow = overflow || mulOverflow(l.numGroups, metaBitsPerGroup, metaBits) ||
             addOverflow(codeStreamBits, metaBits, l.logicalBits);
  if (!overflow) {
    // Rows are row-bounded: one byte-rounded code row per output row, and
    // one metadata entry per (row, group), never ceil(P / G) (M8.1 0x07).
    l.tightCodeBytes = ceilDiv(codeStreamBits, 8);
    l.scaleBytes = ceilDiv(scaleStream, 8);
    l.zeroBytes = ceilDiv(zeroStream, 8);
    l.metadataBytes = l.scaleBytes + l.zeroBytes; // <= metaBits / 4: no wrap
    overflow =
        mulOverflow(n, ceilDiv(rowBits, 8), l.rowAlignedCodeBytes) ||
        addOverflow(l.tightCodeBytes, l.metadataBytes, l.tightTotalBytes) ||
        addOverflow(l.rowAlignedCodeBytes, l.metadataBytes,
                    l.rowAlignedTotalBytes);
  }
  if (overflow)
    return makeError("ledger for [", rows, ", ", cols, "] with G=", groupSize,
                     " overflows 64-bit counts");
  l.bitsPerValue =
      static_cast<double>(l.logicalBits) / static_cast<double>(l.numValues);
  return l;
}

double effectiveBitsPerValue(unsigned codeBits, double groupSize,
                             unsigned scaleBits, unsigned zeroBits) {
  return static_cast<double>(codeBits) +
         (static_cast<double>(scaleBits) + static_cast<double>(zeroBits)) /
             groupSize;
}

double estimateBytes(double numValues, unsigned codeBits, double groupSize,
                     unsigned scaleBits, unsigned zeroBits) {
  return numValues *
         effectiveBitsPerValue(codeBits, groupSize, scaleBits, zeroBits) / 8.0;
}

Expected<int64_t> maxAccumulationLength(CodeRange a, CodeRange b,
                                        unsigned accumulatorBits) {
  if (accumulatorBits < 2 || accumulatorBits > 64)
    return makeError("signed accumulator width must be in [2, 64] bits, got ",
                     accumulatorBits);
  if (a.qmin > a.qmax || b.qmin > b.qmax)
    return makeError("operand ranges must satisfy qmin <= qmax, got [", a.qmin,
                     ", ", a.qmax, "] and [", b.qmin, ", ", b.qmax, "]");
  const uint64_t limit =
      accumulatorBits == 64
          ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
          : (uint64_t(1) << (accumulatorBits - 1)) - 1;
  uint64_t maxProduct;
  if (mulOverflow(a.maxMagnitude(), b.maxMagnitude(), maxProduct))
    return int64_t(0); // one product already exceeds any int64 accumulator
  if (maxProduct == 0)
    return makeError("operand ranges [", a.qmin, ", ", a.qmax, "] and [",
                     b.qmin, ", ", b.qmax,
                     "] only multiply to 0; the bound is unlimited");
  // Worst case: every product has the maximal magnitude and the same sign.
  return static_cast<int64_t>(limit / maxProduct);
}

} // namespace qtensor
