// A std::stop_token through every parallel algorithm: a token stopped
// before the call runs no chunk; a stop from inside a chunk lets no new
// chunk start (counted through the user functions); a token that is never
// stopped changes no result; and what a stopped call leaves behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <stop_token>
#include <vector>

#include "algo_support.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/parallel_find.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/parallel_scan.hpp"
#include "weft/exec/parallel_sort.hpp"

namespace {

using weft::test::workers;
using Values = std::vector<std::int64_t>;

// Threads that can run a chunk at once: the 3 workers and the caller.
constexpr long kThreads = 4;

// A source stopped from the start, alive for the test.
struct Stopped {
  std::stop_source src;
  Stopped() { src.request_stop(); }
};

TEST(AlgoStop, RequestedBeforeTheCallRunsNoChunkAndThrowsCancelled) {
  weft::ThreadPool pool(workers(3));
  const Stopped stopped;
  const auto stop = stopped.src.get_token();
  const Values v = weft::test::random_values(100'000, 1000);
  std::atomic<long> calls{0};
  auto plus = [&](std::int64_t a, std::int64_t b) {
    calls++;
    return a + b;
  };
  auto square = [&](std::int64_t x) {
    calls++;
    return x * x;
  };
  auto less = [&](std::int64_t a, std::int64_t b) {
    calls++;
    return a < b;
  };
  auto is_big = [&](std::int64_t x) {
    calls++;
    return x > 2000;
  };
  auto body = [&](long lo, long hi) {
    calls++;
    return hi - lo;
  };
  Values out(v.size(), -1);
  Values sorted = v;
  EXPECT_THROW(weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{0}, plus, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{0}, plus, 64, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_transform_reduce(pool, v.begin(), v.end(), std::int64_t{0}, plus, square, stop),
               weft::cancelled);
  EXPECT_THROW(weft::parallel_reduce(pool, 0L, 1'000'000L, 0L, plus, body, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_inclusive_scan(pool, v.begin(), v.end(), out.begin(), plus, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_inclusive_scan(pool, v.begin(), v.end(), out.begin(), stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_exclusive_scan(pool, v.begin(), v.end(), out.begin(), std::int64_t{0}, plus, stop),
               weft::cancelled);
  EXPECT_THROW(weft::parallel_sort(pool, sorted.begin(), sorted.end(), less, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_sort(pool, sorted.begin(), sorted.end(), stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_stable_sort(pool, sorted.begin(), sorted.end(), less, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_find_if(pool, v.begin(), v.end(), is_big, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_any_of(pool, v.begin(), v.end(), is_big, stop), weft::cancelled);
  // Short ranges, done serially, are one chunk: also skipped.
  EXPECT_THROW(weft::parallel_inclusive_scan(pool, v.begin(), v.begin() + 100, out.begin(), plus, stop),
               weft::cancelled);
  EXPECT_THROW(weft::parallel_stable_sort(pool, sorted.begin(), sorted.begin() + 100, less, stop), weft::cancelled);
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(sorted, v);
  EXPECT_EQ(out, Values(v.size(), -1));
}

TEST(AlgoStop, EmptyRangesHaveNoChunkToSkip) {
  weft::ThreadPool pool(workers(2));
  const Stopped stopped;
  const auto stop = stopped.src.get_token();
  Values v;
  EXPECT_EQ(weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{7}, std::plus<>{}, stop), 7);
  EXPECT_EQ(weft::parallel_inclusive_scan(pool, v.begin(), v.end(), v.begin(), stop), v.begin());
  weft::parallel_sort(pool, v.begin(), v.end(), stop);
  weft::parallel_stable_sort(pool, v.begin(), v.end(), stop);
  EXPECT_EQ(weft::parallel_find_if(pool, v.begin(), v.end(), [](std::int64_t) { return true; }, stop), v.end());
}

TEST(AlgoStop, ATokenNeverStoppedChangesNoResult) {
  weft::test::Watchdog dog("live tokens");
  std::stop_source live;
  const auto stop = live.get_token();
  weft::test::at_every_length([&](weft::ThreadPool& pool, std::size_t n, int w) {
    const Values v = weft::test::random_values(n, 1000);
    EXPECT_EQ(weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{3}, std::plus<>{}, stop),
              std::accumulate(v.begin(), v.end(), std::int64_t{3}));
    EXPECT_EQ(weft::parallel_reduce(pool, std::size_t{0}, n, std::size_t{0}, std::plus<>{},
                                    [](std::size_t lo, std::size_t hi) { return hi - lo; }, 100, stop),
              n);
    Values got(n);
    Values want(n);
    std::exclusive_scan(v.begin(), v.end(), want.begin(), std::int64_t{5});
    weft::parallel_exclusive_scan(pool, v.begin(), v.end(), got.begin(), std::int64_t{5}, stop);
    EXPECT_EQ(got, want) << n << " elements, " << w << " workers";
    std::inclusive_scan(v.begin(), v.end(), want.begin());
    weft::parallel_inclusive_scan(pool, v.begin(), v.end(), got.begin(), stop);
    EXPECT_EQ(got, want) << n << " elements, " << w << " workers";
    want = v;
    std::sort(want.begin(), want.end());
    got = v;
    weft::parallel_sort(pool, got.begin(), got.end(), stop);
    EXPECT_EQ(got, want) << n << " elements, " << w << " workers";
    got = v;
    weft::parallel_stable_sort(pool, got.begin(), got.end(), std::less<>{}, stop);
    EXPECT_EQ(got, want) << n << " elements, " << w << " workers";
    auto is_999 = [](std::int64_t x) { return x == 999; };
    EXPECT_EQ(weft::parallel_find_if(pool, v.begin(), v.end(), is_999, stop),
              std::find_if(v.begin(), v.end(), is_999));
    EXPECT_EQ(weft::parallel_any_of(pool, v.begin(), v.end(), [](std::int64_t x) { return x < 0; }, stop), false);
  });
  EXPECT_FALSE(live.stop_requested());
}

// The first leaf stops the call: once the stop is requested, only leaves
// whose gate was already passed start, at most one per thread. (Counted
// from the request itself, not from the first leaf: the first leaf's thread
// may be preempted before its request, and the leaves other threads start
// meanwhile are legitimately not stopped. Counting every leaf failed about
// one run in a hundred under ASan. And every leaf requests the stop, not
// only the first counted: a first leaf preempted between its count and its
// request let the other threads run every remaining leaf, so the call
// returned instead of throwing, once in a CI run of 2 vCPUs.)
TEST(AlgoStop, ReduceFromInsideALeafStartsNoNewLeaf) {
  weft::test::Watchdog dog("reduce stopped from a leaf");
  weft::ThreadPool pool(workers(3));
  for (int round = 0; round < 20; ++round) {
    std::stop_source src;
    std::atomic<long> leaves{0};
    // Default (seq_cst) RMWs and loads, as `leaves`: the loads come after
    // parallel_reduce() returns, which joins every leaf.
    std::atomic<long> after_stop{0};
    auto body = [&](long lo, long hi) {
      if (src.stop_requested()) after_stop.fetch_add(1);  // began after the request
      leaves.fetch_add(1);
      src.request_stop();  // a thread's next leaf sees it at its gate
      return hi - lo;
    };
    EXPECT_THROW(weft::parallel_reduce(pool, 0L, 1'000'000L, 0L, std::plus<>{}, body, 1000, src.get_token()),
                 weft::cancelled);
    EXPECT_GE(leaves.load(), 1);
    EXPECT_LE(after_stop.load(), kThreads);
  }
}

// A stop that comes after the last leaf started changes nothing. On one
// worker, called from it, the leaves run one after another: the 1024th
// (1e6 halved ten times fits the grain) is the last.
TEST(AlgoStop, ReduceStoppedByItsLastLeafReturnsTheWholeResult) {
  weft::ThreadPool pool(workers(1));
  std::stop_source src;
  long leaves = 0;
  auto body = [&](long lo, long hi) {
    if (++leaves == 1024) src.request_stop();
    return hi - lo;
  };
  pool.submit([&] {
        EXPECT_EQ(weft::parallel_reduce(pool, 0L, 1'000'000L, 0L, std::plus<>{}, body, 1000, src.get_token()),
                  1'000'000L);
      })
      .get();
  EXPECT_EQ(leaves, 1024);
  EXPECT_TRUE(src.stop_requested());
}

// Stopped from inside round 1: no later round starts, so fewer ops run than
// window 1 alone holds (the first p/(p+1) of the range).
TEST(AlgoStop, ScanFromInsideABlockStartsNoSecondPass) {
  weft::test::Watchdog dog("scan stopped from a block");
  weft::ThreadPool pool(workers(3));
  const std::size_t n = 1'000'000;
  const Values v(n, 1);
  for (int round = 0; round < 10; ++round) {
    std::stop_source src;
    std::atomic<long> ops{0};
    auto plus = [&](std::int64_t a, std::int64_t b) {
      if (ops.fetch_add(1, std::memory_order_relaxed) == 0) src.request_stop();
      return a + b;
    };
    Values out(n, 0);
    EXPECT_THROW(weft::parallel_inclusive_scan(pool, v.begin(), v.end(), out.begin(), plus, src.get_token()),
                 weft::cancelled);
    EXPECT_LT(ops.load(), static_cast<long>(n - n / 4));
    EXPECT_EQ(out.back(), 0);  // window 2 is scanned from round 2 on
  }
}

// The comparator stops the sort on its first call; no element is lost.
template <class Sort>
void stop_at_first_comparison(const Sort& sort, long max_calls, const char* name) {
  weft::ThreadPool pool(workers(3));
  const Values v = weft::test::random_values(1'000'000, 1'000'000'000);
  Values want = v;
  std::sort(want.begin(), want.end());
  for (int round = 0; round < 3; ++round) {
    std::stop_source src;
    std::atomic<long> calls{0};
    auto less = [&](std::int64_t a, std::int64_t b) {
      if (calls.fetch_add(1, std::memory_order_relaxed) == 0) src.request_stop();
      return a < b;
    };
    Values got = v;
    EXPECT_THROW(sort(pool, got.begin(), got.end(), less, src.get_token()), weft::cancelled) << name;
    EXPECT_LE(calls.load(), max_calls) << name;
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << name;
  }
}

// parallel_sort: the partition pass of the first call finishes (n calls
// and a ninther; a whole sort takes ~20n), no other chunk starts. The
// stable sort: leaves hold at most 2 * kSortCutoff elements, at most one
// per thread runs (14 > log2 of that: std::stable_sort's bound per leaf),
// and no merge starts.
TEST(AlgoStop, SortsFromInsideAChunkStopAndKeepEveryElement) {
  weft::test::Watchdog dog("sorts stopped from the comparator");
  stop_at_first_comparison([](auto&&... a) { weft::parallel_sort(a...); }, 2'000'000, "sort");
  stop_at_first_comparison([](auto&&... a) { weft::parallel_stable_sort(a...); },
                           kThreads * 2 * weft::detail::kSortCutoff * 14, "stable sort");
}

// Stops at many points of a stable sort of move-only values (the last
// point is past its last comparison): whatever merges had run, every
// element is back in the range (none moved-from), or the range is sorted
// and the call returned.
TEST(AlgoStop, StableSortStoppedAnywhereLeavesEveryElementInTheRange) {
  weft::test::Watchdog dog("stable sort stopped anywhere");
  weft::ThreadPool pool(workers(2));
  const std::size_t n = 100'000;
  const Values keys = weft::test::random_values(n, 1000);
  for (long stop_at : {1L, 1000L, 100'000L, 500'000L, 1'000'000L, 1'500'000L, 1'700'000L, 100'000'000L}) {
    std::vector<std::unique_ptr<std::int64_t>> v;
    for (auto k : keys) v.push_back(std::make_unique<std::int64_t>(k));
    std::stop_source src;
    std::atomic<long> calls{0};
    auto less = [&](const auto& a, const auto& b) {
      if (calls.fetch_add(1, std::memory_order_relaxed) == stop_at) src.request_stop();
      return *a < *b;
    };
    bool stopped = false;
    try {
      weft::parallel_stable_sort(pool, v.begin(), v.end(), less, src.get_token());
    } catch (const weft::cancelled&) {
      stopped = true;
    }
    Values got;
    for (const auto& p : v) {
      ASSERT_NE(p, nullptr) << "an element was lost, stop at comparison " << stop_at;
      got.push_back(*p);
    }
    if (!stopped) {
      EXPECT_TRUE(std::is_sorted(got.begin(), got.end())) << stop_at;
    }
    Values want = keys;
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << stop_at;
    if (stop_at <= 1000) {
      EXPECT_TRUE(stopped) << "leaves and merges were left to skip";
    }
    if (!src.stop_requested()) {
      EXPECT_FALSE(stopped);
    }
  }
}

// No match: the blocks already claimed when the stop came are searched,
// no other; near the start blocks hold kFindMinBlock elements.
TEST(AlgoStop, FindFromInsideABlockClaimsNoNewBlock) {
  weft::test::Watchdog dog("find stopped from a block");
  weft::ThreadPool pool(workers(3));
  const Values v(1'000'000, 0);
  for (int round = 0; round < 20; ++round) {
    std::stop_source src;
    std::atomic<long> calls{0};
    auto is_one = [&](std::int64_t x) {
      if (calls.fetch_add(1, std::memory_order_relaxed) == 0) src.request_stop();
      return x == 1;
    };
    EXPECT_THROW(weft::parallel_find_if(pool, v.begin(), v.end(), is_one, src.get_token()), weft::cancelled);
    EXPECT_LE(calls.load(), kThreads * static_cast<long>(weft::detail::kFindMinBlock));
  }
}

// A match found before the stop is the answer: every block before it was
// searched, so it is std::find_if's, stop or not.
TEST(AlgoStop, FindReturnsAMatchFoundBeforeTheStop) {
  weft::ThreadPool pool(workers(3));
  Values v(1'000'000, 0);
  v[5000] = 1;
  v[7000] = 1;
  for (int round = 0; round < 20; ++round) {
    std::stop_source src;
    auto is_one = [&](std::int64_t x) {
      if (x == 1) src.request_stop();
      return x == 1;
    };
    EXPECT_EQ(weft::parallel_find_if(pool, v.begin(), v.end(), is_one, src.get_token()) - v.begin(), 5000);
    std::stop_source src2;
    EXPECT_TRUE(weft::parallel_any_of(
        pool, v.begin(), v.end(),
        [&](std::int64_t x) {
          if (x == 1) src2.request_stop();
          return x == 1;
        },
        src2.get_token()));
  }
}

TEST(AlgoStop, DefaultPoolFormsTakeTheTokenToo) {
  const Stopped stopped;
  const auto stop = stopped.src.get_token();
  Values v = weft::test::random_values(100'000, 1000);
  const Values before = v;
  Values out(v.size());
  EXPECT_THROW(weft::parallel_reduce(v.begin(), v.end(), std::int64_t{0}, std::plus<>{}, stop), weft::cancelled);
  EXPECT_THROW(
      weft::parallel_transform_reduce(v.begin(), v.end(), std::int64_t{0}, std::plus<>{}, std::negate<>{}, stop),
      weft::cancelled);
  EXPECT_THROW(weft::parallel_inclusive_scan(v.begin(), v.end(), out.begin(), stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_exclusive_scan(v.begin(), v.end(), out.begin(), std::int64_t{0}, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_sort(v.begin(), v.end(), stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_stable_sort(v.begin(), v.end(), stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_find_if(v.begin(), v.end(), [](std::int64_t) { return false; }, stop), weft::cancelled);
  EXPECT_THROW(weft::parallel_any_of(v.begin(), v.end(), [](std::int64_t) { return false; }, stop), weft::cancelled);
  EXPECT_EQ(v, before);
  std::stop_source live;
  EXPECT_EQ(weft::parallel_reduce(v.begin(), v.end(), std::int64_t{0}, std::plus<>{}, live.get_token()),
            std::accumulate(v.begin(), v.end(), std::int64_t{0}));
}

// An exception from the user's function says more than "stopped".
TEST(AlgoStop, AUserExceptionTakesPrecedenceOverCancelled) {
  weft::ThreadPool pool(workers(2));
  std::stop_source src;
  auto body = [&](long, long) -> long {
    src.request_stop();
    throw std::runtime_error("boom");
  };
  EXPECT_THROW(weft::parallel_reduce(pool, 0L, 1'000'000L, 0L, std::plus<>{}, body, 1000, src.get_token()),
               std::runtime_error);
}

}  // namespace
