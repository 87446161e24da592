//===- InjectedFileFaults.h - A FileLayer that fails on purpose -*- C++ -*-===//
//
// The faults a disk and a filesystem really produce, injected under the
// libraries' own I/O (Support/FileIO.h) for files whose path contains a
// chosen part: reads that return fewer bytes than asked, EINTR, EIO at a
// byte offset, ENOSPC after a number of bytes written, a failing fsync, and
// a hook that runs before a file's first read (to truncate or rewrite it
// while the reader holds it open).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TEST_UNITTESTS_INJECTEDFILEFAULTS_H
#define QTENSOR_TEST_UNITTESTS_INJECTEDFILEFAULTS_H

#include "qtensor/Support/FileIO.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>

namespace qtensor::test {

class InjectedFileFaults : public FileLayer {
public:
  /// Faults apply to files whose path contains this; empty: every file.
  std::string pathPart;
  /// A read returns at most this many bytes (0: as many as asked).
  size_t maxRead = 0;
  /// Every other call fails with EINTR before it does anything.
  bool interrupt = false;
  /// A read that would cover this offset returns the bytes before it, and
  /// the read that starts there fails with EIO.
  std::optional<uint64_t> readErrorAt;
  /// Writes fail with ENOSPC once this many bytes were written.
  std::optional<uint64_t> spaceLeft;
  /// fsync fails with EIO.
  bool failFsync = false;
  /// Runs once per file, with its path, before its first read.
  std::function<void(const std::string &path)> beforeFirstRead;

  /// Calls that reached a faulty file, and the bytes written to them.
  std::atomic<uint64_t> faultyCalls{0}, written{0};

  ssize_t pread(int fd, void *buffer, size_t size, uint64_t offset) override {
    std::string path = pathOf(fd);
    if (!applies(path))
      return FileLayer::pread(fd, buffer, size, offset);
    ++faultyCalls;
    if (beforeFirstRead) {
      bool first;
      {
        std::lock_guard<std::mutex> lock(mutex);
        first = firstReads.insert(path).second;
      }
      if (first)
        beforeFirstRead(path);
    }
    if (interrupt && calls++ % 2 == 0) {
      errno = EINTR;
      return -1;
    }
    if (readErrorAt) {
      if (offset >= *readErrorAt && offset < *readErrorAt + 4096) {
        errno = EIO;
        return -1;
      }
      if (offset < *readErrorAt)
        size = size_t(std::min<uint64_t>(size, *readErrorAt - offset));
    }
    if (maxRead)
      size = std::min(size, maxRead);
    return FileLayer::pread(fd, buffer, size, offset);
  }

  ssize_t write(int fd, const void *data, size_t size) override {
    if (!applies(pathOf(fd)))
      return FileLayer::write(fd, data, size);
    ++faultyCalls;
    if (interrupt && calls++ % 2 == 0) {
      errno = EINTR;
      return -1;
    }
    if (spaceLeft) {
      if (*spaceLeft == 0) {
        errno = ENOSPC;
        return -1;
      }
      size = size_t(std::min<uint64_t>(size, *spaceLeft));
      *spaceLeft -= size;
    }
    if (maxRead)
      size = std::min(size, maxRead);
    ssize_t r = FileLayer::write(fd, data, size);
    if (r > 0)
      written += uint64_t(r);
    return r;
  }

  int fsync(int fd) override {
    if (failFsync && applies(pathOf(fd))) {
      ++faultyCalls;
      errno = EIO;
      return -1;
    }
    return FileLayer::fsync(fd);
  }

  /// The path `fd` was opened by (for matching pathPart).
  static std::string pathOf(int fd) {
    char buffer[PATH_MAX];
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = ::readlink(link.c_str(), buffer, sizeof(buffer) - 1);
    return n > 0 ? std::string(buffer, size_t(n)) : std::string();
  }

private:
  bool applies(const std::string &path) const {
    return pathPart.empty() || path.find(pathPart) != std::string::npos;
  }
  std::mutex mutex;
  std::set<std::string> firstReads;
  std::atomic<uint64_t> calls{0};
};

} // namespace qtensor::test

#endif // QTENSOR_TEST_UNITTESTS_INJECTEDFILEFAULTS_H
