// The seat under churn (weft/detail/exec/seat.hpp): outside threads call
// small loops back to back while the workers park at once (every call
// leases a sleeper or hands off), another thread posts and waits for
// quiescence, and a reader takes stats() throughout. Every index runs once,
// every post runs, and nothing hangs (the watchdog). Runs under
// ThreadSanitizer in CI (label stress).
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/pool_stats.hpp"
#include "weft/exec/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"

using namespace std::chrono_literals;

namespace {

TEST(SeatStress, CallersPostersAndAStatsReaderOnParkingWorkers) {
  weft::test::Watchdog dog("seat churn");
  for (int workers : {1, 2, 3}) {
    weft::PoolOptions o;
    o.workers = workers;
    o.wait.spin = 0ns;  // park at once: a sleeper to lease on most calls
    o.wait.adaptive = false;
    weft::ThreadPool pool(o);
    const std::int64_t calls = weft::test::stress_count(4000, 200);
    std::atomic<bool> done{false};
    std::atomic<long> posted_ran{0};
    long posted = 0;
    std::thread poster([&] {
      while (!done.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 8; ++i) pool.post([&] { posted_ran.fetch_add(1, std::memory_order_relaxed); });
        posted += 8;
        pool.wait_idle();
      }
    });
    std::thread reader([&] {
      std::uint64_t last = 0;
      while (!done.load(std::memory_order_relaxed)) {
        const weft::PoolStats s = pool.stats();
        ASSERT_GE(s.seated.tasks_run, last);
        last = s.seated.tasks_run;
      }
    });
    std::vector<std::thread> callers;
    std::atomic<long> wrong{0};
    for (int c = 0; c < 3; ++c)
      callers.emplace_back([&, c] {
        std::vector<std::atomic<int>> hits(64);
        for (std::int64_t k = 0; k < calls; ++k) {
          const int n = 1 + static_cast<int>((k * 7 + c) % 64);
          weft::parallel_for(pool, 0, n, [&](int i) {
            hits[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
            if (k % 3 == 0) pool.post([&] { posted_ran.fetch_add(0, std::memory_order_relaxed); });
          });
          for (int i = 0; i < n; ++i)
            if (hits[static_cast<std::size_t>(i)].exchange(0, std::memory_order_relaxed) != 1) wrong.fetch_add(1);
        }
      });
    for (auto& t : callers) t.join();
    done.store(true, std::memory_order_relaxed);
    poster.join();
    reader.join();
    pool.wait_idle();
    EXPECT_EQ(wrong.load(), 0) << workers << " workers";
    EXPECT_EQ(posted_ran.load(), posted) << workers << " workers";
    EXPECT_FALSE(pool.is_worker());
  }
}

}  // namespace
