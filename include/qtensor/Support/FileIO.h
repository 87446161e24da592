//===- FileIO.h - Small POSIX I/O helpers with readable errors --*- C++ -*-===//
//
// Every read and write of a file's contents in the libraries goes through
// one FileLayer: the POSIX calls, or, in a test, a layer that injects short
// reads, EINTR, EIO or ENOSPC at a chosen file and offset (ScopedFileLayer),
// so that the loader's and the writers' handling of each fault is tested on
// the real code paths.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_FILEIO_H
#define QTENSOR_SUPPORT_FILEIO_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace qtensor {

/// The system calls that move file contents. Each returns what the POSIX
/// call returns and sets errno the same way.
class FileLayer {
public:
  virtual ~FileLayer();
  virtual ssize_t pread(int fd, void *buffer, size_t size, uint64_t offset);
  virtual ssize_t write(int fd, const void *data, size_t size);
  virtual int fsync(int fd);
};

/// The layer in use: the POSIX one unless a ScopedFileLayer is alive.
FileLayer &fileLayer();

/// Installs `layer` for the process until destroyed (tests). Not nested
/// across threads: install it before the code under test starts threads.
class ScopedFileLayer {
public:
  explicit ScopedFileLayer(FileLayer &layer);
  ~ScopedFileLayer();
  ScopedFileLayer(const ScopedFileLayer &) = delete;
  ScopedFileLayer &operator=(const ScopedFileLayer &) = delete;

private:
  FileLayer *previous;
};

/// Reads exactly `size` bytes of `fd` at `offset` into `out`, retrying on
/// EINTR and short reads. An I/O error names `name`, the byte offset and
/// the system's reason; a file that ends early says where it ended and how
/// many bytes were expected.
Status readAll(int fd, uint8_t *out, uint64_t size, uint64_t offset,
               const std::string &name);

/// Writes all `size` bytes to `fd`, retrying on EINTR and short writes.
/// `offset` is the file position of `data` and is advanced by what was
/// written; a failure (ENOSPC, EIO, ...) names `name` and that offset.
Status writeAll(int fd, const uint8_t *data, uint64_t size,
                const std::string &name, uint64_t &offset);

/// Replaces `path` with `data` atomically: writes a temporary file beside
/// it, syncs, and renames it over `path`, so a reader sees the old file or
/// the whole new one. Errors name `path` and the system's reason.
Status writeFileAtomically(const std::string &path, std::string_view data);

/// The same for a file too large to hold: `write` streams it into the
/// temporary file's descriptor (with writeAll and `offset`); if it fails,
/// the temporary file is removed and `path` is untouched.
Status writeFileAtomicallyWith(
    const std::string &path,
    const std::function<Status(int fd, uint64_t &offset)> &write);

} // namespace qtensor

#endif // QTENSOR_SUPPORT_FILEIO_H
