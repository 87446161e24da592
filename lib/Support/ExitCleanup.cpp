//===- ExitCleanup.cpp - What an abnormal exit still undoes ---------------===//

#include "qtensor/Support/ExitCleanup.h"

#include <atomic>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace qtensor {
namespace {

enum class Kind : int { RemoveDirectory, RenameFile };
enum : int { kFree = 0, kWriting = 1, kArmed = 2 };

// Fixed storage: the fatal paths must not allocate. BSS, so untouched slots
// cost no memory.
struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<uint64_t> order{0};
  Kind kind = Kind::RemoveDirectory;
  char first[PATH_MAX];
  char second[PATH_MAX];
};
constexpr int kSlots = 64;
Slot slots[kSlots];
std::atomic<uint64_t> nextOrder{1};
std::atomic<bool> ran{false};

int claim(Kind kind, const std::string &first, const std::string &second) {
  if (first.size() >= PATH_MAX || second.size() >= PATH_MAX)
    return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slots[i].state.compare_exchange_strong(expected, kWriting))
      continue;
    Slot &s = slots[i];
    s.kind = kind;
    std::memcpy(s.first, first.c_str(), first.size() + 1);
    std::memcpy(s.second, second.c_str(), second.size() + 1);
    s.order.store(nextOrder.fetch_add(1));
    s.state.store(kArmed);
    return i;
  }
  return -1;
}

// getdents64's record; the libc wrapper is not async-signal-safe.
struct LinuxDirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

void removeFlatDirectory(const char *path) {
  int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buffer[4096];
    for (;;) {
      long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
      if (n <= 0)
        break;
      for (long at = 0; at < n;) {
        auto *entry = reinterpret_cast<LinuxDirent64 *>(buffer + at);
        at += entry->reclen;
        const char *name = entry->name;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0)
          continue;
        if (::unlinkat(fd, name, 0) != 0)
          (void)::unlinkat(fd, name, AT_REMOVEDIR); // an empty subfolder
      }
    }
    ::close(fd);
  }
  (void)::rmdir(path);
}

void onTerminationSignal(int sig) {
  runExitCleanups();
  // SA_RESETHAND restored the default action and SA_NODEFER left the
  // signal unblocked: this ends the process by `sig`.
  ::raise(sig);
}

} // namespace

ExitCleanup ExitCleanup::removeDirectory(const std::string &dir) {
  return ExitCleanup(claim(Kind::RemoveDirectory, dir, ""));
}

ExitCleanup ExitCleanup::renameFile(const std::string &from,
                                    const std::string &to) {
  return ExitCleanup(claim(Kind::RenameFile, from, to));
}

ExitCleanup::ExitCleanup(ExitCleanup &&other) noexcept : slot(other.slot) {
  other.slot = -1;
}

ExitCleanup &ExitCleanup::operator=(ExitCleanup &&other) noexcept {
  if (this != &other) {
    release();
    slot = other.slot;
    other.slot = -1;
  }
  return *this;
}

void ExitCleanup::release() {
  if (slot < 0)
    return;
  int expected = kArmed;
  slots[slot].state.compare_exchange_strong(expected, kFree);
  slot = -1;
}

void runExitCleanups() noexcept {
  if (ran.exchange(true))
    return;
  // Newest first: a later action may depend on an earlier one's files.
  uint64_t below = UINT64_MAX;
  for (;;) {
    int newest = -1;
    uint64_t newestOrder = 0;
    for (int i = 0; i < kSlots; ++i) {
      if (slots[i].state.load() != kArmed)
        continue;
      uint64_t o = slots[i].order.load();
      if (o < below && o > newestOrder) {
        newest = i;
        newestOrder = o;
      }
    }
    if (newest < 0)
      return;
    below = newestOrder;
    const Slot &s = slots[newest];
    if (s.kind == Kind::RenameFile)
      (void)::rename(s.first, s.second);
    else
      removeFlatDirectory(s.first);
  }
}

void installTerminationCleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current;
    if (::sigaction(sig, nullptr, &current) != 0 ||
        current.sa_handler == SIG_IGN) // nohup, a background job: leave it
      continue;
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = onTerminationSignal;
    action.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
}

} // namespace qtensor
