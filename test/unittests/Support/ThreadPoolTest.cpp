//===- ThreadPoolTest.cpp - The pool the host kernels run on --------------===//
//
// Every index runs exactly once; ranges cover the items contiguously; a
// loop started inside a loop body runs inline instead of deadlocking; and
// loops started from several threads at once (one loaded model serving
// several callers) each see all their own indices; threads the system
// cannot start leave a smaller pool, not an exception. scripts/tsan.sh runs
// these under ThreadSanitizer.
//
//===----------------------------------------------------------------------===//

#include "AddressSpaceLimit.h"

#include "qtensor/Support/ThreadPool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace qtensor;

TEST(ThreadPool, EveryIndexRunsOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.threads(), 4u);
  for (size_t n : {size_t(0), size_t(1), size_t(3), size_t(1000)}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallelFor(n, [&](size_t i) { ++hits[i]; });
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(hits[i].load(), 1) << "n = " << n << ", i = " << i;
  }
}

TEST(ThreadPool, RangesCoverTheItemsContiguously) {
  ThreadPool pool(3);
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  pool.parallelRanges(10, 1000, 100, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    ranges.emplace_back(b, e);
  });
  std::sort(ranges.begin(), ranges.end());
  ASSERT_EQ(ranges.size(), 3u); // at most one per thread
  EXPECT_EQ(ranges.front().first, 0);
  EXPECT_EQ(ranges.back().second, 10);
  for (size_t i = 1; i < ranges.size(); ++i)
    EXPECT_EQ(ranges[i - 1].second, ranges[i].first);
  // Work below the minimum: one range, on the caller.
  ranges.clear();
  pool.parallelRanges(10, 50, 100, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    ranges.emplace_back(b, e);
  });
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0], (std::pair<int64_t, int64_t>{0, 10}));
}

TEST(ThreadPool, PartsAreDistinctAndMatchTheirRanges) {
  ThreadPool pool(4);
  std::mutex m;
  std::vector<std::tuple<size_t, int64_t, int64_t>> parts;
  pool.parallelParts(7, 7000, 1000, [&](size_t part, int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    parts.emplace_back(part, b, e);
  });
  std::sort(parts.begin(), parts.end());
  ASSERT_EQ(parts.size(), 4u);
  // Part i is the i-th range in order: scratch indexed by it is private.
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(std::get<0>(parts[i]), i);
    EXPECT_EQ(std::get<1>(parts[i]), i == 0 ? 0 : std::get<2>(parts[i - 1]));
  }
  EXPECT_EQ(std::get<2>(parts.back()), 7);
}

TEST(ThreadPool, BackToBackLoopsSeeEveryIndex) {
  // Loops that follow each other at once, as in a decode step, catch the
  // workers while they spin; loops after a pause catch them asleep.
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  for (int round = 0; round < 2000; ++round) {
    if (round % 500 == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pool.parallelFor(3, [&](size_t i) { sum += int64_t(i) + 1; });
  }
  EXPECT_EQ(sum.load(), 2000 * 6);
}

TEST(ThreadPool, ANestedLoopRunsInline) {
  ThreadPool pool(4);
  std::atomic<int> inner{0};
  pool.parallelFor(
      8, [&](size_t) { pool.parallelFor(5, [&](size_t) { ++inner; }); });
  EXPECT_EQ(inner.load(), 40);
}

TEST(ThreadPool, LoopsFromSeveralThreadsEachSeeTheirOwnIndices) {
  ThreadPool pool(4);
  constexpr int kCallers = 4, kRounds = 50;
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < kRounds; ++round) {
        const size_t n = size_t(17 + c + round % 5);
        std::vector<std::atomic<int>> hits(n);
        pool.parallelFor(n, [&](size_t i) { ++hits[i]; });
        for (size_t i = 0; i < n; ++i)
          if (hits[i].load() != 1)
            ++wrong;
      }
    });
  for (std::thread &t : callers)
    t.join();
  EXPECT_EQ(wrong.load(), 0);
}

#ifndef QTENSOR_SANITIZED
// Sanitizers reserve terabytes of address space: RLIMIT_AS cannot be
// tested under them.
TEST(ThreadPool, ThreadsTheSystemCannotStartLeaveASmallerPool) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto child = [] {
    // Room for a few 8 MiB thread stacks, not for 64.
    qtensor::test::limitAddressSpaceTo(uint64_t(40) << 20);
    ThreadPool pool(64);
    std::vector<std::atomic<int>> hits(500);
    pool.parallelFor(hits.size(), [&](size_t i) { ++hits[i]; });
    bool once = std::all_of(hits.begin(), hits.end(),
                            [](const std::atomic<int> &h) { return h == 1; });
    std::fprintf(stderr, "%s with %u threads\n", once ? "ran" : "WRONG",
                 pool.threads());
    ::_exit(once && pool.threads() >= 1 && pool.threads() < 64 ? 0 : 1);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "ran with [0-9]+ threads");
}
#endif
