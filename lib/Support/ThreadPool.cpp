//===- ThreadPool.cpp - A fixed pool of threads for data-parallel loops ---===//

#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <system_error>

namespace qtensor {

namespace {
/// Set while a thread runs a loop body: a nested loop then runs inline.
thread_local bool insideLoop = false;

constexpr unsigned kMaxThreads = 256;

/// Pauses a waiting thread spends checking before it sleeps: about 0.1 to
/// 0.3 ms, longer than the gap between two loops of a decode step, short
/// enough not to matter when the pool has more threads than cores.
constexpr unsigned kSpinRounds = 4096;

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Spins until ready() or kSpinRounds pauses have passed.
template <typename Ready> void spinUntil(Ready ready) {
  for (unsigned i = 0; i < kSpinRounds && !ready(); ++i)
    cpuRelax();
}
} // namespace

ThreadPool::ThreadPool(unsigned threads) {
  // A thread the system cannot start (EAGAIN under a process or
  // address-space limit: each needs its stack) leaves the pool smaller,
  // not the caller with an exception; threads() says how many run.
  try {
    workers.reserve(threads > 0 ? threads - 1 : 0);
  } catch (...) {
    return; // no room even for the list: the caller's thread alone
  }
  for (unsigned i = 1; i < threads; ++i) {
    try {
      workers.emplace_back([this] { work(); });
    } catch (...) { // std::system_error, or std::bad_alloc for its state
      break;
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(stateMutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void ThreadPool::drain() {
  insideLoop = true;
  while (true) {
    size_t i;
    {
      std::lock_guard<std::mutex> lock(stateMutex);
      if (next >= count)
        break;
      i = next++;
    }
    (*body)(i);
    std::lock_guard<std::mutex> lock(stateMutex);
    if (++finished == count)
      done.notify_all();
  }
  insideLoop = false;
}

void ThreadPool::work() {
  unsigned seen = 0;
  while (true) {
    // The next loop usually starts within microseconds: catch it awake.
    // The wait below then returns at once; it alone decides (under the
    // lock), so a loop started after the spin is never missed.
    spinUntil([&] {
      return stopping.load(std::memory_order_relaxed) ||
             generation.load(std::memory_order_relaxed) != seen;
    });
    {
      std::unique_lock<std::mutex> lock(stateMutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
    }
    drain();
  }
}

void ThreadPool::parallelFor(size_t n, const std::function<void(size_t)> &fn) {
  if (n == 0)
    return;
  if (workers.empty() || n == 1 || insideLoop) {
    for (size_t i = 0; i < n; ++i)
      fn(i);
    return;
  }
  std::lock_guard<std::mutex> loop(loopMutex);
  {
    std::lock_guard<std::mutex> lock(stateMutex);
    body = &fn;
    count = n;
    next = 0;
    finished = 0;
    ++generation;
  }
  wake.notify_all();
  drain();
  spinUntil([&] { return finished.load(std::memory_order_relaxed) == n; });
  std::unique_lock<std::mutex> lock(stateMutex);
  done.wait(lock, [&] { return finished == count; });
  body = nullptr;
  count = 0;
}

void ThreadPool::parallelRanges(
    int64_t items, int64_t work, int64_t minWork,
    const std::function<void(int64_t, int64_t)> &body) {
  parallelParts(items, work, minWork,
                [&](size_t, int64_t begin, int64_t end) { body(begin, end); });
}

void ThreadPool::parallelParts(
    int64_t items, int64_t work, int64_t minWork,
    const std::function<void(size_t, int64_t, int64_t)> &body) {
  if (items <= 0)
    return;
  const int64_t parts = std::min<int64_t>(
      {int64_t(threads()),
       std::max<int64_t>(1, work / std::max<int64_t>(1, minWork)), items});
  parallelFor(size_t(parts), [&](size_t i) {
    body(i, items * int64_t(i) / parts, items * int64_t(i + 1) / parts);
  });
}

namespace {
std::mutex defaultMutex;
unsigned defaultThreads = 0; ///< 0: not chosen yet
std::unique_ptr<ThreadPool> defaultPool;

/// QTENSOR_THREADS when it is set to an integer in [1, kMaxThreads].
unsigned environmentThreads() {
  const char *env = std::getenv("QTENSOR_THREADS");
  if (!env || *env < '0' || *env > '9')
    return 0;
  char *end = nullptr;
  unsigned long v = std::strtoul(env, &end, 10);
  return *end == '\0' && v >= 1 && v <= kMaxThreads ? unsigned(v) : 0;
}

unsigned threadsFromEnvironment() {
  if (unsigned v = environmentThreads())
    return v;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : (hw > kMaxThreads ? kMaxThreads : hw);
}
} // namespace

ThreadPool &defaultThreadPool() {
  std::lock_guard<std::mutex> lock(defaultMutex);
  if (!defaultPool)
    defaultPool = std::make_unique<ThreadPool>(
        defaultThreads ? defaultThreads : threadsFromEnvironment());
  return *defaultPool;
}

std::string threadCountEnvironmentError() {
  const char *env = std::getenv("QTENSOR_THREADS");
  if (!env || environmentThreads())
    return "";
  return std::string("QTENSOR_THREADS=") + env +
         ": expected an integer in [1, " + std::to_string(kMaxThreads) + "]";
}

bool setDefaultThreadCount(unsigned threads) {
  std::lock_guard<std::mutex> lock(defaultMutex);
  if (defaultPool || threads == 0 || threads > kMaxThreads)
    return false;
  defaultThreads = threads;
  return true;
}

} // namespace qtensor
