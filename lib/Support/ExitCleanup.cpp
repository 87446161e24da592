//===- ExitCleanup.cpp - What an abnormal exit still undoes ---------------===//

#include "qtensor/Support/ExitCleanup.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace qtensor {
namespace {

enum class Kind : int { RemoveDirectory, RenameFile, KillProcess };
/// A slot: free, being filled, armed, or being run (the runner owns it:
/// nobody may refill it under the runner's reads).
enum : int { kFree = 0, kWriting = 1, kArmed = 2, kRunning = 3 };
/// The cleanup as a whole: not started, running (by the thread in
/// runnerThread), done.
enum : int { kIdle = 0, kStarted = 1, kDone = 2 };

// Fixed storage: the fatal paths must not allocate. BSS, so untouched slots
// cost no memory.
struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<uint64_t> order{0};
  Kind kind = Kind::RemoveDirectory;
  long pid = 0;
  char first[PATH_MAX];
  char second[PATH_MAX];
};
constexpr int kSlots = 64;
Slot slots[kSlots];
std::atomic<uint64_t> nextOrder{1};
std::atomic<int> cleanup{kIdle};
std::atomic<long> runnerThread{0};
static_assert(std::atomic<int>::is_always_lock_free &&
                  std::atomic<long>::is_always_lock_free &&
                  std::atomic<uint64_t>::is_always_lock_free,
              "signal handlers may only use lock-free atomics");

long currentThread() { return ::syscall(SYS_gettid); }

int claim(Kind kind, const std::string &first, const std::string &second,
          long pid = 0) {
  if (first.size() >= PATH_MAX || second.size() >= PATH_MAX ||
      cleanup.load() != kIdle) // the process is ending
    return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slots[i].state.compare_exchange_strong(expected, kWriting))
      continue;
    Slot &s = slots[i];
    s.kind = kind;
    s.pid = pid;
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

/// Unlinks every entry of the directory `fd` (an empty subfolder too).
void unlinkEntries(int fd) {
  alignas(8) char buffer[4096];
  (void)::lseek(fd, 0, SEEK_SET);
  for (;;) {
    long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
    if (n <= 0)
      return;
    for (long at = 0; at < n;) {
      auto *entry = reinterpret_cast<LinuxDirent64 *>(buffer + at);
      at += entry->reclen;
      const char *name = entry->name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0)
        continue;
      if (::unlinkat(fd, name, 0) != 0)
        (void)::unlinkat(fd, name, AT_REMOVEDIR);
    }
  }
}

void removeFlatDirectory(const char *path) {
  // A child still running (clang's linker is its own child, out of our
  // reach) may add a file between the unlinks and the rmdir; once rmdir
  // succeeds it can add nothing.
  struct timespec step = {0, 1000000}; // 1 ms
  for (int attempt = 0; attempt < 2000; ++attempt) {
    int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      return; // gone, or never there
    unlinkEntries(fd);
    ::close(fd);
    if (::rmdir(path) == 0 || errno != ENOTEMPTY)
      return;
    ::nanosleep(&step, nullptr);
  }
}

/// Waits (async-signal-safely) until another thread's cleanup is done, at
/// most about five seconds: a process must end even if that one hangs.
void waitForOtherRunner() {
  struct timespec step = {0, 1000000}; // 1 ms
  for (int i = 0; i < 5000 && cleanup.load() != kDone; ++i)
    ::nanosleep(&step, nullptr);
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

ExitCleanup ExitCleanup::makeTemporaryDirectory(const std::string &pattern,
                                                std::string &path) {
  sigset_t termination, previous;
  sigemptyset(&termination);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&termination, sig);
  ::pthread_sigmask(SIG_BLOCK, &termination, &previous);
  std::string made = pattern;
  ExitCleanup removal;
  path.clear();
  if (::mkdtemp(made.data())) {
    removal = removeDirectory(made);
    path = made;
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return removal;
}

ExitCleanup ExitCleanup::killProcess(long pid) {
  return ExitCleanup(pid > 0 ? claim(Kind::KillProcess, "", "", pid) : -1);
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
  int expected = kIdle;
  if (!cleanup.compare_exchange_strong(expected, kStarted)) {
    // Another thread is cleaning up: its caller is about to end the
    // process, and so is ours; returning now would end it under that
    // thread, so wait. The same thread again (a signal that arrived during
    // its own cleanup) returns: that signal ends the process.
    if (runnerThread.load() != currentThread())
      waitForOtherRunner();
    return;
  }
  runnerThread.store(currentThread());
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
      break;
    below = newestOrder;
    Slot &s = slots[newest];
    int armed = kArmed;
    if (!s.state.compare_exchange_strong(armed, kRunning))
      continue; // released meanwhile
    switch (s.kind) {
    case Kind::RenameFile:
      (void)::rename(s.first, s.second);
      break;
    case Kind::KillProcess:
      (void)::kill(static_cast<pid_t>(s.pid), SIGKILL);
      break;
    case Kind::RemoveDirectory:
      removeFlatDirectory(s.first);
      break;
    }
  }
  cleanup.store(kDone);
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
    // The other termination signals wait until this one's cleanup is done
    // (this one, SA_NODEFER, is delivered by the raise that ends it).
    sigemptyset(&action.sa_mask);
    for (int other : {SIGINT, SIGTERM, SIGHUP})
      if (other != sig)
        sigaddset(&action.sa_mask, other);
    ::sigaction(sig, &action, nullptr);
  }
}

} // namespace qtensor
