// Futures under load: cancel racing the worker that takes the task, then()
// chains and when_all/when_any fan-ins from many threads. Sized by
// weft::test::stress_count and run under ThreadSanitizer in CI.
// Counters in this file are relaxed: only their totals are read, after the
// threads that bump them are joined or the futures waited for (which
// synchronizes).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "future_support.hpp"
#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/exec/when_all.hpp"

namespace {

using weft::test::Counted;
using weft::test::workers;

TEST(FutureStress, CancelRacingStartHasExactlyOneOutcome) {
  constexpr int kThreads = 4;
  const std::int64_t per = weft::test::stress_count(200'000) / kThreads;
  weft::test::Watchdog dog("cancel racing start");
  std::atomic<long> ran_total{0}, cancelled_total{0};
  {
    weft::ThreadPool pool(workers(2));
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&] {
        for (std::int64_t i = 0; i < per; ++i) {
          std::atomic<int> runs{0};
          auto f = pool.submit(Counted(&runs));
          if ((i & 3) == 0) std::this_thread::yield();  // sometimes let a worker get there first
          const bool cancelled = f.cancel();
          if (cancelled) {
            bool threw = false;
            try {
              f.get();
            } catch (const weft::cancelled&) {
              threw = true;
            }
            ASSERT_TRUE(threw);
            ASSERT_EQ(runs.load(std::memory_order_relaxed), 0);
            cancelled_total.fetch_add(1, std::memory_order_relaxed);
          } else {
            ASSERT_EQ(f.get(), 1);
            ASSERT_EQ(runs.load(std::memory_order_relaxed), 1);
            ran_total.fetch_add(1, std::memory_order_relaxed);
          }
        }
      });
    for (auto& t : ts) t.join();
    pool.wait_idle();
  }
  EXPECT_EQ(ran_total.load() + cancelled_total.load(), per * kThreads);
  EXPECT_EQ(Counted::live.load(), 0) << "every callable destroyed exactly once";
  std::printf("cancel racing start: %ld ran, %ld cancelled\n", ran_total.load(), cancelled_total.load());
}

TEST(FutureStress, CancelledContinuationsAndDroppedFuturesBalance) {
  const std::int64_t n = weft::test::stress_count(100'000);
  weft::test::Watchdog dog("cancelled continuations");
  std::atomic<int> runs{0};
  std::atomic<long> outcomes{0};
  {
    weft::ThreadPool pool(workers(2));
    for (std::int64_t i = 0; i < n; ++i) {
      auto f = pool.submit(Counted(&runs)).then([c = Counted(&runs)](int x) { return x + c(); });
      if (i % 3 == 0) continue;  // dropped while pending: still runs, result dropped
      if (f.cancel()) {
        EXPECT_THROW(f.get(), weft::cancelled);
      } else {
        EXPECT_GE(f.get(), 2);  // the sum of two run counts
      }
      outcomes.fetch_add(1, std::memory_order_relaxed);
    }
    pool.wait_idle();
  }
  EXPECT_EQ(Counted::live.load(), 0);
  EXPECT_GT(outcomes.load(), 0);
}

TEST(FutureStress, ThenChainsFromManyThreads) {
  constexpr int kThreads = 4;
  const std::int64_t per = weft::test::stress_count(40'000) / kThreads;
  weft::test::Watchdog dog("then chains from 4 threads");
  std::atomic<long> total{0};
  {
    weft::ThreadPool pool(workers(3));
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&] {
        for (std::int64_t i = 0; i < per; ++i) {
          auto f = pool.submit([] { return 1; }).then([](int x) { return x + 1; }).then([](int x) { return x + 1; });
          total.fetch_add(f.get(), std::memory_order_relaxed);
        }
      });
    for (auto& t : ts) t.join();
  }
  EXPECT_EQ(total.load(), 3 * per * kThreads);
}

TEST(FutureStress, WhenAllAndWhenAnyFanInsUnderContention) {
  constexpr int kThreads = 3;
  constexpr int kFan = 16;
  const std::int64_t per = weft::test::stress_count(20'000, 500) / kThreads;
  weft::test::Watchdog dog("when_all/when_any fan-ins");
  std::atomic<int> runs{0};
  std::atomic<long> sum{0};
  {
    weft::ThreadPool pool(workers(2));
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&, t] {
        for (std::int64_t i = 0; i < per; ++i) {
          std::vector<weft::Future<int>> fs;
          for (int k = 0; k < kFan; ++k) fs.push_back(pool.submit(Counted(&runs)));
          if ((t + i) % 2 == 0) {
            long s = 0;
            for (int x : weft::when_all(std::move(fs)).get()) s += x > 0 ? 1 : 0;
            sum.fetch_add(s, std::memory_order_relaxed);
          } else {
            const std::size_t first = weft::when_any(std::move(fs)).get();
            ASSERT_LT(first, static_cast<std::size_t>(kFan));
            sum.fetch_add(kFan, std::memory_order_relaxed);
          }
        }
      });
    for (auto& t : ts) t.join();
    pool.wait_idle();
  }
  EXPECT_EQ(sum.load(), per * kThreads * kFan);
  EXPECT_EQ(runs.load(), per * kThreads * kFan) << "when_any's losers still run";
  EXPECT_EQ(Counted::live.load(), 0);
}

}  // namespace
