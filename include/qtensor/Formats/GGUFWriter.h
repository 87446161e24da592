//===- GGUFWriter.h - Writing GGUF files ----------------------*- C++ -*-===//
//
// GGUF v3 files. writeMetadataOnlyGGUF copies metadata key by key from
// another file, with no tensors: the artifact carries its tokenizer this
// way, so the runtime builds it with the same hardened reader and the same
// Tokenizer::fromGGUF as the compiler did (llama.cpp's vocab-only files
// have the same shape). GGUFFileWriter writes a whole model: metadata set
// or copied, then tensors aligned to 32 bytes (general.alignment's
// default), each produced when its turn comes so memory stays at one
// tensor, the file published atomically.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_GGUFWRITER_H
#define QTENSOR_FORMATS_GGUFWRITER_H

#include "qtensor/Formats/GGMLTypes.h"
#include "qtensor/Formats/GGUF.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qtensor {

/// The bytes of a GGUF v3 file with no tensors whose metadata are the keys
/// of `source` that start with `prefix`, in file order, values copied
/// exactly. Nested arrays are refused (no key the runtime reads has one).
Expected<std::vector<uint8_t>> writeMetadataOnlyGGUF(const GGUFFile &source,
                                                     std::string_view prefix);

/// One tensor of a GGUF file being written; `bytes` is called when the
/// file is written and must return exactly the type's bytes for `ne`.
struct GGUFTensorToWrite {
  std::string name;
  GGMLType type = GGMLType::F32;
  std::vector<uint64_t> ne; ///< ne[0] fastest, as GGUF stores it
  std::function<Expected<std::vector<uint8_t>>()> bytes;
};

class GGUFFileWriter {
public:
  void setString(const std::string &key, std::string_view value);
  void setUInt32(const std::string &key, uint32_t value);
  void setFloat32(const std::string &key, float value);
  void setBool(const std::string &key, bool value);
  void setStringArray(const std::string &key,
                      const std::vector<std::string> &values);
  void setFloat32Array(const std::string &key,
                       const std::vector<float> &values);
  void setInt32Array(const std::string &key,
                     const std::vector<int32_t> &values);
  /// The metadata set so far as a whole GGUF file with no tensors (a
  /// vocab-only file); an error if a tensor was added or a key set twice.
  Expected<std::vector<uint8_t>> metadataOnlyBytes() const;
  /// Copies every key of `source` that starts with `prefix`.
  Status copyMetadata(const GGUFFile &source, std::string_view prefix);
  /// Refuses a duplicate or over-long name (64 bytes), a rank above 4,
  /// and an ne[0] that is not a whole number of the type's blocks.
  Status addTensor(GGUFTensorToWrite tensor);
  /// Writes the file to `path` atomically; a tensor whose bytes fail or
  /// have the wrong size leaves `path` untouched.
  Status write(const std::string &path) const;
  /// Bytes of the tensor data section once written.
  uint64_t dataBytes() const;

private:
  std::vector<std::pair<std::string, std::vector<uint8_t>>> metadata;
  std::vector<GGUFTensorToWrite> tensors;
  std::vector<uint64_t> sizes;
};

} // namespace qtensor

#endif // QTENSOR_FORMATS_GGUFWRITER_H
