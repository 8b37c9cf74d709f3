// Coroutine tasks under load: spawn's cancel racing the worker that starts
// the task, co_await racing the awaited future's completion, and when_all
// fork-join from several threads at once, with children that suspend in
// the middle of their owner's chain. Sized by weft::test::stress_count
// and run under ThreadSanitizer in CI.
// Counters are relaxed: only their totals are read, after the futures or
// threads that bump them are waited for (which synchronizes).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "future_support.hpp"
#include "stress.hpp"
#include "threads.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using weft::Task;
using weft::test::Counted;
using weft::test::workers;

Task<int> counted(Counted c) { co_return c(); }

TEST(CoroStress, CancelRacingStartHasExactlyOneOutcome) {
  const std::int64_t n = weft::test::stress_count(100'000);
  weft::test::Watchdog dog("coro cancel racing start");
  std::atomic<int> runs{0};
  long ran = 0, cancelled = 0;
  {
    weft::ThreadPool pool(workers(2));
    for (std::int64_t i = 0; i < n; ++i) {
      auto f = pool.spawn(counted(Counted(&runs)));
      if ((i & 3) == 0) std::this_thread::yield();
      if (f.cancel()) {
        EXPECT_THROW(f.get(), weft::cancelled);
        ++cancelled;
      } else {
        EXPECT_GE(f.get(), 1);
        ++ran;
      }
    }
  }
  EXPECT_EQ(ran + cancelled, n);
  EXPECT_EQ(runs.load(), ran);
  EXPECT_EQ(Counted::live.load(), 0);
}

Task<long> await_fresh(weft::ThreadPool& p, std::int64_t n) {
  long sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if ((i & 1) == 0) co_await p.schedule();
    sum += co_await p.submit([] { return 1L; });
  }
  co_return sum;
}

TEST(CoroStress, AwaitRacingTheFuturesCompletion) {
  const std::int64_t n = weft::test::stress_count(50'000);
  constexpr int kThreads = 3;
  weft::test::Watchdog dog("coro await racing completion");
  weft::ThreadPool pool(workers(2));
  std::atomic<long> total{0};
  // relaxed: read after on_threads() joined the threads.
  weft::test::on_threads(kThreads, [&](int) {
    total.fetch_add(weft::sync_wait(await_fresh(pool, n)), std::memory_order_relaxed);
  });
  EXPECT_EQ(total.load(), kThreads * n);
}

Task<std::int64_t> fib(int n) {
  if (n < 2) co_return n;
  auto [a, b] = co_await weft::when_all(fib(n - 1), fib(n - 2));
  co_return a + b;
}

// Calls answer(round, thread) `rounds` times from each of `threads`
// threads at once; returns how many answers were not `expected`.
template <class Answer>
long wrong_answers(int threads, std::int64_t rounds, std::int64_t expected, Answer answer) {
  std::atomic<long> wrong{0};
  // relaxed: read after on_threads() joined the threads.
  weft::test::on_threads(threads, [&](int t) {
    for (std::int64_t r = 0; r < rounds; ++r)
      if (answer(r, t) != expected) wrong.fetch_add(1, std::memory_order_relaxed);
  });
  return wrong.load();
}

TEST(CoroStress, ForkJoinFromSeveralThreads) {
  const std::int64_t rounds = weft::test::stress_count(40, 8);
  weft::test::Watchdog dog("coro fork-join");
  weft::ThreadPool pool(workers(2));
  auto root = [](weft::ThreadPool& p) -> Task<std::int64_t> {
    co_await p.schedule();
    co_return co_await fib(16);
  };
  EXPECT_EQ(wrong_answers(3, rounds, 987,
                          [&](std::int64_t r, int) {
                            return (r & 1) == 0 ? weft::sync_wait(root(pool)) : pool.spawn(root(pool)).get();
                          }),
            0);
}

// A fork-join tree whose calls, by a hash of their place in it, finish in
// place, move to the pool (schedule(): resumed by whichever worker takes
// them) or await a future another worker completes: the owner's chain of
// each join (weft/detail/exec/promise.hpp, Join) is broken at random
// points, by suspensions that other threads resume and finish, while
// thieves take the rest of its children.
Task<std::int64_t> mixed_fib(weft::ThreadPool& p, int n, std::uint32_t path) {
  const std::uint32_t h = path * 2654435761U;
  if ((h >> 29) == 1) co_await p.schedule();
  if ((h >> 29) == 2) (void)co_await p.submit([] { return 0; });
  if (n < 2) co_return n;
  if ((h >> 28) % 3 == 0) {
    std::vector<Task<std::int64_t>> ts;
    ts.push_back(mixed_fib(p, n - 1, path * 4 + 1));
    ts.push_back(mixed_fib(p, n - 2, path * 4 + 2));
    ts.push_back(mixed_fib(p, 0, path * 4 + 3));
    const std::vector<std::int64_t> v = co_await weft::when_all(std::move(ts));
    co_return v[0] + v[1] + v[2];
  }
  auto [a, b] = co_await weft::when_all(mixed_fib(p, n - 1, path * 4 + 1), mixed_fib(p, n - 2, path * 4 + 2));
  co_return a + b;
}

TEST(CoroStress, ForkJoinWhoseChildrenSuspendAndMoveBetweenThreads) {
  const std::int64_t rounds = weft::test::stress_count(60, 10);
  weft::test::Watchdog dog("coro fork-join with suspending children");
  weft::ThreadPool pool(workers(3));
  EXPECT_EQ(wrong_answers(2, rounds, 377,
                          [&](std::int64_t r, int t) {
                            const auto seed = static_cast<std::uint32_t>(r * 2 + t + 1);
                            return (r & 1) == 0 ? weft::sync_wait(pool, mixed_fib(pool, 14, seed))
                                                : pool.spawn(mixed_fib(pool, 14, seed)).get();
                          }),
            0);
}

// A ten-way fan-out (skynet's shape) whose joins queue their nine other
// children together (push_own_n(): one release of the deque's bottom, one
// fence), with children that, by a hash of their place, move to the pool
// or await another worker's future: thieves take some of each batch while
// the owner's chain takes the rest back one at a time. Sums the leaves'
// numbers, so a child run twice or lost shows.
Task<std::int64_t> mixed_skynet(weft::ThreadPool& p, std::int64_t num, std::int64_t size, std::uint32_t path) {
  const std::uint32_t h = path * 2654435761U;
  if ((h >> 29) == 1) co_await p.schedule();
  if ((h >> 29) == 2) (void)co_await p.submit([] { return 0; });
  if (size == 1) co_return num;
  const std::int64_t step = size / 10;
  std::vector<Task<std::int64_t>> kids;
  for (std::uint32_t i = 0; i < 10; ++i) kids.push_back(mixed_skynet(p, num + i * step, step, path * 16 + i + 1));
  std::int64_t s = 0;
  for (const std::int64_t x : co_await weft::when_all(std::move(kids))) s += x;
  co_return s;
}

TEST(CoroStress, WideJoinsQueueTheirChildrenTogether) {
  const std::int64_t rounds = weft::test::stress_count(30, 6);
  weft::test::Watchdog dog("coro ten-way joins");
  weft::ThreadPool pool(workers(3));
  // 10^4 leaves numbered 0 .. 9,999.
  EXPECT_EQ(wrong_answers(2, rounds, 49'995'000,
                          [&](std::int64_t r, int t) {
                            const auto seed = static_cast<std::uint32_t>(r * 2 + t + 1);
                            return (r & 1) == 0 ? weft::sync_wait(pool, mixed_skynet(pool, 0, 10'000, seed))
                                                : pool.spawn(mixed_skynet(pool, 0, 10'000, seed)).get();
                          }),
            0);
}

// One join of more children than a worker's deque holds at first: the
// batch grows the deque before any of them is visible to a thief (in the
// first rounds on each worker: a deque keeps the room it grew), and thieves
// take part of 5,000 children that the owner's chain takes back one by one.
Task<std::int64_t> leaf(weft::ThreadPool& p, std::int64_t v) {
  if ((v & 7) == 3) co_await p.schedule();
  co_return v;
}
Task<std::int64_t> wide(weft::ThreadPool& p, std::int64_t n) {
  co_await p.schedule();
  std::vector<Task<std::int64_t>> kids;
  for (std::int64_t i = 0; i < n; ++i) kids.push_back(leaf(p, i));
  std::int64_t s = 0;
  for (const std::int64_t x : co_await weft::when_all(std::move(kids))) s += x;
  co_return s;
}

TEST(CoroStress, AJoinWiderThanTheDequeGrowsIt) {
  const std::int64_t rounds = weft::test::stress_count(40, 8);
  constexpr std::int64_t kWide = 5'000;
  weft::test::Watchdog dog("coro join of 5,000");
  weft::ThreadPool pool(workers(2));
  EXPECT_EQ(wrong_answers(2, rounds, kWide * (kWide - 1) / 2,
                          [&](std::int64_t, int) { return weft::sync_wait(pool, wide(pool, kWide)); }),
            0);
}

}  // namespace
