//===- Safetensors.h - Hardened safetensors reader and writer ---*- C++ -*-===//
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// UTF-8 JSON, then one byte buffer that the header's tensors tile exactly
// (seed M8.9 0x02A). Every byte of it is untrusted (0x05A, 0x05B): the reader
// validates the whole header before it exposes anything, never sizes an
// allocation from an unchecked field, and never throws.
//
// Rules enforced by SafetensorsFile::open (each failure is one Error whose
// message names the file, the tensor when there is one, the field or the
// absolute byte offset, and what was expected):
//
//  - the file holds at least the 8-byte prefix; 0 < N <= Limits::maxHeaderBytes
//    (default 100,000,000, the reference crate's MAX_HEADER_SIZE) and
//    N <= file size - 8;
//  - the header begins with '{' (leading whitespace is rejected: the format
//    says MUST, although the reference crate 0.5 does not check it), is valid
//    UTF-8 (no overlongs, surrogates or code points above U+10FFFF), holds no
//    NUL byte, and is one JSON object; trailing whitespace is allowed (the
//    writers pad with spaces), anything else after the object is not;
//  - no object has a duplicate key (the top level, a tensor entry,
//    __metadata__), nothing nests deeper than the schema (3 levels);
//  - "__metadata__", when present, is an object of string -> string with at
//    most Limits::maxMetadataEntries entries;
//  - every other key is a tensor (the empty name is allowed) whose value is an
//    object with exactly "dtype" (one of the 15 DType spellings), "shape" (an
//    array of at most Limits::maxRank integers in [0, 2^63 - 1]; [] is a
//    rank-0 scalar) and "data_offsets" ([begin, end], integers, begin <= end);
//    at most Limits::maxTensors tensors;
//  - dtype size x product(shape) == end - begin, computed with overflow
//    checks (an overflow is an error, not a wrap);
//  - every interval lies inside the byte buffer, and sorted by (begin, end)
//    the intervals tile the buffer exactly: the first begins at 0, each begins
//    where the previous ended (no overlap, no hole), the last ends at the
//    buffer's end (no trailing bytes). Zero-sized tensors may sit anywhere on
//    the tiling, including several at one offset.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_SAFETENSORS_H
#define QTENSOR_FORMATS_SAFETENSORS_H

#include "qtensor/Formats/SafetensorsDType.h"
#include "qtensor/Support/Expected.h"
#include "qtensor/Support/MappedFile.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor::safetensors {

/// Resource limits applied while reading (and by the writer, so that it never
/// produces a file that a reader with the same limits rejects).
struct Limits {
  /// Largest accepted header length N (the reference crate's MAX_HEADER_SIZE).
  uint64_t maxHeaderBytes = 100'000'000;
  /// Most tensors in one file.
  uint64_t maxTensors = 1u << 20;
  /// Most dimensions of one shape. 32 is NumPy 1.x's NPY_MAXDIMS, so every
  /// array NumPy or PyTorch can save is accepted.
  uint64_t maxRank = 32;
  /// Most entries in __metadata__.
  uint64_t maxMetadataEntries = 1u << 16;
};

/// A validated tensor: its header entry plus a pointer into the mapping. Views
/// are created at open time without copying payloads; `data` stays valid as
/// long as the SafetensorsFile (or its moved-to successor) lives.
struct TensorView {
  std::string name;
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;   ///< data_offsets, relative to the byte buffer
  const uint8_t *data = nullptr; ///< first payload byte
  uint64_t bufferOffset = 0;     ///< absolute file offset of the byte buffer

  /// Absolute file position of the first payload byte.
  uint64_t absoluteOffset() const { return bufferOffset + begin; }
  uint64_t byteSize() const { return end - begin; }
  /// product(shape) (1 for a rank-0 scalar); fits: validated at open.
  uint64_t elementCount() const;
};

class SafetensorsFile {
public:
  /// Maps and validates `path` (see the rules above).
  static Expected<SafetensorsFile> open(const std::string &path,
                                        const Limits &limits = Limits());
  /// Validates an already mapped file; error messages use `file.path()`.
  static Expected<SafetensorsFile>
  fromMappedFile(MappedFile file, const Limits &limits = Limits());

  SafetensorsFile(SafetensorsFile &&) = default;
  SafetensorsFile &operator=(SafetensorsFile &&) = default;

  const std::string &path() const { return file.path(); }
  uint64_t fileSize() const { return file.size(); }
  /// N, the header's declared length (including any padding).
  uint64_t headerLength() const { return headerLen; }
  /// 8 + N: absolute offset of the byte buffer.
  uint64_t bufferOffset() const { return 8 + headerLen; }
  uint64_t bufferSize() const { return file.size() - 8 - headerLen; }

  /// Every tensor in data order (by begin, then end, then name).
  const std::vector<TensorView> &tensors() const { return views; }
  size_t size() const { return views.size(); }
  /// The tensor named `name`, or nullptr.
  const TensorView *find(std::string_view name) const;
  /// The tensor named `name`, or an error naming the file and the tensor.
  Expected<const TensorView *> get(std::string_view name) const;

  /// The __metadata__ map (empty when absent).
  const std::map<std::string, std::string> &metadata() const { return meta; }
  /// Whether the header had a __metadata__ entry at all.
  bool hasMetadata() const { return metaPresent; }

private:
  SafetensorsFile(MappedFile file) : file(std::move(file)) {}
  MappedFile file;
  uint64_t headerLen = 0;
  std::vector<TensorView> views;
  std::map<std::string, size_t, std::less<>> byName;
  std::map<std::string, std::string> meta;
  bool metaPresent = false;
};

/// Every element of `view` as float, in storage order. F16, BF16, F8_E4M3
/// (FN) and F8_E5M2 convert exactly; F64 and integers wider than 24 bits round
/// to nearest; BOOL gives 0 or 1 (any other byte is an error naming its
/// absolute offset). The view must be consistent (byteSize == elements x size).
Expected<std::vector<float>> toFloat32(const TensorView &view);
/// As toFloat32 but to double: exact for every dtype except I64/U64 values
/// beyond 2^53.
Expected<std::vector<double>> toFloat64(const TensorView &view);
/// Element `i` of a float tensor (F8_*, F16, BF16, F32, F64) as float,
/// decoded as toFloat32 decodes it; NaN for any other dtype. For readers
/// that index qparams one at a time: `i` is not checked, the caller's
/// validated shape bounds it.
float floatAt(const TensorView &view, uint64_t i);

/// Builds a safetensors file the way the reference writer does: tensors sorted
/// by descending dtype alignment then name, laid out back to back from offset
/// 0 (no holes), header = compact JSON ("__metadata__" first with keys sorted,
/// then the tensors in data order, fields dtype/shape/data_offsets) padded
/// with spaces so that 8 + N is a multiple of the buffer alignment.
///
/// Buffer alignment: the default 8 matches the reference crate byte for byte.
/// A larger power of two (kPageSize for mmap-friendly files) pads the header so
/// that the byte buffer starts on that boundary. Individual tensors are not
/// page-aligned: padding between payloads would be a hole, which the format
/// forbids and SafetensorsFile rejects; the descending-alignment order already
/// aligns every payload to its element size.
class SafetensorsWriter {
public:
  static constexpr uint64_t kPageSize = 4096;

  struct Options {
    /// Alignment of 8 + N: a power of two, at least 8.
    uint64_t bufferAlignment = 8;
    /// The output must pass a reader with these limits.
    Limits limits;
  };

  SafetensorsWriter() = default;
  explicit SafetensorsWriter(Options options) : opts(options) {}

  /// Adds a tensor that owns its bytes. Fails (and adds nothing) on a
  /// duplicate or reserved name, invalid UTF-8, a negative dimension, a rank
  /// above the limit, or size != elements x dtype size.
  Status addTensor(std::string name, DType dtype, std::vector<int64_t> shape,
                   std::vector<uint8_t> bytes);
  /// Adds a tensor whose `size` bytes at `data` must outlive every write call.
  Status addTensorRef(std::string name, DType dtype, std::vector<int64_t> shape,
                      const uint8_t *data, uint64_t size);
  /// Adds a view of another file (borrowed, like addTensorRef).
  Status addTensor(const TensorView &view);
  /// Writes a tensor's `size` bytes into `out` when write() reaches it.
  using Fill = std::function<Status(uint8_t *out, uint64_t size)>;
  /// Adds a tensor whose bytes are produced during write() by `fill`, for
  /// payloads too large to hold at once: write() keeps one such tensor in a
  /// buffer at a time. `fill` must give the same bytes on every call.
  Status addTensorFill(std::string name, DType dtype,
                       std::vector<int64_t> shape, uint64_t size, Fill fill);
  /// Sets one __metadata__ entry (replacing an earlier value for `key`).
  Status setMetadata(std::string key, std::string value);

  size_t tensorCount() const { return entries.size(); }

  /// The padded header JSON (N bytes, without the length prefix).
  Expected<std::string> header() const;
  /// Total file size that write() would produce.
  Expected<uint64_t> fileSize() const;
  /// Writes the whole file at `fd`'s current position; returns the bytes
  /// written. `name` is used in error messages. Errors (ENOSPC, EIO...) name
  /// the byte offset at which the write failed.
  Expected<uint64_t> write(int fd, const std::string &name = "") const;
  /// Writes `path` atomically: a temporary file in the same directory, fsync,
  /// rename. On failure the temporary is removed and `path` is untouched.
  Expected<uint64_t> writeFile(const std::string &path) const;

private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> owned;
    const uint8_t *data;
    uint64_t size;
    Fill fill = nullptr; ///< set when data is produced during write()
  };
  Status checkNewTensor(const std::string &name, DType dtype,
                        const std::vector<int64_t> &shape, uint64_t size) const;
  std::vector<const Entry *> ordered() const;

  Options opts;
  std::vector<Entry> entries;
  std::map<std::string, std::string> meta;
};

} // namespace qtensor::safetensors

#endif // QTENSOR_FORMATS_SAFETENSORS_H
