//===- FileIO.h - Small POSIX I/O helpers with readable errors ---*- C++ -*-===//
#ifndef QTENSOR_SUPPORT_FILEIO_H
#define QTENSOR_SUPPORT_FILEIO_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <string>

namespace qtensor {

/// Writes all `size` bytes to `fd`, retrying on EINTR and short writes.
/// `offset` is the file position of `data` and is advanced by what was
/// written; a failure (ENOSPC, EIO, ...) names `name` and that offset.
Status writeAll(int fd, const uint8_t *data, uint64_t size,
                const std::string &name, uint64_t &offset);

} // namespace qtensor

#endif // QTENSOR_SUPPORT_FILEIO_H
