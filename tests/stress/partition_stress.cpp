// parallel_for's partitioners under load, sized by weft::test::stress_count
// and run under ThreadSanitizer in CI: several threads run loops with every
// partitioner on one small pool at once, nested inside tasks too, while
// other loops are stopped from outside and bodies throw; adaptive pieces
// offered to idle workers, static claims and fixed halves of different
// calls interleave on the same workers. More threads than CPUs on purpose.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

#include "callers.hpp"
#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/parallel_for.hpp"

namespace {

using Range = weft::BlockedRange2d<int>;

// Every element of a fresh vector visited once, 1-D and 2-D, with `part`.
template <class P>
void every_element_once(weft::ThreadPool& pool, std::mt19937_64& rng, const P& part) {
  const int rows = 1 + static_cast<int>(rng() % 300);
  const int cols = 1 + static_cast<int>(rng() % 300);
  std::vector<int> v(static_cast<std::size_t>(rows * cols), 0);
  weft::parallel_for(pool, v.begin(), v.end(), [](int& x) { ++x; }, part);
  weft::parallel_for(pool, Range{0, rows, 1 + static_cast<int>(rng() % 8), 0, cols, 1 + static_cast<int>(rng() % 8)},
                     [&](const Range& b) {
                       for (int r = b.row_lo; r < b.row_hi; ++r)
                         for (int c = b.col_lo; c < b.col_hi; ++c) ++v[static_cast<std::size_t>(r * cols + c)];
                     },
                     part);
  for (const int x : v) ASSERT_EQ(x, 2);
}

// A loop stopped by another thread at a random moment: every index runs at
// most once, and the call returns.
template <class P>
void stopped_from_outside(weft::ThreadPool& pool, std::mt19937_64& rng, const P& part) {
  const std::size_t n = 1 + static_cast<std::size_t>(rng() % 200'000);
  std::vector<std::atomic<int>> hits(n);
  std::stop_source src;
  const auto delay = std::chrono::microseconds(rng() % 200);
  std::thread stopper([&] {
    std::this_thread::sleep_for(delay);
    src.request_stop();
  });
  weft::parallel_for(pool, hits.begin(), hits.end(), [](std::atomic<int>& h) { h.fetch_add(1, std::memory_order_relaxed); },
                     part, src.get_token());
  stopper.join();
  for (const auto& h : hits) ASSERT_LE(h.load(std::memory_order_relaxed), 1);
}

// A body that throws now and then: every element still runs once.
template <class P>
void throwing(weft::ThreadPool& pool, std::mt19937_64& rng, const P& part) {
  const int n = 1 + static_cast<int>(rng() % 50'000);
  const int bad = static_cast<int>(rng() % static_cast<std::uint64_t>(n));
  auto hits = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(n));
  EXPECT_THROW(weft::parallel_for(
                   pool, 0, n,
                   [&](int i) {
                     hits[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
                     if (i == bad) throw std::runtime_error("bad index");
                   },
                   part),
               std::runtime_error);
  for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(std::memory_order_relaxed), 1);
}

void one_round(weft::ThreadPool& pool, std::mt19937_64& rng) {
  const auto each = [&](const auto& part) {
    every_element_once(pool, rng, part);
    stopped_from_outside(pool, rng, part);
    throwing(pool, rng, part);
  };
  switch (rng() % 3) {
    case 0: each(weft::adaptive); break;
    case 1: each(weft::static_partition); break;
    default: each(weft::fixed_grain(1 + rng() % 4096)); break;
  }
}

TEST(PartitionStress, ConcurrentCallersAndNestedLoopsOnOnePool) {
  weft::test::Watchdog dog("partitioned loops from 4 threads and nested");
  weft::test::callers_and_nested(3, 4, weft::test::stress_count(200, 10), one_round);
}

}  // namespace
