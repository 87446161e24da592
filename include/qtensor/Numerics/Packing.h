//===- Packing.h - Sub-byte code packing and unpacking ----------*- C++ -*-===//
//
// Bit-level packing of integer codes (seed M8.1 0x06, M8.9 0x03A). Codes form
// a continuous bit stream, so 3-bit codes straddle byte boundaries. Which end
// of a byte the stream fills first (BitOrder), how signed codes are stored
// (SignedEncoding) and whether each row restarts on a byte boundary
// (RowAlignment) are all part of the artifact ABI: a nibble pack and a
// kernel-specific pack are not interchangeable merely because both say W4.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_PACKING_H
#define QTENSOR_NUMERICS_PACKING_H

#include "qtensor/Numerics/Enums.h"
#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qtensor {

/// Where rows start in the packed stream (M8.9 0x03A).
enum class RowAlignment : uint8_t {
  /// Each row starts on a byte boundary; the last byte of a row is padded
  /// with zero bits. Row-addressable kernels need this.
  Byte,
  /// One tensor-wide bit stream: a row's tail may share a byte with the next
  /// row. Only the final byte of the tensor is padded.
  Tight,
};

/// Bytes one byte-aligned row of `cols` codes needs: ceil(cols * bits / 8).
/// Returns -1 for cols < 0 or bits outside [1, 8]; cannot overflow otherwise.
int64_t packedRowBytes(int64_t cols, unsigned bits);

/// Total packed bytes for a [rows, cols] tensor:
///   Byte:  rows * ceil(cols * bits / 8)
///   Tight: ceil(rows * cols * bits / 8)
/// Errors on negative shapes, bits outside [1, 8] and on overflow.
Expected<uint64_t> packedBytes(int64_t rows, int64_t cols, unsigned bits,
                               RowAlignment alignment);

/// Packs row-major codes into bytes. Supported widths are 1..8 bits (the
/// formats in use are 2, 3, 4 and 8). Stream bit i is bit (i % 8) of byte
/// i / 8 for LsbFirst, and bit 7 - (i % 8) for MsbFirst; each code is written
/// least-significant bit first (LsbFirst) or most-significant bit first
/// (MsbFirst), so 4-bit codes [1, 2, 3] pack to {0x21, 0x03} LsbFirst and
/// {0x12, 0x30} MsbFirst. Unsigned codes must lie in [0, 2^b - 1]; signed
/// codes in [-2^(b-1), 2^(b-1) - 1], stored as two's complement (-1 -> all
/// ones) or offset binary (stored = code + 2^(b-1); the encoding is ignored
/// for unsigned codes). An out-of-range code is an error naming its index.
Expected<std::vector<uint8_t>> packCodes(const int32_t *codes, int64_t rows,
                                         int64_t cols, unsigned bits,
                                         bool isSigned, SignedEncoding encoding,
                                         BitOrder order,
                                         RowAlignment alignment);

/// The inverse of packCodes with the same layout parameters. numBytes must
/// equal packedBytes(rows, cols, bits, alignment) exactly, and padding bits
/// must be zero: the packed bytes may come from an untrusted file
/// (M8.9 0x05), and a layout mismatch should fail loudly rather than decode
/// into plausible codes. Two's-complement codes are sign-extended.
Expected<std::vector<int32_t>>
unpackCodes(const uint8_t *bytes, size_t numBytes, int64_t rows, int64_t cols,
            unsigned bits, bool isSigned, SignedEncoding encoding,
            BitOrder order, RowAlignment alignment);

} // namespace qtensor

#endif // QTENSOR_NUMERICS_PACKING_H
