//===- SafetensorsDType.h - Safetensors element types -----------*- C++ -*-===//
//
// The fifteen byte-addressable element types of the safetensors format (seed
// M8.9 0x02A). The enumerators follow the reference crate's `Dtype` order,
// which is increasing alignment: the writer sorts tensors by descending rank
// so that every payload is naturally aligned once the byte buffer is.
//
// Sub-byte and exotic dtypes of newer format revisions (F4, F6_E2M3, F6_E3M2,
// F8_E8M0, C64) are not in this list and are rejected as unknown.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_SAFETENSORSDTYPE_H
#define QTENSOR_FORMATS_SAFETENSORSDTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace qtensor::safetensors {

enum class DType : uint8_t {
  BOOL, ///< one byte, 0 or 1
  U8,
  I8,
  F8_E5M2, ///< 1-5-2, bias 15, IEEE-like (inf and NaN)
  F8_E4M3, ///< the "FN" variant: 1-4-3, bias 7, no inf, NaN = S.1111.111
  I16,
  U16,
  F16,  ///< IEEE binary16
  BF16, ///< bfloat16 (upper half of a binary32)
  I32,
  U32,
  F32,
  F64,
  I64,
  U64,
};

inline constexpr unsigned kNumDTypes = 15;

/// The spelling used in the header's "dtype" field, e.g. "F8_E4M3".
std::string_view dtypeName(DType type);

/// Parses a header "dtype" string (exact, case-sensitive); nullopt if unknown.
std::optional<DType> parseDType(std::string_view name);

/// Bytes per element: 1, 2, 4 or 8.
unsigned dtypeSize(DType type);

/// Whether the type is a floating-point format (F8_*, F16, BF16, F32, F64).
bool isFloatDType(DType type);

// Bit-exact scalar decoders (every finite input is represented exactly in a
// float; NaN stays NaN with its sign, infinities stay infinite).
float halfToFloat(uint16_t bits);
float bfloat16ToFloat(uint16_t bits);
float f8e4m3fnToFloat(uint8_t bits);
float f8e5m2ToFloat(uint8_t bits);

} // namespace qtensor::safetensors

#endif // QTENSOR_FORMATS_SAFETENSORSDTYPE_H
