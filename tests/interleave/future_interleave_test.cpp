// Futures' state-word races under seeded random interleavings (the
// sched_point() seams in future.hpp): cancel against the worker taking the
// task, then() attaching against the task completing, when_all's arrivals.
// Each seed perturbs every sched point differently; a failure names its seed.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "future_support.hpp"
#include "interleave.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/exec/when_all.hpp"

namespace {

using weft::test::Counted;
using weft::test::workers;

TEST(InterleaveFuture, CancelRacingStartHasExactlyOneOutcome) {
  long ran = 0, cancelled = 0;
  weft::test::for_each_interleaving("future cancel vs start", 400, [&](std::uint64_t) {
    weft::ThreadPool pool(workers(2));
    for (int i = 0; i < 50; ++i) {
      std::atomic<int> runs{0};
      auto f = pool.submit(Counted(&runs));
      if (f.cancel()) {
        ASSERT_THROW(f.get(), weft::cancelled);
        ASSERT_EQ(runs.load(), 0);
        ++cancelled;
      } else {
        ASSERT_EQ(f.get(), 1);
        ASSERT_EQ(runs.load(), 1);
        ++ran;
      }
    }
    pool.wait_idle();
    ASSERT_EQ(Counted::live.load(), 0);
  });
  std::printf("cancel vs start: %ld ran, %ld cancelled\n", ran, cancelled);
  EXPECT_GT(ran + cancelled, 0);
}

TEST(InterleaveFuture, ThenAttachingRacingCompletionFiresOnce) {
  weft::test::for_each_interleaving("future then vs complete", 400, [&](std::uint64_t) {
    weft::ThreadPool pool(workers(2));
    std::atomic<int> calls{0};
    std::vector<weft::Future<int>> fs;
    for (int i = 0; i < 50; ++i)
      fs.push_back(pool.submit([i] { return i; }).then([&calls](int x) {
        calls.fetch_add(1);
        return x + 1;
      }));
    for (int i = 0; i < 50; ++i) ASSERT_EQ(fs[static_cast<std::size_t>(i)].get(), i + 1);
    ASSERT_EQ(calls.load(), 50);
  });
}

TEST(InterleaveFuture, CancelContinuationRacingItsAntecedent) {
  weft::test::for_each_interleaving("cancel a continuation vs its antecedent", 400, [&](std::uint64_t) {
    weft::ThreadPool pool(workers(2));
    for (int i = 0; i < 30; ++i) {
      std::atomic<int> runs{0};
      auto f = pool.submit([] { return 1; }).then([c = Counted(&runs)](int x) { return x + c(); });
      if (f.cancel()) {
        ASSERT_THROW(f.get(), weft::cancelled);
        ASSERT_EQ(runs.load(), 0);
      } else {
        ASSERT_EQ(f.get(), 2);
        ASSERT_EQ(runs.load(), 1);
      }
    }
    pool.wait_idle();
    ASSERT_EQ(Counted::live.load(), 0);
  });
}

TEST(InterleaveFuture, WhenAllAndWhenAnyArrivals) {
  weft::test::for_each_interleaving("when_all/when_any arrivals", 400, [&](std::uint64_t) {
    weft::ThreadPool pool(workers(2));
    std::vector<weft::Future<int>> all, any;
    for (int i = 0; i < 8; ++i) {
      all.push_back(pool.submit([i] { return i; }));
      any.push_back(pool.submit([i] { return i; }));
    }
    const std::vector<int> v = weft::when_all(std::move(all)).get();
    for (int i = 0; i < 8; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], i);
    ASSERT_LT(weft::when_any(std::move(any)).get(), 8u);
    pool.wait_idle();
  });
}

}  // namespace
