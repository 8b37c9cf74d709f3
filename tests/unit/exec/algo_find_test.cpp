#include "weft/exec/parallel_find.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "algo_support.hpp"
#include "watchdog.hpp"

namespace {

using weft::test::workers;

TEST(ParallelFind, FirstMatchInOrderAtEveryLengthAndPosition) {
  weft::test::Watchdog dog("find lengths");
  weft::test::at_every_length([](weft::ThreadPool& pool, std::size_t n, int w) {
    // Matches at several places (duplicates): the first one must win.
    for (std::size_t at : {std::size_t{0}, n / 3, n / 2, n - 1, n}) {
      std::vector<int> v(n, 0);
      for (std::size_t i = at; i < n; i += 1 + n / 7) v[i] = 1;
      auto is_one = [](int x) { return x == 1; };
      EXPECT_EQ(weft::parallel_find_if(pool, v.begin(), v.end(), is_one) - v.begin(),
                std::find_if(v.begin(), v.end(), is_one) - v.begin())
          << n << " elements, first match at " << at << ", " << w << " workers";
      EXPECT_EQ(weft::parallel_any_of(pool, v.begin(), v.end(), is_one), at < n);
    }
  });
}

TEST(ParallelFind, AnEarlyMatchStopsTheSearchEarly) {
  weft::ThreadPool pool(workers(3));
  const std::size_t n = 1'000'000;
  std::vector<int> v(n, 0);
  for (std::size_t at : {std::size_t{10}, std::size_t{5000}}) {
    v[at] = 1;
    // Searchers * (first block + at / 16) beyond the match, with room to
    // spare. The bound holds unless the thread that found the match is
    // preempted before it publishes it (the others search on meanwhile:
    // once 145,221 calls under ASan on a busy 2-vCPU host), so the best of
    // three searches must meet it; one that never stops early fails all
    // three.
    const long bound = static_cast<long>(at + 4 * (weft::detail::kFindMinBlock + at / 8));
    std::string tries;
    long best = std::numeric_limits<long>::max();
    for (int attempt = 0; attempt < 3 && best >= bound; ++attempt) {
      std::atomic<long> calls{0};
      const auto it = weft::parallel_find_if(pool, v.begin(), v.end(), [&](int x) {
        calls.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after the call returns
        return x == 1;
      });
      EXPECT_EQ(it - v.begin(), static_cast<long>(at));
      best = std::min(best, calls.load());
      tries += std::to_string(calls.load()) + " ";
    }
    EXPECT_LT(best, bound) << "match at " << at << "; calls in each search: " << tries;
    v[at] = 0;
  }
}

TEST(ParallelFind, ExceptionsCountAsMatchesInOrder) {
  weft::ThreadPool pool(workers(3));
  std::vector<int> v(200'000, 0);
  v[150'000] = 1;   // a match
  v[100'000] = 2;   // throws, before the match: std::find_if would throw
  auto pred = [](int x) {
    if (x == 2) throw std::runtime_error("boom");
    return x == 1;
  };
  for (int run = 0; run < 20; ++run) EXPECT_THROW(weft::parallel_find_if(pool, v.begin(), v.end(), pred), std::runtime_error);
  v[50'000] = 1;  // now a match comes first: the throw is never reached serially
  for (int run = 0; run < 20; ++run) EXPECT_EQ(weft::parallel_find_if(pool, v.begin(), v.end(), pred) - v.begin(), 50'000);
  v.assign(v.size(), 2);  // every call throws
  EXPECT_THROW(weft::parallel_any_of(pool, v.begin(), v.end(), pred), std::runtime_error);
  v.assign(v.size(), 0);
  EXPECT_FALSE(weft::parallel_any_of(pool, v.begin(), v.end(), pred));
}

TEST(ParallelFind, NestedInsideATaskOfAOneWorkerPoolAndOnTheDefaultPool) {
  weft::test::Watchdog dog("nested find on one worker");
  weft::ThreadPool pool(workers(1));
  std::vector<int> v(300'000, 0);
  v[123'456] = 1;
  auto is_one = [](int x) { return x == 1; };
  EXPECT_EQ(pool.submit([&] { return weft::parallel_find_if(pool, v.begin(), v.end(), is_one) - v.begin(); }).get(),
            123'456);
  EXPECT_EQ(weft::parallel_find_if(v.begin(), v.end(), is_one) - v.begin(), 123'456);
  EXPECT_TRUE(weft::parallel_any_of(v.begin(), v.end(), is_one));
}

}  // namespace
