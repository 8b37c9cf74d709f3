#include "weft/exec/parallel_for.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"

namespace {

weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

void expect_each_once(weft::ThreadPool& pool, long n) {
  auto hits = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(n > 0 ? n : 1));
  weft::parallel_for(pool, 0L, n, [&](long i) { hits[static_cast<std::size_t>(i)].fetch_add(1); });
  for (long i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << "index " << i << " of " << n;
}

TEST(ParallelFor, EveryIndexExactlyOnce) {
  weft::test::Watchdog dog("parallel_for sizes");
  for (int w : {1, 2, 3}) {
    weft::ThreadPool pool(workers(w));
    for (long n : {0L, 1L, 2L, 10007L, 1'000'000L}) expect_each_once(pool, n);
  }
}

TEST(ParallelFor, EmptyAndReversedRanges) {
  weft::ThreadPool pool(workers(2));
  std::atomic<int> n{0};
  weft::parallel_for(pool, 5, 5, [&](int) { n++; });
  weft::parallel_for(pool, 9, 3, [&](int) { n++; });
  EXPECT_EQ(n.load(), 0);
  weft::parallel_for(pool, -50, 50, [&](int i) { n += i; });
  EXPECT_EQ(n.load(), -50);
}

TEST(ParallelFor, GrainOverload) {
  weft::ThreadPool pool(workers(2));
  std::vector<int> out(1000, 0);
  weft::parallel_for(pool, std::size_t{0}, out.size(), std::size_t{64}, [&](std::size_t i) { out[i] = 2; });
  for (int v : out) ASSERT_EQ(v, 2);
}

TEST(ParallelFor, ExceptionPropagatesAfterAllIndicesRan) {
  weft::ThreadPool pool(workers(2));
  std::atomic<int> ran{0};
  EXPECT_THROW(weft::parallel_for(pool, 0, 10000,
                                  [&](int i) {
                                    ran.fetch_add(1);
                                    if (i == 1234 || i == 8000) throw std::out_of_range("bad index");
                                  }),
               std::out_of_range);
  EXPECT_EQ(ran.load(), 10000);
}

TEST(ParallelFor, NestedInsideATask) {
  weft::test::Watchdog dog("nested parallel_for");
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([&] {
    std::atomic<long> sum{0};
    weft::parallel_for(pool, 0, 1000, [&](int i) {
      weft::parallel_for(pool, 0, 10, [&](int k) { sum.fetch_add(i * 10 + k); });
    });
    return sum.load();
  });
  EXPECT_EQ(weft::detail::get_remote(f), 9999L * 10000 / 2);
}

}  // namespace
