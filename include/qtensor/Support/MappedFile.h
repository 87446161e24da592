//===- MappedFile.h - A file's bytes: mapped, or read into memory -*- C++ -*-===//
//
// Readers hand out lazy views into a MappedFile instead of copying payloads.
// The file is opened once; its size is taken from fstat on that descriptor,
// so a later rename of the path cannot change what was validated.
//
// Two forms, one interface:
//  - open/fromDescriptor map the file (MAP_PRIVATE, read-only): nothing is
//    copied, pages come and go with the page cache. A file truncated while
//    mapped makes the next access to a lost page raise SIGBUS, and a file
//    rewritten in place shows its new bytes: mapping is for files nobody
//    changes while they are in use (the compiler's inputs, the ladder's
//    streaming reads). installMappedFileFaultHandler turns such a SIGBUS
//    into an error that names the file and offset, instead of a crash.
//  - readCopy reads the file (through fileLayer(), FileIO.h) into private
//    read-only memory, letting the caller see each chunk as it arrives (to
//    hash it): the bytes checked are the bytes kept, and nothing done to
//    the file afterwards reaches them. The runtime loads this way.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_MAPPEDFILE_H
#define QTENSOR_SUPPORT_MAPPEDFILE_H

#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace qtensor {

class MappedFile {
public:
  /// Maps `path` read-only. A zero-byte file maps to an empty view.
  static Expected<MappedFile> open(const std::string &path);
  /// Maps an already opened descriptor (takes ownership of `fd`), e.g. one
  /// opened with openat(O_NOFOLLOW) under an artifact root.
  static Expected<MappedFile> fromDescriptor(int fd, const std::string &name);
  /// Reads the first `size` bytes of `fd` (which it closes) into private
  /// memory, calling `onChunk` on each chunk as soon as it is read. The
  /// memory is made read-only once filled. Fails, naming `name`, when the
  /// memory cannot be had (e.g. under RLIMIT_AS), on an I/O error, when the
  /// file ends early, or when `onChunk` fails.
  static Expected<MappedFile>
  readCopy(int fd, const std::string &name, uint64_t size,
           const std::function<Status(const uint8_t *, size_t)> &onChunk = {});

  /// readCopy split into `pieceBytes`-long pieces (the last may be
  /// shorter) read on every thread of the default pool at once: the thread
  /// that reads a piece calls `onChunk(piece, data, n)` on each of its
  /// chunks in order, as soon as it is read (to hash the piece where it is
  /// still in cache). The first failing piece's error is returned. From
  /// inside a loop of the pool the pieces run one after another.
  static Expected<MappedFile> readCopyInPieces(
      int fd, const std::string &name, uint64_t size, uint64_t pieceBytes,
      const std::function<Status(size_t, const uint8_t *, size_t)> &onChunk);

  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  const uint8_t *data() const { return bytes; }
  uint64_t size() const { return length; }
  const std::string &path() const { return name; }
  /// True for a file mapping, false for a copy read by readCopy.
  bool mapsFile() const { return fileBacked; }

private:
  MappedFile() = default;
  /// Writable anonymous memory of `size` bytes for readCopy to fill.
  static Expected<MappedFile> allocateCopy(const std::string &name,
                                           uint64_t size);
  /// Makes a filled copy read-only.
  Status sealCopy();
  void release();
  const uint8_t *bytes = nullptr;
  uint64_t length = 0;
  std::string name;
  bool fileBacked = false;
};

/// Drops the pages of [data, data + size) that lie wholly inside the range
/// from this process's resident set (madvise MADV_DONTNEED). Streaming
/// passes (hashing, quantizing one tensor after another) call it so that
/// what they have finished with does not stay resident: resident memory
/// then follows the largest tensor, not the model. It acts only inside a
/// live file mapping of a MappedFile, where the bytes stay readable and
/// are read from the file again when touched; anywhere else (a readCopy,
/// the heap) it does nothing, since there the advice would zero the bytes.
void releaseMappedPages(const void *data, size_t size);

/// Installs a SIGBUS handler for the process: a fault inside a live file
/// mapping of a MappedFile (the file was truncated, or its storage failed,
/// after it was mapped) prints "<program>: error: <file>: ..." with the
/// byte offset to stderr and ends the process with exit status
/// kMappedFileFaultExitCode; any other SIGBUS keeps its default action.
/// For programs (qtc); a library never installs signal handlers.
void installMappedFileFaultHandler(const char *program);
inline constexpr int kMappedFileFaultExitCode = 74; // EX_IOERR

} // namespace qtensor

#endif // QTENSOR_SUPPORT_MAPPEDFILE_H
