//===- FileIO.cpp - Small POSIX I/O helpers with readable errors ----------===//

#include "qtensor/Support/FileIO.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace qtensor;

Status qtensor::writeAll(int fd, const uint8_t *data, uint64_t size,
                         const std::string &name, uint64_t &offset) {
  while (size > 0) {
    // One write() moves at most ~2 GiB on Linux; ask for 1 GiB at a time.
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, 1u << 30));
    ssize_t r = ::write(fd, data, chunk);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return makeError(name, ": write failed at byte offset ", offset, ": ",
                       std::strerror(errno));
    }
    if (r == 0)
      return makeError(name, ": write made no progress at byte offset ",
                       offset);
    data += r;
    size -= static_cast<uint64_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return Status::ok();
}
