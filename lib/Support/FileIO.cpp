//===- FileIO.cpp - Small POSIX I/O helpers with readable errors ----------===//

#include "qtensor/Support/FileIO.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtensor;

FileLayer::~FileLayer() = default;

ssize_t FileLayer::pread(int fd, void *buffer, size_t size, uint64_t offset) {
  return ::pread(fd, buffer, size, static_cast<off_t>(offset));
}

ssize_t FileLayer::write(int fd, const void *data, size_t size) {
  return ::write(fd, data, size);
}

int FileLayer::fsync(int fd) { return ::fsync(fd); }

namespace {
FileLayer posixLayer;
std::atomic<FileLayer *> currentLayer{&posixLayer};
} // namespace

FileLayer &qtensor::fileLayer() { return *currentLayer.load(); }

ScopedFileLayer::ScopedFileLayer(FileLayer &layer)
    : previous(currentLayer.exchange(&layer)) {}

ScopedFileLayer::~ScopedFileLayer() { currentLayer.store(previous); }

Status qtensor::readAll(int fd, uint8_t *out, uint64_t size, uint64_t offset,
                        const std::string &name) {
  FileLayer &io = fileLayer();
  const uint64_t end = offset + size;
  while (offset < end) {
    // One read() moves at most ~2 GiB on Linux; ask for 1 GiB at a time.
    size_t chunk =
        static_cast<size_t>(std::min<uint64_t>(end - offset, 1u << 30));
    ssize_t r = io.pread(fd, out, chunk, offset);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return makeError(name, ": read failed at byte offset ", offset, ": ",
                       std::strerror(errno));
    }
    if (r == 0)
      return makeError(name, ": the file ends at byte ", offset, ", but ", end,
                       " bytes were expected (was it truncated?)");
    out += r;
    offset += static_cast<uint64_t>(r);
  }
  return Status::ok();
}

Status qtensor::writeAll(int fd, const uint8_t *data, uint64_t size,
                         const std::string &name, uint64_t &offset) {
  while (size > 0) {
    // One write() moves at most ~2 GiB on Linux; ask for 1 GiB at a time.
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, 1u << 30));
    ssize_t r = fileLayer().write(fd, data, chunk);
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

Status qtensor::writeFileAtomically(const std::string &path,
                                    std::string_view data) {
  return writeFileAtomicallyWith(path, [&](int fd, uint64_t &offset) {
    return writeAll(fd, reinterpret_cast<const uint8_t *>(data.data()),
                    data.size(), path, offset);
  });
}

Status qtensor::writeFileAtomicallyWith(
    const std::string &path,
    const std::function<Status(int fd, uint64_t &offset)> &write) {
  if (path.empty())
    return makeError("cannot write a file with an empty path");
  std::string temp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0)
    return makeError(path, ": cannot create a temporary file next to it: ",
                     std::strerror(errno));
  auto fail = [&](Error err) -> Status {
    if (fd >= 0)
      ::close(fd);
    ::unlink(temp.c_str());
    return err;
  };
  // mkstemp creates 0600; a trace or report is an ordinary readable file.
  if (::fchmod(fd, 0644) != 0)
    return fail(
        makeError(path, ": cannot set permissions: ", std::strerror(errno)));
  uint64_t offset = 0;
  if (Status s = write(fd, offset); !s)
    return fail(s.error());
  if (fileLayer().fsync(fd) != 0)
    return fail(makeError(path, ": fsync failed: ", std::strerror(errno)));
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0)
    return fail(makeError(path, ": close failed: ", std::strerror(errno)));
  if (::rename(temp.c_str(), path.c_str()) != 0)
    return fail(makeError(path,
                          ": cannot rename the temporary file into "
                          "place: ",
                          std::strerror(errno)));
  return Status::ok();
}
