//===- FileIO.h - Small POSIX I/O helpers with readable errors --*- C++ -*-===//
#ifndef QTENSOR_SUPPORT_FILEIO_H
#define QTENSOR_SUPPORT_FILEIO_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace qtensor {

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
