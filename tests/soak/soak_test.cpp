// The long randomized soak: `ctest -L soak` (not part of make test).
// For WEFT_SOAK_SECONDS (default 120), build pools of 1–16 workers and throw
// random mixes at them — posts from several threads, submit+get (in place
// and forced remote), nested task groups, parallel_for, exceptions from all
// of them, wait_idle, destruction with work still queued — checking that
// every task ran exactly once and that nothing hangs (watchdog). The seed is
// printed; WEFT_SOAK_SEED reproduces a run's choices.
// Counters in this file are relaxed: only their totals are read, after the
// threads that bump them are joined or waited for (which synchronizes).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

struct Counts {
  std::atomic<long> expected{0};
  std::atomic<long> ran{0};
  long rounds = 0, posts = 0, round_trips = 0, groups = 0, pfors = 0, exceptions = 0;
};

long fib(weft::ThreadPool& pool, int n, Counts& c) {
  c.ran.fetch_add(1, std::memory_order_relaxed);
  if (n < 2) return n;
  long a = 0;
  weft::TaskGroup g(pool);
  c.expected.fetch_add(1, std::memory_order_relaxed);
  g.run([&] { a = fib(pool, n - 1, c); });
  c.ran.fetch_sub(1, std::memory_order_relaxed);  // the recursive call below is not a task
  const long b = fib(pool, n - 2, c);
  g.wait();
  return a + b;
}

TEST(Soak, RandomMixesStayExact) {
  const double seconds = std::getenv("WEFT_SOAK_SECONDS") ? std::atof(std::getenv("WEFT_SOAK_SECONDS")) : 120.0;
  const unsigned seed = std::getenv("WEFT_SOAK_SEED")
                            ? static_cast<unsigned>(std::strtoul(std::getenv("WEFT_SOAK_SEED"), nullptr, 10))
                            : std::random_device{}();
  std::printf("soak: seed %u, %.0f s\n", seed, seconds);
  std::mt19937 rng(seed);
  Counts c;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    weft::test::Watchdog dog("soak round " + std::to_string(c.rounds) + " (seed " + std::to_string(seed) + ")",
                             std::chrono::seconds(120));
    const unsigned round_seed = static_cast<unsigned>(rng());
    std::mt19937 r(round_seed);
    weft::PoolOptions o;
    o.workers = 1 + static_cast<int>(r() % 16);
    o.wait.spin = std::chrono::nanoseconds(r() % 3 == 0 ? 0 : 20'000);
    {
      weft::ThreadPool pool(o);
      const int actions = 20 + static_cast<int>(r() % 50);
      for (int a = 0; a < actions; ++a) {
        switch (r() % 6) {
          case 0: {  // posts from several threads at once
            const int threads = 1 + static_cast<int>(r() % 4);
            const int per = 1 + static_cast<int>(r() % 2000);
            std::vector<std::thread> ts;
            for (int t = 0; t < threads; ++t)
              ts.emplace_back([&] {
                for (int i = 0; i < per; ++i) {
                  c.expected.fetch_add(1, std::memory_order_relaxed);
                  pool.post([&] { c.ran.fetch_add(1, std::memory_order_relaxed); });
                }
              });
            for (auto& t : ts) t.join();
            c.posts += threads * per;
            break;
          }
          case 1: {  // round trips, in place or forced remote
            const int n = 1 + static_cast<int>(r() % 500);
            const bool remote = r() % 2 == 0;
            for (int i = 0; i < n; ++i) {
              c.expected.fetch_add(1, std::memory_order_relaxed);
              auto f = pool.submit([&, i] {
                c.ran.fetch_add(1, std::memory_order_relaxed);
                return i;
              });
              ASSERT_EQ((remote ? weft::detail::get_remote(f) : f.get()), i);
            }
            c.round_trips += n;
            break;
          }
          case 2: {  // nested groups
            const int n = 5 + static_cast<int>(r() % 14);
            static const long fibs[] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584};
            c.expected.fetch_add(1, std::memory_order_relaxed);
            auto f = pool.submit([&, n] { return fib(pool, n, c); });
            ASSERT_EQ(weft::detail::get_remote(f), fibs[n]);
            ++c.groups;
            break;
          }
          case 3: {  // parallel_for
            const long n = static_cast<long>(r() % 100'000);
            auto hits = std::make_unique<std::atomic<std::uint8_t>[]>(static_cast<std::size_t>(n + 1));
            weft::parallel_for(pool, 0L, n, [&](long i) { hits[static_cast<std::size_t>(i)].fetch_add(1); });
            for (long i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << i;
            ++c.pfors;
            break;
          }
          case 4: {  // exceptions from every kind of task
            weft::TaskGroup g(pool);
            g.run([] { throw std::runtime_error("group"); });
            EXPECT_THROW(g.wait(), std::runtime_error);
            auto f = pool.submit([]() -> int { throw std::logic_error("future"); });
            EXPECT_THROW(f.get(), std::logic_error);
            EXPECT_THROW(weft::parallel_for(pool, 0, 100,
                                            [](int i) {
                                              if (i == 50) throw std::out_of_range("pfor");
                                            }),
                         std::out_of_range);
            pool.post([] { throw std::runtime_error("posted"); });
            EXPECT_THROW(pool.wait_idle(), std::runtime_error);
            c.exceptions += 4;
            break;
          }
          default: {  // leave work queued for the destructor (checked after it), or wait
            if (r() % 2 == 0) {
              pool.wait_idle();
            } else {
              const int n = static_cast<int>(r() % 5000);
              for (int i = 0; i < n; ++i) {
                c.expected.fetch_add(1, std::memory_order_relaxed);
                pool.post([&] { c.ran.fetch_add(1, std::memory_order_relaxed); });
              }
            }
          }
        }
      }
    }  // destruction runs whatever is still queued
    ASSERT_EQ(c.ran.load(), c.expected.load()) << "round " << c.rounds << ", round seed " << round_seed;
    ++c.rounds;
  }
  std::printf(
      "soak: %ld rounds, %ld tasks run exactly once (%ld posts, %ld round trips, %ld fork-join trees, "
      "%ld parallel_fors, %ld exceptions delivered)\n",
      c.rounds, c.ran.load(), c.posts, c.round_trips, c.groups, c.pfors, c.exceptions);
  EXPECT_GT(c.rounds, 0);
}

}  // namespace
