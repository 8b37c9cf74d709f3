// parallel_invoke's join on a worker under load (run under ThreadSanitizer):
// the handed-off functions' tasks live in the caller's stack frame, so a
// join that returned before a thief's finish, or a task run twice or never,
// shows here as a wrong count or as TSan's report of a race on a frame
// that is gone (tests/model/invoke_join.pml is the protocol's model).
// Sizes come from stress_count().
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <future>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "fork_join.hpp"
#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using weft::test::invoke_fib;

// Runs f on one of the pool's workers, where parallel_invoke() forks in
// the caller's frame (a Future's get() could run it here instead, on a
// thread outside the pool), and returns what it returns.
template <class F>
auto on_a_worker(weft::ThreadPool& pool, F f) {
  using R = decltype(f());
  std::promise<R> done;
  pool.post([&] {
    EXPECT_EQ(weft::ThreadPool::current(), &pool);
    try {
      if constexpr (std::is_void_v<R>) {
        f();
        done.set_value();
      } else {
        done.set_value(f());
      }
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  return done.get_future().get();  // std::future: waits, never runs the task here
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

// A three-way tree whose every leaf marks its own slot once: a task run
// twice or never leaves a slot at 2 or 0.
void mark_leaves(weft::ThreadPool& pool, std::vector<std::atomic<int>>& slots, std::size_t begin, std::size_t end) {
  if (end - begin == 1) {
    slots[begin].fetch_add(1, std::memory_order_relaxed);  // relaxed: read after the join, which orders it
    return;
  }
  const std::size_t third = (end - begin + 2) / 3;
  const std::size_t m1 = std::min(end, begin + third);
  const std::size_t m2 = std::min(end, m1 + third);
  weft::parallel_invoke(
      pool, [&] { mark_leaves(pool, slots, begin, m1); },
      [&] {
        if (m2 > m1) mark_leaves(pool, slots, m1, m2);
      },
      [&] {
        if (end > m2) mark_leaves(pool, slots, m2, end);
      });
}

// The same with parallel_invoke_n() and a fan-out of 2 to 80 per node:
// up to kParallelInvokeInFrame (64) tasks in the frame, more on the heap.
void mark_leaves_n(weft::ThreadPool& pool, std::vector<std::atomic<int>>& slots, std::size_t begin, std::size_t end) {
  if (end - begin == 1) {
    slots[begin].fetch_add(1, std::memory_order_relaxed);  // relaxed: read after the join, which orders it
    return;
  }
  static_assert(weft::kParallelInvokeInFrame < 80, "both kinds of storage");
  const std::size_t fan = 2 + (begin * 7 + end) % std::min<std::size_t>(79, end - begin);  // 2 to 80
  const std::size_t step = (end - begin + fan - 1) / fan;
  const std::size_t parts = (end - begin + step - 1) / step;
  weft::parallel_invoke_n(pool, parts, [&](std::size_t i) {
    mark_leaves_n(pool, slots, begin + i * step, std::min(end, begin + (i + 1) * step));
  });
}

TEST(InvokeStress, FibOnPoolsOfSeveralSizes) {
  weft::test::Watchdog dog("invoke fib");
  const int n = static_cast<int>(weft::test::stress_count(20, 16));
  for (int w : {1, 2, 4}) {
    weft::ThreadPool pool(weft::PoolOptions{.workers = w});
    for (int round = 0; round < 3; ++round)
      EXPECT_EQ(on_a_worker(pool, [&] { return invoke_fib(pool, n); }), fib_serial(n));
  }
}

// Three rounds of mark(pool, slots, 0, leaves) on a worker of 3: every
// slot must end at 1.
template <class Mark>
void expect_every_leaf_once(const char* what, Mark mark) {
  weft::test::Watchdog dog(what);
  const auto leaves = static_cast<std::size_t>(weft::test::stress_count(100'000, 5'000));
  weft::ThreadPool pool(weft::PoolOptions{.workers = 3});
  for (int round = 0; round < 3; ++round) {
    std::vector<std::atomic<int>> slots(leaves);
    on_a_worker(pool, [&] { mark(pool, slots, 0, leaves); });
    std::size_t wrong = 0;
    for (const auto& s : slots) wrong += s.load(std::memory_order_relaxed) != 1;
    EXPECT_EQ(wrong, 0U) << "round " << round;
  }
}

TEST(InvokeStress, EveryLeafOfAThreeWayTreeRunsOnce) { expect_every_leaf_once("invoke tree", mark_leaves); }

TEST(InvokeStress, EveryLeafOfAnNWayTreeRunsOnce) { expect_every_leaf_once("invoke_n tree", mark_leaves_n); }

// Throws from every depth, on whichever thread runs the function: every
// function still runs, and the join rethrows.
long throwing(weft::ThreadPool& pool, int n, std::atomic<long>& calls) {
  calls.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after the joins
  if (n < 2) {
    if (n == 1) throw std::runtime_error("leaf");
    return 0;
  }
  weft::parallel_invoke(
      pool, [&] { (void)throwing(pool, n - 2, calls); }, [&] { (void)throwing(pool, n - 1, calls); });
  return 0;
}

TEST(InvokeStress, ExceptionsFromStolenTasksReachTheJoinAndNothingIsSkipped) {
  weft::test::Watchdog dog("invoke throws");
  const int n = static_cast<int>(weft::test::stress_count(16, 14));
  weft::ThreadPool pool(weft::PoolOptions{.workers = 2});
  // Every call runs its two halves whatever they throw, so the number of
  // calls is the whole call tree's.
  const long tree = 2 * fib_serial(n + 1) - 1;
  for (int round = 0; round < 5; ++round) {
    std::atomic<long> calls{0};
    EXPECT_THROW(on_a_worker(pool, [&] { return throwing(pool, n, calls); }), std::runtime_error);
    EXPECT_EQ(calls.load(), tree);
  }
}

// The first function posts tasks, so the handed-off task is no longer the
// newest in the deque when the join comes: the join pops the posted task,
// puts it back, and waits for its own (helping) instead of taking it back.
// On one worker nobody else can run either: the helping wait must.
TEST(InvokeStress, AJoinUnderPostedTasksWaitsForTheRest) {
  weft::test::Watchdog dog("invoke under posts");
  const auto rounds = weft::test::stress_count(2000, 500);
  for (int workers : {1, 2}) {
    weft::ThreadPool pool(weft::PoolOptions{.workers = workers});
    std::atomic<long> posted{0};
    std::atomic<long> handed{0};
    on_a_worker(pool, [&] {
      for (std::int64_t r = 0; r < rounds; ++r) {
        int first = 0;
        int second = 0;
        weft::parallel_invoke(
            pool,
            [&] {
              pool.post([&posted] { posted.fetch_add(1, std::memory_order_relaxed); });
              ++first;
            },
            [&] {
              handed.fetch_add(1, std::memory_order_relaxed);
              ++second;
            });
        EXPECT_EQ(first + second, 2);
        // The same under parallel_invoke_n()'s join loop: f(2) runs here.
        std::atomic<int> calls{0};  // the calls may run on either worker at once
        weft::parallel_invoke_n(pool, 3, [&](std::size_t i) {
          if (i == 2) pool.post([&posted] { posted.fetch_add(1, std::memory_order_relaxed); });
          handed.fetch_add(1, std::memory_order_relaxed);
          calls.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after the join, which orders it
        });
        EXPECT_EQ(calls.load(std::memory_order_relaxed), 3);
      }
    });
    pool.wait_idle();
    EXPECT_EQ(posted.load(), 2 * rounds) << workers << " workers";
    EXPECT_EQ(handed.load(), 4 * rounds) << workers << " workers";
  }
}

// Tasks of a group fork with parallel_invoke, and both halves run() more
// tasks of the group, while its builder waits and helps (so it may run a
// half itself): every task is done when wait() returns.
TEST(InvokeStress, ForksInsideAGroupRunMoreOfItsTasks) {
  weft::test::Watchdog dog("invoke inside a group");
  const auto rounds = weft::test::stress_count(2'000, 300);
  weft::ThreadPool pool(weft::PoolOptions{.workers = 3});
  on_a_worker(pool, [&] {
    for (std::int64_t r = 0; r < rounds; ++r) {
      std::atomic<int> ran{0};
      {
        weft::TaskGroup g(pool);
        const auto half = [&] {
          g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });  // relaxed: read after wait()
          ran.fetch_add(1, std::memory_order_relaxed);
        };
        for (int k = 0; k < 4; ++k) {
          g.run([&] {
            weft::parallel_invoke(pool, half, half);
            ran.fetch_add(1, std::memory_order_relaxed);
          });
        }
        g.wait();
        EXPECT_EQ(ran.load(std::memory_order_relaxed), 4 * 5) << "round " << r;
      }
    }
  });
}

// Outside threads (a TaskGroup underneath) and workers (tasks in the frame)
// invoking on one pool at once.
TEST(InvokeStress, OutsideThreadsAndWorkersTogether) {
  weft::test::Watchdog dog("invoke inside and outside");
  const int n = static_cast<int>(weft::test::stress_count(18, 15));
  weft::ThreadPool pool(weft::PoolOptions{.workers = 2});
  std::vector<std::thread> outside;
  std::vector<long> got(3, -1);
  for (std::size_t t = 0; t < got.size(); ++t) outside.emplace_back([&, t] { got[t] = invoke_fib(pool, n); });
  const long inside = on_a_worker(pool, [&] { return invoke_fib(pool, n); });
  for (auto& t : outside) t.join();
  EXPECT_EQ(inside, fib_serial(n));
  for (long g : got) EXPECT_EQ(g, fib_serial(n));
}

}  // namespace
