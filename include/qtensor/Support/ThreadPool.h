//===- ThreadPool.h - A fixed pool of threads for data-parallel loops -----===//
//
// The host kernels split a linear's output rows across threads
// (KernelAbi::rowSplit); the pool keeps its threads between calls, because a
// decode step makes hundreds of calls of tens of microseconds each and
// starting threads per call would cost more than the work. One loop runs at
// a time; a loop started from inside a loop body runs inline on the calling
// thread instead of deadlocking.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_THREADPOOL_H
#define QTENSOR_SUPPORT_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace qtensor {

class ThreadPool {
public:
  /// `threads` in all, the caller of parallelFor included (1: no workers);
  /// fewer when the system cannot start them all (threads() says).
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned threads() const { return unsigned(workers.size()) + 1; }

  /// Runs body(i) for every i in [0, count), spread over the pool's
  /// threads and the caller, and returns when all have returned. `body`
  /// must not throw.
  void parallelFor(size_t count, const std::function<void(size_t)> &body);

  /// Splits [0, items), whose `work` units cost about the same each, into
  /// contiguous ranges of at least `minWork` units, at most one per thread
  /// (one range, on the calling thread, when the work is small), and runs
  /// body(begin, end) for each as parallelFor does.
  void parallelRanges(int64_t items, int64_t work, int64_t minWork,
                      const std::function<void(int64_t, int64_t)> &body);
  /// parallelRanges, with each range's index in [0, threads()) passed
  /// first: body(part, begin, end), for callers that keep scratch per part.
  void parallelParts(int64_t items, int64_t work, int64_t minWork,
                     const std::function<void(size_t, int64_t, int64_t)> &body);

private:
  void work();
  /// Claims and runs indices of the current loop until none are left.
  void drain();

  std::vector<std::thread> workers;
  std::mutex loopMutex; ///< one loop at a time
  std::mutex stateMutex;
  std::condition_variable wake, done;
  const std::function<void(size_t)> *body = nullptr;
  size_t count = 0, next = 0;
  // Written under stateMutex; also read without it by threads that spin
  // a while before they sleep on `wake` or `done` (a decode step's loops
  // follow each other within microseconds; a futex wake-up costs more).
  std::atomic<size_t> finished{0};
  std::atomic<unsigned> generation{0};
  std::atomic<bool> stopping{false};
};

/// The process's pool: `QTENSOR_THREADS` threads when set to an integer in
/// [1, 256], else the hardware's. Created on first use. A library does not
/// print, so a bad value is not used and threadCountEnvironmentError says
/// why (qtc refuses to run with it).
ThreadPool &defaultThreadPool();
/// "QTENSOR_THREADS=abc: expected an integer in [1, 256]" when the variable
/// is set to anything else; empty when it is unset or valid.
std::string threadCountEnvironmentError();
/// Sets the size of the process's pool; only before its first use (returns
/// false afterwards, or for 0 or more than 256).
bool setDefaultThreadCount(unsigned threads);

} // namespace qtensor

#endif // QTENSOR_SUPPORT_THREADPOOL_H
