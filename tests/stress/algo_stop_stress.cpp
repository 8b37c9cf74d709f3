// Stops racing the parallel algorithms, sized by weft::test::stress_count
// and run under ThreadSanitizer in CI. Several threads call the algorithms
// on one small pool, half of the calls nested in pool tasks; each call's
// token is stopped either by another thread, through a std::stop_callback
// chained from a parent source (the callback runs on the requesting thread
// while chunks start and finish on the pool), or from inside the call's own
// function at a random point. Whatever the timing, a call either returns
// the right answer or throws weft::cancelled, and a stopped sort keeps
// every element in the range.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <stop_token>
#include <thread>
#include <vector>

#include "callers.hpp"
#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/parallel_find.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/parallel_scan.hpp"
#include "weft/exec/parallel_sort.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/sync/cpu_relax.hpp"

namespace {

using Values = std::vector<std::int64_t>;

// Runs call(), which returns whether its answer was right; a cancelled
// call is a right outcome too. Returns whether it was cancelled.
template <class Call>
bool right_or_cancelled(const Call& call) {
  try {
    EXPECT_TRUE(call());
  } catch (const weft::cancelled&) {
    return true;
  }
  return false;
}

void one_round(weft::ThreadPool& pool, std::mt19937_64& rng) {
  const std::size_t n = 1 + static_cast<std::size_t>(rng() % 60'000);
  Values v(n);
  for (auto& x : v) x = static_cast<std::int64_t>(rng() % 1000);
  Values sorted_v = v;
  std::sort(sorted_v.begin(), sorted_v.end());

  std::stop_source parent;
  std::stop_source child;
  const std::stop_callback chain(parent.get_token(), [&child] { child.request_stop(); });
  const auto stop = child.get_token();
  // Half the rounds: another thread stops the parent after a random spin;
  // the others: the call's own function, at its k-th call.
  const bool from_outside = rng() % 2 == 0;
  const long k = static_cast<long>(rng() % (2 * n));
  const unsigned spins = static_cast<unsigned>(rng() % 20'000);
  std::atomic<long> calls{0};
  auto tick = [&] {
    if (!from_outside && calls.fetch_add(1, std::memory_order_relaxed) == k) child.request_stop();
  };
  std::thread stopper;
  if (from_outside)
    stopper = std::thread([&parent, spins] {
      for (unsigned i = 0; i < spins; ++i) weft::cpu_relax();
      parent.request_stop();
    });

  auto plus = [&](std::int64_t a, std::int64_t b) {
    tick();
    return a + b;
  };
  auto less = [&](std::int64_t a, std::int64_t b) {
    tick();
    return a < b;
  };
  switch (rng() % 5) {
    case 0:
      right_or_cancelled([&] {
        return weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{0}, plus, 256, stop) ==
               std::accumulate(v.begin(), v.end(), std::int64_t{0});
      });
      break;
    case 1: {
      Values want(n);
      std::inclusive_scan(v.begin(), v.end(), want.begin());
      Values out(n);
      right_or_cancelled([&] {
        weft::parallel_inclusive_scan(pool, v.begin(), v.end(), out.begin(), plus, stop);
        return out == want;
      });
      break;
    }
    case 2:
    case 3: {
      Values got = v;
      const bool stable = rng() % 2 == 0;
      right_or_cancelled([&] {
        if (stable)
          weft::parallel_stable_sort(pool, got.begin(), got.end(), less, stop);
        else
          weft::parallel_sort(pool, got.begin(), got.end(), less, stop);
        return got == sorted_v;
      });
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, sorted_v) << "a stopped sort lost an element";
      break;
    }
    default: {
      const std::size_t at = static_cast<std::size_t>(rng() % (n + 1));
      Values hay(n, 0);
      if (at < n) hay[at] = 1;
      auto is_one = [&](std::int64_t x) {
        tick();
        return x == 1;
      };
      const bool cancelled = right_or_cancelled([&] {
        const auto it = weft::parallel_find_if(pool, hay.begin(), hay.end(), is_one, stop);
        return it - hay.begin() == static_cast<std::ptrdiff_t>(at);
      });
      if (cancelled) {
        EXPECT_TRUE(stop.stop_requested());
      }
      break;
    }
  }
  if (stopper.joinable()) stopper.join();
}

TEST(AlgoStopStress, StopsRaceEveryAlgorithmFromOutsideAndInside) {
  weft::test::Watchdog dog("algorithms with racing stops");
  weft::test::callers_and_nested(3, 3, weft::test::stress_count(200, 8), one_round);
}

}  // namespace
