//===- MappedFile.h - Read-only memory-mapped file --------------*- C++ -*-===//
//
// Readers hand out lazy views into a mapping instead of copying payloads. The
// file is opened once; its size is taken from fstat on that descriptor, so a
// later rename or truncation of the path cannot change what was validated.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_MAPPEDFILE_H
#define QTENSOR_SUPPORT_MAPPEDFILE_H

#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace qtensor {

class MappedFile {
public:
  /// Maps `path` read-only. A zero-byte file maps to an empty view.
  static Expected<MappedFile> open(const std::string &path);
  /// Maps an already opened descriptor (takes ownership of `fd`), e.g. one
  /// opened with openat(O_NOFOLLOW) under an artifact root.
  static Expected<MappedFile> fromDescriptor(int fd, const std::string &name);

  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  const uint8_t *data() const { return bytes; }
  uint64_t size() const { return length; }
  const std::string &path() const { return name; }

private:
  MappedFile() = default;
  const uint8_t *bytes = nullptr;
  uint64_t length = 0;
  std::string name;
};

/// Drops the pages of [data, data + size) that lie wholly inside the range
/// from this process's resident set (madvise MADV_DONTNEED). Only for
/// read-only file mappings (MappedFile and the views into one): the bytes
/// stay readable and are read from the file again when touched. Streaming
/// passes (hashing, quantizing one tensor after another) call it so that
/// what they have finished with does not stay resident: resident memory
/// then follows the largest tensor, not the model.
void releaseMappedPages(const void *data, size_t size);

} // namespace qtensor

#endif // QTENSOR_SUPPORT_MAPPEDFILE_H
