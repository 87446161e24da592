//===- MappedFile.cpp - A file's bytes: mapped, or read into memory -------===//

#include "qtensor/Support/MappedFile.h"

#include "qtensor/Support/ExitCleanup.h"
#include "qtensor/Support/FileIO.h"
#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace qtensor;

namespace {

/// The live file mappings: releaseMappedPages acts only inside one, and the
/// SIGBUS handler names the file a fault fell in. Updated under a mutex;
/// the fields are atomics because the signal handler reads them without it.
struct MappingSlot {
  std::atomic<uintptr_t> begin{0}, end{0};
  std::atomic<const char *> name{nullptr};
};
constexpr size_t kMappingSlots = 4096;
MappingSlot mappingSlots[kMappingSlots];
std::atomic<size_t> mappingSlotsUsed{0}; ///< slots at or above are empty
std::mutex mappingMutex;

void registerMapping(const uint8_t *data, uint64_t size,
                     const std::string &name) {
  std::lock_guard<std::mutex> lock(mappingMutex);
  for (size_t i = 0; i < kMappingSlots; ++i) {
    MappingSlot &s = mappingSlots[i];
    if (s.begin.load() != 0)
      continue;
    s.name.store(::strdup(name.c_str()));
    s.end.store(reinterpret_cast<uintptr_t>(data) + size);
    s.begin.store(reinterpret_cast<uintptr_t>(data));
    if (i + 1 > mappingSlotsUsed.load())
      mappingSlotsUsed.store(i + 1);
    return;
  }
  // More live mappings than slots: this one is not registered, which only
  // means its pages are not given back early and a fault in it is unnamed.
}

void unregisterMapping(const uint8_t *data) {
  std::lock_guard<std::mutex> lock(mappingMutex);
  size_t used = mappingSlotsUsed.load();
  for (size_t i = 0; i < used; ++i) {
    MappingSlot &s = mappingSlots[i];
    if (s.begin.load() != reinterpret_cast<uintptr_t>(data))
      continue;
    s.begin.store(0);
    s.end.store(0);
    ::free(const_cast<char *>(s.name.exchange(nullptr)));
    return;
  }
}

/// Whether [begin, end) lies inside one live file mapping.
bool insideFileMapping(uintptr_t begin, uintptr_t end) {
  std::lock_guard<std::mutex> lock(mappingMutex);
  size_t used = mappingSlotsUsed.load();
  for (size_t i = 0; i < used; ++i) {
    uintptr_t b = mappingSlots[i].begin.load();
    if (b != 0 && begin >= b && end <= mappingSlots[i].end.load())
      return true;
  }
  return false;
}

} // namespace

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
  file.fileBacked = true;
  if (file.length > 0) {
    void *p = mmap(nullptr, file.length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return makeError(name, ": cannot map ", file.length,
                       " bytes: ", std::strerror(err));
    }
    file.bytes = static_cast<const uint8_t *>(p);
    registerMapping(file.bytes, file.length, name);
  }
  ::close(fd);
  return file;
}

namespace {

/// 8 MiB chunks: large enough for the disk and OpenSSL, small enough that
/// a chunk is still in cache when onChunk hashes it.
constexpr uint64_t kReadChunk = uint64_t(8) << 20;

/// Reads `size` bytes of `fd` into `out`, handing each chunk to `onChunk`
/// in order. With onChunk and more than two chunks, a second thread reads
/// ahead while this one runs onChunk on what is already read, so a large
/// file costs about the longer of reading and hashing it, not their sum;
/// where that thread cannot start, the same work runs on this one.
Status
readChunks(int fd, const std::string &name, uint8_t *out, uint64_t size,
           const std::function<Status(const uint8_t *, size_t)> &onChunk) {
  auto serial = [&]() -> Status {
    for (uint64_t at = 0; at < size; at += kReadChunk) {
      uint64_t n = std::min(kReadChunk, size - at);
      QTENSOR_TRY(readAll(fd, out + at, n, at, name));
      if (onChunk)
        QTENSOR_TRY(onChunk(out + at, size_t(n)));
    }
    return Status::ok();
  };
  if (!onChunk || size <= 2 * kReadChunk)
    return serial();

  std::mutex mutex;
  std::condition_variable changed;
  uint64_t readUpTo = 0; // bytes [0, readUpTo) are in `out`
  bool readerDone = false;
  Status readStatus = Status::ok();
  std::atomic<bool> stop{false}; // onChunk failed: read no further
  auto reader = [&] {
    Status status = Status::ok();
    for (uint64_t at = 0; at < size && !stop.load(); at += kReadChunk) {
      uint64_t n = std::min(kReadChunk, size - at);
      status = readAll(fd, out + at, n, at, name);
      if (!status)
        break;
      std::lock_guard<std::mutex> lock(mutex);
      readUpTo = at + n;
      changed.notify_one();
    }
    std::lock_guard<std::mutex> lock(mutex);
    readStatus = std::move(status);
    readerDone = true;
    changed.notify_one();
  };
  std::thread thread;
  try {
    thread = std::thread(reader);
  } catch (const std::system_error &) {
    return serial(); // no second thread here (a thread limit): read inline
  }
  Status handed = Status::ok();
  for (uint64_t at = 0; at < size;) {
    uint64_t available;
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return readUpTo > at || readerDone; });
      available = readUpTo;
    }
    if (available <= at)
      break; // the reader stopped early: its status says why
    for (uint64_t n = 0; at < available; at += n) {
      n = std::min(kReadChunk, available - at);
      handed = onChunk(out + at, size_t(n));
      if (!handed)
        break;
    }
    if (!handed) {
      stop.store(true);
      break;
    }
  }
  thread.join();
  QTENSOR_TRY(readStatus);
  return handed;
}

} // namespace

Expected<MappedFile> MappedFile::readCopy(
    int fd, const std::string &name, uint64_t size,
    const std::function<Status(const uint8_t *, size_t)> &onChunk) {
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  QTENSOR_ASSIGN_OR_RETURN(MappedFile file, allocateCopy(name, size));
  if (size == 0)
    return file;
  QTENSOR_TRY(
      readChunks(fd, name, const_cast<uint8_t *>(file.bytes), size, onChunk));
  QTENSOR_TRY(file.sealCopy());
  return file;
}

Expected<MappedFile> MappedFile::allocateCopy(const std::string &name,
                                              uint64_t size) {
  MappedFile file;
  file.name = name;
  if (size == 0)
    return file;
  if (size > uint64_t(SIZE_MAX))
    return makeError(name, ": ", size, " bytes do not fit in memory here");
  // Anonymous pages rather than the heap: the size comes from a checked
  // manifest entry, a failure is an error and not an exception, and the
  // copy can be made read-only once filled. Not MAP_POPULATE: the pages are
  // faulted in by the reader as it fills them, in parallel with the hash
  // (readChunks), which measured faster than populating them all first.
  void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return makeError(
        name, ": cannot allocate ", size,
        " bytes of memory to read it into: ", std::strerror(errno));
  file.bytes = static_cast<const uint8_t *>(p);
  file.length = size;
  return file;
}

Status MappedFile::sealCopy() {
  if (length && ::mprotect(const_cast<uint8_t *>(bytes), length, PROT_READ))
    return makeError(
        name, ": cannot make the copy read-only: ", std::strerror(errno));
  return Status::ok();
}

Expected<MappedFile> MappedFile::readCopyInPieces(
    int fd, const std::string &name, uint64_t size, uint64_t pieceBytes,
    const std::function<Status(size_t, const uint8_t *, size_t)> &onChunk) {
  if (pieceBytes == 0 || size <= pieceBytes) // one piece: one thread
    return readCopy(fd, name, size, [&](const uint8_t *data, size_t n) {
      return onChunk(0, data, n);
    });
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // As readCopy: anonymous pages, faulted in by the threads that fill them.
  QTENSOR_ASSIGN_OR_RETURN(MappedFile file, allocateCopy(name, size));
  uint8_t *out = const_cast<uint8_t *>(file.bytes);
  size_t pieces = size_t(size / pieceBytes + (size % pieceBytes != 0));
  std::vector<Status> status(pieces);
  std::atomic<bool> failed{false}; // stop reading once a piece has failed
  defaultThreadPool().parallelFor(pieces, [&](size_t piece) {
    uint64_t begin = uint64_t(piece) * pieceBytes;
    uint64_t end = std::min(size, begin + pieceBytes);
    try {
      for (uint64_t at = begin; at < end && !failed.load(); at += kReadChunk) {
        uint64_t n = std::min(kReadChunk, end - at);
        Status s =
            readAll(fd, out + at, n, at, name); // pread: no shared offset
        if (s)
          s = onChunk(piece, out + at, size_t(n));
        if (!s) {
          status[piece] = std::move(s);
          failed.store(true);
          return;
        }
      }
    } catch (const std::exception &e) { // the pool's bodies must not throw
      status[piece] = makeError(name, ": ", e.what());
      failed.store(true);
    }
  });
  for (Status &s : status)
    if (!s)
      return s.error();
  QTENSOR_TRY(file.sealCopy());
  return file;
}

void MappedFile::release() {
  if (!bytes)
    return;
  if (fileBacked)
    unregisterMapping(bytes);
  munmap(const_cast<uint8_t *>(bytes), length);
  bytes = nullptr;
  length = 0;
}

MappedFile::MappedFile(MappedFile &&other) noexcept
    : bytes(other.bytes), length(other.length), name(std::move(other.name)),
      fileBacked(other.fileBacked) {
  other.bytes = nullptr;
  other.length = 0;
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    release();
    bytes = other.bytes;
    length = other.length;
    name = std::move(other.name);
    fileBacked = other.fileBacked;
    other.bytes = nullptr;
    other.length = 0;
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void qtensor::releaseMappedPages(const void *data, size_t size) {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t first = (begin + page - 1) / page * page;
  uintptr_t last = (begin + size) / page * page;
  if (!data || last <= first || !insideFileMapping(begin, begin + size))
    return;
  // Advice, not a request that can fail in a way that matters: a failure
  // leaves the pages resident, which is only slower to give back.
  (void)::madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

//===----------------------------------------------------------------------===//
// SIGBUS in a mapping
//===----------------------------------------------------------------------===//

namespace {
const char *faultProgram = "qtensor";

/// write(2) of a NUL-terminated string: async-signal-safe.
void say(const char *s) {
  size_t n = 0;
  while (s[n])
    ++n;
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0)
      return;
    s += w;
    n -= size_t(w);
  }
}

void sayNumber(uint64_t v) {
  char digits[24];
  char *p = digits + sizeof(digits);
  *--p = '\0';
  do {
    *--p = char('0' + v % 10);
    v /= 10;
  } while (v);
  say(p);
}

void onSigbus(int, siginfo_t *info, void *) {
  uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  // si_code > 0: raised by the kernel for an access (si_addr is meaningful),
  // not sent by kill() or raise().
  size_t used = info->si_code > 0 ? mappingSlotsUsed.load() : 0;
  for (size_t i = 0; i < used; ++i) {
    uintptr_t b = mappingSlots[i].begin.load();
    if (b == 0 || at < b || at >= mappingSlots[i].end.load())
      continue;
    const char *name = mappingSlots[i].name.load();
    say(faultProgram);
    say(": error: ");
    say(name ? name : "a mapped file");
    say(": reading byte ");
    sayNumber(at - b);
    say(" of the mapped file failed (SIGBUS): the file was truncated, or "
        "its storage failed, while it was in use\n");
    runExitCleanups();
    ::_exit(kMappedFileFaultExitCode);
  }
  // Not a mapping of ours: the default action. The signal is blocked while
  // the handler runs, so it is delivered as soon as the handler returns.
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);
}
} // namespace

void qtensor::installMappedFileFaultHandler(const char *program) {
  faultProgram = program;
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = onSigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}
