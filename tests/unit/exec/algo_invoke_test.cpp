#include "weft/exec/parallel_invoke.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "algo_support.hpp"
#include "fork_join.hpp"
#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/topo/topology.hpp"

namespace {

using weft::test::invoke_fib;
using weft::test::workers;

TEST(ParallelInvoke, RunsEveryFunctionOnce) {
  weft::ThreadPool pool(workers(2));
  int a = 0;
  int b = 0;
  int c = 0;
  int d = 0;
  weft::parallel_invoke(pool, [&] { ++a; });
  weft::parallel_invoke(pool, [&] { ++a; }, [&] { ++b; }, [&] { ++c; }, [&] { ++d; });
  EXPECT_EQ(a, 2);
  EXPECT_EQ(b + c + d, 3);
}

TEST(ParallelInvoke, EveryFunctionRunsEvenWhenOneThrows) {
  weft::ThreadPool pool(workers(2));
  for (int thrower = 0; thrower < 3; ++thrower) {
    std::atomic<int> ran{0};
    auto f = [&](int i) {
      return [&ran, &thrower, i] {
        ran.fetch_add(1);
        if (i == thrower) throw std::runtime_error("boom");
      };
    };
    EXPECT_THROW(weft::parallel_invoke(pool, f(0), f(1), f(2)), std::runtime_error) << thrower;
    EXPECT_EQ(ran.load(), 3);
  }
  int x = 0;
  weft::parallel_invoke(pool, [&] { x = 1; }, [] {});
  EXPECT_EQ(x, 1);
}

// Two functions on a worker, the fork in the frame: both run whatever
// either throws, and the handed-off function's exception wins over the
// first function's. One worker, so the handed-off task always comes back
// to the forking worker and runs there, by the direct call.
TEST(ParallelInvoke, OnAWorkerBothRunAndTheHandedOffErrorWins) {
  weft::ThreadPool pool(workers(1));
  struct FirstError : std::runtime_error {
    FirstError() : std::runtime_error("first") {}
  };
  struct HandedError : std::runtime_error {
    HandedError() : std::runtime_error("handed off") {}
  };
  for (int throws = 0; throws < 4; ++throws) {  // bit 0: the first function, bit 1: the handed-off one
    std::atomic<int> ran{0};
    std::atomic<bool> on_worker{true};
    auto fork = pool.submit([&] {
      weft::parallel_invoke(
          pool,
          [&] {
            ran.fetch_add(1);
            if ((throws & 1) != 0) throw FirstError();
          },
          [&] {
            ran.fetch_add(1);
            if (!pool.is_worker()) on_worker = false;
            if ((throws & 2) != 0) throw HandedError();
          });
    });
    // get_remote(): the worker runs the fork (get() could run it here, off the pool).
    if ((throws & 2) != 0) {
      EXPECT_THROW(weft::detail::get_remote(fork), HandedError) << throws;
    } else if ((throws & 1) != 0) {
      EXPECT_THROW(weft::detail::get_remote(fork), FirstError) << throws;
    } else {
      EXPECT_NO_THROW(weft::detail::get_remote(fork));
    }
    EXPECT_EQ(ran.load(), 2) << throws;
    EXPECT_TRUE(on_worker.load()) << throws;
  }
}

TEST(ParallelInvoke, NestsToAnyDepthOnAOneWorkerPool) {
  weft::test::Watchdog dog("nested invoke on one worker");
  weft::ThreadPool pool(workers(1));
  EXPECT_EQ(pool.submit([&] { return invoke_fib(pool, 20); }).get(), 6765);
  EXPECT_EQ(invoke_fib(pool, 18), weft::test::fib(pool, 18));
}

// Every index once, for counts around the in-frame limit (more go to one
// allocation), from a worker (tasks in the frame) and from outside (a
// TaskGroup underneath).
TEST(ParallelInvokeN, CallsEveryIndexOnceForAnyCount) {
  weft::ThreadPool pool(workers(2));
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, weft::kParallelInvokeInFrame,
                        weft::kParallelInvokeInFrame + 1, weft::kParallelInvokeInFrame + 2, std::size_t{100}}) {
    for (bool inside : {false, true}) {
      std::vector<std::atomic<int>> seen(n);
      auto body = [&] { weft::parallel_invoke_n(pool, n, [&](std::size_t i) { seen[i].fetch_add(1); }); };
      if (inside)
        pool.submit(body).get();
      else
        body();
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_EQ(seen[i].load(), 1) << "n " << n << " index " << i << " inside " << inside;
    }
  }
}

TEST(ParallelInvokeN, ACountBeyondMemoryIsRefusedBeforeAnyCall) {
  weft::ThreadPool pool(workers(2));
  std::atomic<int> calls{0};
  auto body = [&] {
    weft::parallel_invoke_n(pool, std::numeric_limits<std::size_t>::max(), [&](std::size_t) { calls.fetch_add(1); });
  };
  EXPECT_THROW(pool.submit(body).get(), std::length_error);
  EXPECT_EQ(calls.load(), 0);
}

TEST(ParallelInvokeN, EveryIndexRunsEvenWhenOneThrows) {
  weft::ThreadPool pool(workers(2));
  constexpr std::size_t kN = weft::kParallelInvokeInFrame + 3;
  for (std::size_t thrower : {std::size_t{0}, kN / 2, kN - 1}) {
    std::atomic<std::size_t> ran{0};
    auto body = [&] {
      weft::parallel_invoke_n(pool, kN, [&](std::size_t i) {
        ran.fetch_add(1);
        if (i == thrower) throw std::runtime_error("boom");
      });
    };
    EXPECT_THROW(pool.submit(body).get(), std::runtime_error) << thrower;
    EXPECT_EQ(ran.load(), kN) << thrower;
  }
}

long tree_nodes(weft::ThreadPool& pool, int depth, std::size_t fan_out) {
  if (depth == 0) return 1;
  std::vector<long> below(fan_out);
  weft::parallel_invoke_n(pool, fan_out, [&](std::size_t i) { below[i] = tree_nodes(pool, depth - 1, fan_out); });
  long sum = 1;
  for (long b : below) sum += b;
  return sum;
}

TEST(ParallelInvokeN, NestsToAnyDepthOnAOneWorkerPool) {
  weft::test::Watchdog dog("nested invoke_n on one worker");
  weft::ThreadPool pool(workers(1));
  EXPECT_EQ(pool.submit([&] { return tree_nodes(pool, 5, 10); }).get(), 111'111);
  EXPECT_EQ(tree_nodes(pool, 3, 12), 1 + 12 + 144 + 1728);
}

// Waits up to 5 s for `done()`; whether it came.
template <class Done>
bool within_5s(const Done& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

// An n-way join on a worker takes its tasks back together while no worker
// is idle; when one goes idle between two of them, the ones not yet run go
// back to the pool for it. Worker B is held in a task until f(2) runs, so
// the join (worker A's, an older task queued below the fork) takes f(2),
// f(1) and f(0) back together; f(2) frees B and returns once B is idle;
// f(1) then waits for f(0) to start, which only B can start if f(0) went
// back to the pool. (f(1) waiting for f(0) is what the contract forbids:
// here it is the probe, bounded by the timeout.)
TEST(ParallelInvokeN, SiblingsTakenBackGoBackToAWorkerThatGoesIdle) {
  weft::test::Watchdog dog("siblings back to an idle worker");
  weft::ThreadPool pool(workers(2));
  std::atomic<bool> b_held{false}, release_b{false}, older_ran{false}, f0_started{false};
  std::atomic<bool> f0_seen_by_f1{false};
  std::thread::id a, f0_thread;
  auto hold = pool.submit([&] {
    b_held = true;
    within_5s([&] { return release_b.load(); });
  });
  auto join = pool.submit([&] {
    a = std::this_thread::get_id();
    if (!within_5s([&] { return b_held.load(); })) return;
    pool.post([&] { older_ran = true; });  // the older task below the fork
    weft::parallel_invoke_n(pool, 4, [&](std::size_t i) {
      if (i == 2) {
        release_b = true;
        within_5s([&] { return older_ran.load(); });
        within_5s([&] { return pool.idle_worker_count() > 0; });
      } else if (i == 1) {
        f0_seen_by_f1 = within_5s([&] { return f0_started.load(); });
      } else if (i == 0) {
        f0_thread = std::this_thread::get_id();
        f0_started = true;
      }
    });
  });
  // Remote waits: a get() from here could run a still-queued task itself.
  weft::detail::get_remote(hold);
  weft::detail::get_remote(join);
  EXPECT_TRUE(f0_seen_by_f1.load()) << "f(0) stayed out of the idle worker's reach while f(1) ran";
  EXPECT_NE(f0_thread, a);
}

TEST(DefaultPool, OnePoolForEveryThreadSizedByAvailableParallelism) {
  std::vector<weft::ThreadPool*> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&seen, t] { seen[t] = &weft::default_pool(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::set<weft::ThreadPool*>(seen.begin(), seen.end()).size(), 1u);
  EXPECT_EQ(seen[0]->size(), weft::available_parallelism());
  std::atomic<int> n{0};
  weft::parallel_invoke([&] { n++; }, [&] { n++; });
  EXPECT_EQ(n.load(), 2);
}

}  // namespace
