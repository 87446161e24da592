//===- GGUF.h - Hardened GGUF v2/v3 reader ----------------------*- C++ -*-===//
//
// Reads a GGUF file (ggml's docs/gguf.md) as untrusted input (seed M8.9 0x05A,
// 0x05B): every count, length, shape and offset is checked against the bytes
// that remain and against GGUFLimits before anything is sized from it, and a
// malformed file produces an Error naming the file, the key or tensor, the
// field, its absolute byte offset and what was expected. Nothing throws.
//
// Layout (little-endian only):
//   header   "GGUF" u32 version (2 or 3) u64 tensor_count u64 kv_count
//   kv       string key, u32 value_type, value            (kv_count times)
//   tensors  string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type,
//            u64 offset                                    (tensor_count times)
//   padding  to the alignment A = general.alignment (UINT32, power of two,
//            default 32): data = o + (A - o % A) % A, zero padding when the
//            end o of the tensor infos is already aligned (seed 0x02B)
//   data     tensor i at data + offset_i, offset_i a multiple of A
//
// A file with zero tensors may end before the aligned data start (llama.cpp's
// vocab-only files do); dataSectionOffset() still reports the aligned value.
//
// The reader keeps the file mapped; strings, arrays and tensor bytes are views
// into that mapping and stay valid for the GGUFFile's lifetime (moves
// included).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_GGUF_H
#define QTENSOR_FORMATS_GGUF_H

#include "qtensor/Formats/GGMLTypes.h"
#include "qtensor/Support/Expected.h"
#include "qtensor/Support/MappedFile.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace qtensor {

/// Metadata value types (gguf_metadata_value_type).
enum class GGUFValueType : uint32_t {
  UInt8 = 0,
  Int8 = 1,
  UInt16 = 2,
  Int16 = 3,
  UInt32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  UInt64 = 10,
  Int64 = 11,
  Float64 = 12,
};

/// "UINT8", ..., "FLOAT64" (the spec's spelling); "INVALID" otherwise.
std::string_view ggufValueTypeName(GGUFValueType type);

/// Bounds applied while parsing, on top of "must fit in the file".
struct GGUFLimits {
  uint64_t maxTensorCount = uint64_t(1) << 20;
  uint64_t maxKVCount = uint64_t(1) << 20;
  /// Nesting of ARRAY values: 1 = a plain array, 2 = array of arrays, ...
  uint32_t maxArrayDepth = 8;
  /// Values held in nested arrays (ARRAY elements of ARRAY values) across
  /// the whole file; ggml itself rejects nested arrays altogether.
  uint64_t maxNestedArrayValues = uint64_t(1) << 16;
  uint64_t maxArrayLength = uint64_t(1) << 32;
  uint64_t maxStringBytes = uint64_t(256) << 20;
  uint64_t maxKeyBytes = 65535;     ///< gguf.md: keys are at most 65535 bytes
  uint64_t maxTensorNameBytes = 64; ///< gguf.md: names are at most 64 bytes
  /// Also require ggml's dense layout: tensor i+1 starts exactly at
  /// align(offset_i + bytes_i) in info order, with the first at 0 (the 0x02B
  /// recurrence; what gguf_init_from_file demands). Off by default: gguf.md
  /// only requires aligned offsets, and the reader always rejects overlaps.
  bool requireCanonicalLayout = false;
};

/// A metadata value. Scalars are held by value, strings and numeric arrays as
/// views into the file, string arrays as string_views, nested arrays as
/// child values.
class GGUFValue {
public:
  GGUFValueType type() const { return kind; }
  bool isArray() const { return kind == GGUFValueType::Array; }
  /// Absolute file offset of the value's first byte.
  uint64_t fileOffset() const { return offset; }

  /// Exact-type scalar access: nullopt unless type() is T's GGUF type
  /// (uint8_t UINT8, ..., bool BOOL, float FLOAT32, double FLOAT64,
  /// std::string_view STRING).
  template <typename T> std::optional<T> get() const;

  /// Any integer type (or BOOL) widened to unsigned / signed 64 bits when it
  /// fits; nullopt for other types or values out of range.
  std::optional<uint64_t> asUnsigned() const;
  std::optional<int64_t> asSigned() const;
  /// FLOAT32 or FLOAT64 as double (exact).
  std::optional<double> asDouble() const;

  // Arrays.
  GGUFValueType arrayElementType() const { return elemKind; }
  uint64_t arraySize() const { return count; }
  /// Element i of a numeric or BOOL array, exact type as get<T>().
  template <typename T> std::optional<T> arrayElement(uint64_t i) const;
  /// Element i of an integer array widened as asUnsigned/asSigned.
  std::optional<uint64_t> arrayUnsigned(uint64_t i) const;
  std::optional<int64_t> arraySigned(uint64_t i) const;
  std::optional<double> arrayDouble(uint64_t i) const;
  /// Elements of a STRING array (empty otherwise).
  const std::vector<std::string_view> &arrayStrings() const { return strings; }
  /// Elements of an ARRAY array (empty otherwise).
  const std::vector<GGUFValue> &arrayValues() const { return children; }
  /// Raw little-endian element bytes of a numeric/BOOL array.
  const uint8_t *arrayData() const { return raw; }

private:
  friend class GGUFParser;
  GGUFValueType kind = GGUFValueType::UInt8;
  uint64_t offset = 0;
  uint64_t bits = 0; ///< raw little-endian scalar bits, zero-extended
  std::string_view str;
  GGUFValueType elemKind = GGUFValueType::UInt8;
  uint64_t count = 0;
  const uint8_t *raw = nullptr;
  std::vector<std::string_view> strings;
  std::vector<GGUFValue> children;
};

struct GGUFKeyValue {
  std::string_view key;
  GGUFValue value;
  uint64_t fileOffset; ///< where the key's length field starts
};

struct GGUFTensorInfo {
  std::string_view name;
  GGMLType type;
  std::vector<int64_t> ne; ///< file order: ne[0] is the contiguous row
  uint64_t elementCount;   ///< product of ne (1 for n_dims = 0)
  uint64_t byteSize;       ///< ggml_nbytes
  uint64_t offset;         ///< relative to the data section
  uint64_t absoluteOffset; ///< dataSectionOffset + offset
  const uint8_t *data;     ///< mapping + absoluteOffset
  uint64_t infoOffset;     ///< where this tensor's info record starts
};

class GGUFFile {
public:
  /// Maps and validates `path`.
  static Expected<GGUFFile> open(const std::string &path,
                                 const GGUFLimits &limits = {});
  /// Validates an already mapped file (e.g. one opened with O_NOFOLLOW).
  static Expected<GGUFFile> fromMappedFile(MappedFile file,
                                           const GGUFLimits &limits = {});
  /// Validates bytes the caller owns; they must outlive the GGUFFile. `name`
  /// is used in messages.
  static Expected<GGUFFile> fromBuffer(const uint8_t *data, uint64_t size,
                                       std::string name,
                                       const GGUFLimits &limits = {});

  GGUFFile(GGUFFile &&) noexcept;
  GGUFFile &operator=(GGUFFile &&) noexcept;
  GGUFFile(const GGUFFile &) = delete;
  GGUFFile &operator=(const GGUFFile &) = delete;
  ~GGUFFile();

  const std::string &name() const { return fileName; }
  uint64_t fileSize() const { return size; }
  uint32_t version() const { return ggufVersion; }
  uint64_t alignment() const { return align; }
  /// Aligned end of the tensor infos (may be past EOF when there are no
  /// tensors).
  uint64_t dataSectionOffset() const { return dataOffset; }
  /// Metadata in file order.
  const std::vector<GGUFKeyValue> &metadata() const { return kvs; }
  const GGUFValue *findMetadata(std::string_view key) const;
  /// Tensor infos in file order.
  const std::vector<GGUFTensorInfo> &tensors() const { return infos; }
  const GGUFTensorInfo *findTensor(std::string_view name) const;
  /// True when the tensors follow ggml's dense recurrence (see GGUFLimits).
  bool hasCanonicalLayout() const { return canonical; }

  /// Decodes a tensor of this file to float32 in ggml element order.
  Expected<std::vector<float>> decode(const GGUFTensorInfo &tensor) const;

private:
  friend class GGUFParser;
  GGUFFile() = default;

  std::unique_ptr<MappedFile> mapping; ///< null for fromBuffer
  const uint8_t *bytes = nullptr;
  uint64_t size = 0;
  std::string fileName;
  uint32_t ggufVersion = 0;
  uint64_t align = 32;
  uint64_t dataOffset = 0;
  bool canonical = true;
  std::vector<GGUFKeyValue> kvs;
  std::vector<GGUFTensorInfo> infos;
  std::unordered_map<std::string_view, size_t> kvIndex;
  std::unordered_map<std::string_view, size_t> tensorIndex;
};

// Template definitions.
namespace gguf_detail {
template <typename T> struct ValueTypeOf;
template <> struct ValueTypeOf<uint8_t> {
  static constexpr GGUFValueType value = GGUFValueType::UInt8;
};
template <> struct ValueTypeOf<int8_t> {
  static constexpr GGUFValueType value = GGUFValueType::Int8;
};
template <> struct ValueTypeOf<uint16_t> {
  static constexpr GGUFValueType value = GGUFValueType::UInt16;
};
template <> struct ValueTypeOf<int16_t> {
  static constexpr GGUFValueType value = GGUFValueType::Int16;
};
template <> struct ValueTypeOf<uint32_t> {
  static constexpr GGUFValueType value = GGUFValueType::UInt32;
};
template <> struct ValueTypeOf<int32_t> {
  static constexpr GGUFValueType value = GGUFValueType::Int32;
};
template <> struct ValueTypeOf<float> {
  static constexpr GGUFValueType value = GGUFValueType::Float32;
};
template <> struct ValueTypeOf<bool> {
  static constexpr GGUFValueType value = GGUFValueType::Bool;
};
template <> struct ValueTypeOf<uint64_t> {
  static constexpr GGUFValueType value = GGUFValueType::UInt64;
};
template <> struct ValueTypeOf<int64_t> {
  static constexpr GGUFValueType value = GGUFValueType::Int64;
};
template <> struct ValueTypeOf<double> {
  static constexpr GGUFValueType value = GGUFValueType::Float64;
};

/// Reinterprets zero-extended little-endian scalar bits as T.
template <typename T> T fromBits(uint64_t bits) {
  if constexpr (std::is_same_v<T, bool>) {
    return bits != 0;
  } else {
    T v;
    static_assert(sizeof(T) <= sizeof(uint64_t));
    if constexpr (sizeof(T) == 1) {
      uint8_t b = static_cast<uint8_t>(bits);
      std::memcpy(&v, &b, 1);
    } else if constexpr (sizeof(T) == 2) {
      uint16_t b = static_cast<uint16_t>(bits);
      std::memcpy(&v, &b, 2);
    } else if constexpr (sizeof(T) == 4) {
      uint32_t b = static_cast<uint32_t>(bits);
      std::memcpy(&v, &b, 4);
    } else {
      std::memcpy(&v, &bits, 8);
    }
    return v;
  }
}

/// Size in bytes of a fixed-size GGUF value type, 0 for STRING/ARRAY.
uint32_t scalarSize(GGUFValueType type);
/// Little-endian bits of element i of a raw numeric array.
uint64_t loadBits(const uint8_t *raw, uint32_t elemSize, uint64_t i);
} // namespace gguf_detail

template <>
inline std::optional<std::string_view>
GGUFValue::get<std::string_view>() const {
  if (kind != GGUFValueType::String)
    return std::nullopt;
  return str;
}

template <typename T> std::optional<T> GGUFValue::get() const {
  if (kind != gguf_detail::ValueTypeOf<T>::value)
    return std::nullopt;
  return gguf_detail::fromBits<T>(bits);
}

template <typename T>
std::optional<T> GGUFValue::arrayElement(uint64_t i) const {
  if (kind != GGUFValueType::Array ||
      elemKind != gguf_detail::ValueTypeOf<T>::value || i >= count || !raw)
    return std::nullopt;
  return gguf_detail::fromBits<T>(gguf_detail::loadBits(raw, sizeof(T), i));
}

} // namespace qtensor

#endif // QTENSOR_FORMATS_GGUF_H
