// The parallel algorithms under load, sized by weft::test::stress_count and
// run under ThreadSanitizer in CI: several threads call every algorithm on
// one small pool at once, and tasks call them nested, so searchers, scans
// and sorts of different calls interleave on the same workers. More threads
// than CPUs on purpose.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "callers.hpp"
#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/parallel_find.hpp"
#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/parallel_scan.hpp"
#include "weft/exec/parallel_sort.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

// One round of every algorithm on `n` values drawn from `rng`, each checked
// against its serial counterpart (gtest assertions are thread-safe).
void one_round(weft::ThreadPool& pool, std::mt19937_64& rng, std::size_t n) {
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = static_cast<std::int64_t>(rng() % 1000);

  // Determinism under contention: two runs give the same bits.
  std::vector<double> d(v.begin(), v.end());
  for (auto& x : d) x = x / 7.0 - 50.0;
  const double want_sum = weft::parallel_reduce(pool, d.begin(), d.end(), 0.0, std::plus<>{}, 64);
  ASSERT_EQ(weft::parallel_reduce(pool, d.begin(), d.end(), 0.0, std::plus<>{}, 64), want_sum);

  std::vector<std::int64_t> scan(n);
  std::vector<std::int64_t> want_scan(n);
  std::inclusive_scan(v.begin(), v.end(), want_scan.begin());
  weft::parallel_inclusive_scan(pool, v.begin(), v.end(), scan.begin());
  ASSERT_EQ(scan, want_scan);

  const std::size_t at = static_cast<std::size_t>(rng() % (n + 1));
  std::vector<std::int64_t> hay(n, 0);
  if (at < n) hay[at] = 1;
  ASSERT_EQ(static_cast<std::size_t>(
                weft::parallel_find_if(pool, hay.begin(), hay.end(), [](std::int64_t x) { return x == 1; }) - hay.begin()),
            at);

  auto sorted = v;
  auto stable = v;
  weft::parallel_invoke(
      pool, [&] { weft::parallel_sort(pool, sorted.begin(), sorted.end()); },
      [&] { weft::parallel_stable_sort(pool, stable.begin(), stable.end()); });
  std::sort(v.begin(), v.end());
  ASSERT_EQ(sorted, v);
  ASSERT_EQ(stable, v);
}

TEST(AlgoStress, ConcurrentCallersAndNestedCallsOnOnePool) {
  weft::test::Watchdog dog("algorithms from 4 threads and nested");
  weft::test::callers_and_nested(3, 4, weft::test::stress_count(150, 8), [](weft::ThreadPool& pool, std::mt19937_64& rng) {
    one_round(pool, rng, 1 + static_cast<std::size_t>(rng() % 60'000));
  });
}

}  // namespace
