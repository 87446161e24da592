//===- Packing.cpp - Sub-byte code packing and unpacking ------------------===//
//
// A plain bit-stream packer (seed M8.1 0x06, M8.9 0x03A): slow and explicit,
// so it can serve as the pack/unpack parity oracle of M8.9 0x09B.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/Packing.h"

#include "NumericsDetail.h"

#include <limits>
#include <string>

namespace qtensor {

using numerics_detail::ceilDiv;
using numerics_detail::mulOverflow;

namespace {

Status validateBits(unsigned bits) {
  if (bits < 1 || bits > 8)
    return makeError("packed code width must be in [1, 8] bits, got ", bits);
  return Status::ok();
}

/// Bit position where row `row` starts in the stream.
uint64_t rowStartBit(int64_t row, int64_t cols, unsigned bits,
                     RowAlignment alignment) {
  if (alignment == RowAlignment::Byte)
    return static_cast<uint64_t>(row) *
           static_cast<uint64_t>(packedRowBytes(cols, bits)) * 8;
  return static_cast<uint64_t>(row) * static_cast<uint64_t>(cols) * bits;
}

/// Stream bit i lives in byte i / 8, at bit i % 8 (LsbFirst) or 7 - i % 8
/// (MsbFirst).
unsigned bitShift(uint64_t position, BitOrder order) {
  unsigned inByte = static_cast<unsigned>(position % 8);
  return order == BitOrder::LsbFirst ? inByte : 7 - inByte;
}

void writeField(std::vector<uint8_t> &bytes, uint64_t position, uint32_t field,
                unsigned bits, BitOrder order) {
  for (unsigned j = 0; j < bits; ++j) {
    // LsbFirst streams a code from its least significant bit, MsbFirst from
    // its most significant bit, so both orders keep a code's bits contiguous.
    unsigned source = order == BitOrder::LsbFirst ? j : bits - 1 - j;
    uint64_t at = position + j;
    if ((field >> source) & 1u)
      bytes[at / 8] |= static_cast<uint8_t>(1u << bitShift(at, order));
  }
}

uint32_t readField(const uint8_t *bytes, uint64_t position, unsigned bits,
                   BitOrder order) {
  uint32_t field = 0;
  for (unsigned j = 0; j < bits; ++j) {
    unsigned target = order == BitOrder::LsbFirst ? j : bits - 1 - j;
    uint64_t at = position + j;
    if ((bytes[at / 8] >> bitShift(at, order)) & 1u)
      field |= 1u << target;
  }
  return field;
}

/// True when every stream bit in [begin, end) is zero.
bool paddingIsZero(const uint8_t *bytes, uint64_t begin, uint64_t end,
                   BitOrder order) {
  for (uint64_t at = begin; at < end; ++at)
    if ((bytes[at / 8] >> bitShift(at, order)) & 1u)
      return false;
  return true;
}

std::string rangeName(unsigned bits, bool isSigned) {
  return std::string(isSigned ? "signed " : "unsigned ") +
         std::to_string(bits) + "-bit";
}

} // namespace

int64_t packedRowBytes(int64_t cols, unsigned bits) {
  if (cols < 0 || bits < 1 || bits > 8)
    return -1;
  // (cols / 8) * bits + ceil((cols % 8) * bits / 8) == ceil(cols * bits / 8)
  // without ever forming cols * bits.
  return (cols / 8) * static_cast<int64_t>(bits) +
         static_cast<int64_t>(
             ceilDiv(static_cast<uint64_t>(cols % 8) * bits, 8));
}

Expected<uint64_t> packedBytes(int64_t rows, int64_t cols, unsigned bits,
                               RowAlignment alignment) {
  if (Status status = validateBits(bits); !status)
    return status.error();
  if (rows < 0 || cols < 0)
    return makeError("packed tensor shape [", rows, ", ", cols,
                     "] must be nonnegative");
  uint64_t total;
  if (alignment == RowAlignment::Byte) {
    if (mulOverflow(static_cast<uint64_t>(rows),
                    static_cast<uint64_t>(packedRowBytes(cols, bits)), total))
      return makeError("packed size of [", rows, ", ", cols, "] at ", bits,
                       " bits overflows");
  } else {
    uint64_t elements, streamBits;
    if (mulOverflow(static_cast<uint64_t>(rows), static_cast<uint64_t>(cols),
                    elements) ||
        mulOverflow(elements, static_cast<uint64_t>(bits), streamBits))
      return makeError("packed size of [", rows, ", ", cols, "] at ", bits,
                       " bits overflows");
    total = ceilDiv(streamBits, 8);
  }
  // Every stream bit index must stay representable as well.
  if (total > std::numeric_limits<uint64_t>::max() / 8 ||
      total > std::numeric_limits<size_t>::max())
    return makeError("packed size of [", rows, ", ", cols, "] at ", bits,
                     " bits overflows");
  return total;
}

Expected<std::vector<uint8_t>> packCodes(const int32_t *codes, int64_t rows,
                                         int64_t cols, unsigned bits,
                                         bool isSigned, SignedEncoding encoding,
                                         BitOrder order,
                                         RowAlignment alignment) {
  Expected<uint64_t> size = packedBytes(rows, cols, bits, alignment);
  if (!size)
    return size.error();
  if (!codes && rows > 0 && cols > 0)
    return makeError("code pointer is null for a [", rows, ", ", cols,
                     "] tensor");

  const int64_t lo = isSigned ? -(int64_t(1) << (bits - 1)) : 0;
  const int64_t hi =
      isSigned ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
  const uint32_t mask = (uint32_t(1) << bits) - 1;

  std::vector<uint8_t> bytes(static_cast<size_t>(*size), 0);
  for (int64_t r = 0; r < rows; ++r) {
    uint64_t position = rowStartBit(r, cols, bits, alignment);
    for (int64_t c = 0; c < cols; ++c, position += bits) {
      const int64_t index = r * cols + c;
      const int64_t code = codes[index];
      if (code < lo || code > hi)
        return makeError("code at index ", index, " (row ", r, ", column ", c,
                         ") is ", code, ", outside the ",
                         rangeName(bits, isSigned), " range [", lo, ", ", hi,
                         "]");
      uint32_t field;
      if (isSigned && encoding == SignedEncoding::OffsetBinary)
        field = static_cast<uint32_t>(code - lo); // code + 2^(b-1)
      else
        field = static_cast<uint32_t>(code) & mask; // two's complement
      writeField(bytes, position, field, bits, order);
    }
  }
  return bytes;
}

Expected<std::vector<int32_t>>
unpackCodes(const uint8_t *bytes, size_t numBytes, int64_t rows, int64_t cols,
            unsigned bits, bool isSigned, SignedEncoding encoding,
            BitOrder order, RowAlignment alignment) {
  Expected<uint64_t> size = packedBytes(rows, cols, bits, alignment);
  if (!size)
    return size.error();
  if (numBytes != *size)
    return makeError("packed buffer holds ", numBytes, " bytes, but [", rows,
                     ", ", cols, "] ", rangeName(bits, isSigned), " codes (",
                     alignment == RowAlignment::Byte ? "byte-aligned rows"
                                                     : "tight stream",
                     ") need exactly ", *size);
  if (!bytes && numBytes > 0)
    return makeError("packed buffer pointer is null");
  uint64_t elements = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
  if (elements > std::numeric_limits<size_t>::max() / sizeof(int32_t))
    return makeError("unpacked tensor [", rows, ", ", cols, "] is too large");

  const uint32_t signBit = uint32_t(1) << (bits - 1);
  std::vector<int32_t> codes(static_cast<size_t>(elements));
  // No codes, nothing to read (and no per-row loop over 2^62 empty rows).
  if (elements == 0)
    return codes;
  for (int64_t r = 0; r < rows; ++r) {
    uint64_t position = rowStartBit(r, cols, bits, alignment);
    for (int64_t c = 0; c < cols; ++c, position += bits) {
      uint32_t field = readField(bytes, position, bits, order);
      int64_t code = field;
      if (isSigned) {
        if (encoding == SignedEncoding::OffsetBinary)
          code = int64_t(field) - int64_t(signBit);
        else if (field & signBit) // sign-extend two's complement
          code = int64_t(field) - (int64_t(1) << bits);
      }
      codes[static_cast<size_t>(r * cols + c)] = static_cast<int32_t>(code);
    }
    if (alignment == RowAlignment::Byte) {
      uint64_t end = rowStartBit(r + 1, cols, bits, alignment);
      if (!paddingIsZero(bytes, position, end, order))
        return makeError("row ", r, " has nonzero padding bits after its ",
                         cols, " codes");
    }
  }
  if (alignment == RowAlignment::Tight &&
      !paddingIsZero(bytes, elements * bits, numBytes * 8, order))
    return makeError("nonzero padding bits after the last of ", elements,
                     " codes");
  return codes;
}

} // namespace qtensor
