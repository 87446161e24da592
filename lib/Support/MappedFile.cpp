//===- MappedFile.cpp - Read-only memory-mapped file ----------------------===//

#include "qtensor/Support/MappedFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtensor;

Expected<MappedFile> MappedFile::open(const std::string &path) {
  // O_NONBLOCK: opening a FIFO must not block; fromDescriptor rejects it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return makeError(path, ": cannot open: ", std::strerror(errno));
  return fromDescriptor(fd, path);
}

Expected<MappedFile> MappedFile::fromDescriptor(int fd,
                                                const std::string &name) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return makeError(name, ": cannot stat: ", std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return makeError(name, ": not a regular file");
  }
  MappedFile file;
  file.name = name;
  file.length = static_cast<uint64_t>(st.st_size);
  if (file.length > 0) {
    void *p = mmap(nullptr, file.length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return makeError(name, ": cannot map ", file.length,
                       " bytes: ", std::strerror(err));
    }
    file.bytes = static_cast<const uint8_t *>(p);
  }
  ::close(fd);
  return file;
}

MappedFile::MappedFile(MappedFile &&other) noexcept
    : bytes(other.bytes), length(other.length), name(std::move(other.name)) {
  other.bytes = nullptr;
  other.length = 0;
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    if (bytes)
      munmap(const_cast<uint8_t *>(bytes), length);
    bytes = other.bytes;
    length = other.length;
    name = std::move(other.name);
    other.bytes = nullptr;
    other.length = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (bytes)
    munmap(const_cast<uint8_t *>(bytes), length);
}

void qtensor::releaseMappedPages(const void *data, size_t size) {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t first = (begin + page - 1) / page * page;
  uintptr_t last = (begin + size) / page * page;
  if (!data || last <= first)
    return;
  // Advice, not a request that can fail in a way that matters: a failure
  // leaves the pages resident, which is only slower to give back.
  (void)::madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}
