#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/task_group.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "fork_join.hpp"
#include "watchdog.hpp"

namespace {

weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

using weft::test::fib;

// A group lives in each fork's stack frame, so its size is stack per level
// of a recursion (UTS T3 nests 1,572 deep): one cache line, and no 64-byte
// alignment, which would make every such frame realign its stack.
static_assert(sizeof(weft::TaskGroup) <= 64, "a TaskGroup is one cache line");
static_assert(alignof(weft::TaskGroup) <= alignof(std::max_align_t), "a TaskGroup needs no over-aligned frame");

TEST(TaskGroup, FibFromInsideAndOutsideThePool) {
  weft::test::Watchdog dog("fib(20)");
  for (int w : {1, 2, 4}) {
    weft::ThreadPool pool(workers(w));
    EXPECT_EQ(fib(pool, 20), 6765) << w << " workers, called from outside";
    auto f = pool.submit([&] { return fib(pool, 20); });
    EXPECT_EQ(weft::detail::get_remote(f), 6765) << w << " workers, root on a worker";
  }
}

int depth_chain(weft::ThreadPool& pool, int depth) {
  if (depth == 0) return 0;
  int inner = -1;
  weft::TaskGroup g(pool);
  g.run([&] { inner = depth_chain(pool, depth - 1); });
  g.wait();
  return inner + 1;
}

TEST(TaskGroup, NestsDeeplyOnOneWorker) {
  weft::test::Watchdog dog("nested groups");
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([&] { return depth_chain(pool, 200); });
  EXPECT_EQ(weft::detail::get_remote(f), 200);
  EXPECT_EQ(depth_chain(pool, 25), 25);
}

// A task of the group forks on another worker; the builder, blocked in
// wait() and helping, takes the handed-off half, which run()s one more task
// of the group (legal: the forking task holds its unit). That run() is on
// the builder's thread under the builder's own frame, but the builder
// flushed its local count when it began to block, so it must count on the
// root; counted locally, the new task's finish takes the forking task's
// unit off the root and wait() returns while that task still runs.
TEST(TaskGroup, ARunFromAForkTheWaitingBuilderHelpsWithCountsOnTheRoot) {
  weft::test::Watchdog dog("run from a helped fork");
  weft::ThreadPool pool(workers(2));
  std::atomic<bool> a_started{false};
  std::atomic<bool> handed_ran{false};
  std::atomic<bool> a_done{false};
  auto root = pool.submit([&] {
    std::optional<weft::TaskGroup> g;
    g.emplace(pool);  // built here, on a worker
    g->run([&] {      // A: the other worker takes it (this one waits below)
      a_started = true;
      weft::parallel_invoke(
          pool,
          [&] {  // in place: holds this worker until the builder ran the other half
            while (!handed_ran) std::this_thread::yield();
          },
          [&] {  // handed off: only the builder, helping, can take it
            g->run([] {});
            handed_ran = true;
          });
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      a_done = true;
    });
    while (!a_started) std::this_thread::yield();
    g->wait();
    const bool done_when_wait_returned = a_done;
    while (!a_done) std::this_thread::yield();  // keep g alive for A whatever happened
    g->wait();
    return done_when_wait_returned;
  });
  EXPECT_TRUE(weft::detail::get_remote(root)) << "wait() returned before the task that forked was done";
}

// A chain thousands of groups deep, each level's wait on the one worker:
// every wait but the innermost finds its task still queued and would
// block, so the self-wait check runs at every level. Checked by counting:
// the builder's own waits must walk no frame (before the check became
// O(1), each walked the whole chain below it: ~d^2/2 = 12.5 million frames
// here). Needs a stack bigger than the default for 5,000 nested waits.
TEST(TaskGroup, ADeepChainOfWaitsWalksNoFrames) {
  weft::test::Watchdog dog("a 5,000-deep chain of groups", std::chrono::seconds(60));
  weft::PoolOptions o = workers(1);
  o.stack_size = std::size_t{256} << 20;
  weft::ThreadPool pool(o);
  constexpr int kDepth = 5000;
  const std::uint64_t before = weft::detail::self_wait_frames_walked();
  auto f = pool.submit([&] { return depth_chain(pool, kDepth); });
  EXPECT_EQ(weft::detail::get_remote(f), kDepth);
  EXPECT_EQ(weft::detail::self_wait_frames_walked() - before, 0u);
}

TEST(TaskGroup, TheDefaultGroupRunsOnTheCallingWorkersPool) {
  weft::test::Watchdog dog("TaskGroup() on the current pool");
  weft::ThreadPool pool(workers(2));
  std::atomic<int> on_pool{0};
  auto f = pool.submit([&] {
    EXPECT_EQ(weft::ThreadPool::current(), &pool);
    weft::TaskGroup g;  // no pool named: this worker's
    for (int i = 0; i < 64; ++i)
      g.run([&] {
        if (weft::ThreadPool::current() == &pool) on_pool.fetch_add(1);
      });
    g.wait();
  });
  weft::detail::get_remote(f);
  EXPECT_EQ(on_pool.load(), 64);
  EXPECT_EQ(weft::ThreadPool::current(), nullptr);  // this thread is no worker
}

TEST(TaskGroup, FirstExceptionRethrownAllChildrenRun) {
  weft::ThreadPool pool(workers(2));
  weft::TaskGroup g(pool);
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i)
    g.run([&, i] {
      ran.fetch_add(1);
      if (i % 10 == 3) throw std::runtime_error("child " + std::to_string(i));
    });
  EXPECT_THROW(g.wait(), std::runtime_error);
  EXPECT_EQ(ran.load(), 50);
  // Reusable, and the error was consumed.
  g.run([&] { ran.fetch_add(1); });
  g.wait();
  EXPECT_EQ(ran.load(), 51);
}

TEST(TaskGroup, TasksMayRunMoreTasksIntoTheGroup) {
  weft::ThreadPool pool(workers(2));
  weft::TaskGroup g(pool);
  std::atomic<int> n{0};
  for (int i = 0; i < 10; ++i)
    g.run([&] {
      for (int k = 0; k < 10; ++k) g.run([&] { n.fetch_add(1); });
    });
  g.wait();
  EXPECT_EQ(n.load(), 100);
}

// A task that waits for its own group waits for itself: wait() must say so
// instead of hanging, whether the task runs straight on a worker or further
// up a worker's stack, under another group's wait that helped run it.
std::string wait_from_inside(weft::TaskGroup& g) {
  try {
    g.wait();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "wait() returned";
}

TEST(TaskGroup, WaitFromItsOwnTaskThrows) {
  weft::test::Watchdog dog("TaskGroup::wait() from its own task", std::chrono::seconds(30));
  const std::string expected = "TaskGroup::wait() called from one of its own tasks";
  for (int w : {1, 2}) {
    weft::ThreadPool pool(workers(w));
    weft::TaskGroup g(pool);
    std::string direct;
    g.run([&] { direct = wait_from_inside(g); });
    g.wait();
    EXPECT_NE(direct.find(expected), std::string::npos) << w << " workers: " << direct;
  }
  // One worker: the inner group's task can only run nested inside g's task,
  // by inner.wait() helping.
  weft::ThreadPool pool(workers(1));
  weft::TaskGroup g(pool);
  std::string nested;
  g.run([&] {
    weft::TaskGroup inner(pool);
    inner.run([&] { nested = wait_from_inside(g); });
    inner.wait();
  });
  g.wait();
  EXPECT_NE(nested.find(expected), std::string::npos) << nested;
}

TEST(TaskGroup, WaitOnAnotherGroupFromATaskStillWorks) {
  weft::test::Watchdog dog("wait on another group from a task");
  weft::ThreadPool pool(workers(1));
  weft::TaskGroup outer(pool);
  weft::TaskGroup other(pool);
  std::atomic<int> ran{0};
  other.run([&] { ran.fetch_add(1); });
  outer.run([&] {
    other.wait();
    ran.fetch_add(1);
  });
  outer.wait();
  EXPECT_EQ(ran.load(), 2);
}

// The join's fast path takes the builder's own queued tasks of the group
// back off the bottom of its deque; a task of another group queued above
// them stops it, and the helping wait runs the rest. On one worker nothing
// is stolen, so the order is exact: a2 (newest, on top) by the fast path,
// then b (another group's, now on top) and a1 by the helping wait. Every
// one is counted as a task the worker ran.
TEST(TaskGroup, TheJoinRunsItsOwnQueuedTasksFirstAndLeavesTheRestToTheHelpingWait) {
  weft::test::Watchdog dog("the join's fast path");
  weft::ThreadPool pool(workers(1));
  std::string order;
  auto f = pool.submit([&] {
    const std::uint64_t before = pool.stats().total.tasks_run;
    weft::TaskGroup g(pool);
    weft::TaskGroup other(pool);
    g.run([&] { order += "a1 "; });
    other.run([&] { order += "b "; });
    g.run([&] { order += "a2 "; });
    g.wait();
    order += "| ";
    other.wait();
    return pool.stats().total.tasks_run - before;
  });
  EXPECT_EQ(weft::detail::get_remote(f), 3u);
  EXPECT_EQ(order, "a2 b a1 | ");
}

// An exception from a task the fast path ran is rethrown by that wait(),
// and the group is usable again afterwards.
TEST(TaskGroup, TheJoinsFastPathRethrowsAndTheGroupGoesOn) {
  weft::test::Watchdog dog("fast path exception");
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([&] {
    weft::TaskGroup g(pool);
    g.run([] { throw std::runtime_error("child"); });
    std::string what;
    try {
      g.wait();
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    int ran = 0;
    g.run([&] { ++ran; });
    g.wait();
    return what + " " + std::to_string(ran);
  });
  EXPECT_EQ(weft::detail::get_remote(f), "child 1");
}

// The builder's run()s count on its local word (no RMW); a wait() on
// another thread must still count them: it returns only once every one of
// them has run, whether a worker ran it or the builder's own join did.
TEST(TaskGroup, AWaitOnAnotherThreadCountsTheBuildersTasks) {
  weft::test::Watchdog dog("a wait on another thread");
  weft::ThreadPool pool(workers(2));
  weft::TaskGroup g(pool);
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  for (int i = 0; i < 8; ++i)
    g.run([&] {
      while (!release.load(std::memory_order_acquire)) std::this_thread::yield();
      ran.fetch_add(1, std::memory_order_relaxed);
    });
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    g.wait();
    returned.store(true, std::memory_order_release);
    EXPECT_EQ(ran.load(std::memory_order_relaxed), 8);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(returned.load(std::memory_order_acquire)) << "returned while every task was held";
  release.store(true, std::memory_order_release);
  waiter.join();
  EXPECT_EQ(ran.load(std::memory_order_relaxed), 8);
  g.wait();  // the builder's own wait: nothing left
}

// The builder on a worker joins its own tasks (popping them back, no RMW)
// while a thread outside the pool waits on the same group: both return,
// after every task, and the group is reusable.
TEST(TaskGroup, TheBuildersJoinAndAnOutsideWaitEndTogether) {
  weft::test::Watchdog dog("the builder's join and an outside wait");
  weft::ThreadPool pool(workers(2));
  for (int round = 0; round < 50; ++round) {
    std::atomic<weft::TaskGroup*> shared{nullptr};
    std::atomic<int> ran{0};
    std::atomic<bool> outside_done{false};
    std::thread waiter([&] {
      weft::TaskGroup* g = nullptr;
      while ((g = shared.load(std::memory_order_acquire)) == nullptr) std::this_thread::yield();
      g->wait();
      EXPECT_EQ(ran.load(std::memory_order_relaxed), 64) << "round " << round;
      outside_done.store(true, std::memory_order_release);
    });
    pool.submit([&] {
       weft::TaskGroup g(pool);
       for (int i = 0; i < 64; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
       shared.store(&g, std::memory_order_release);
       g.wait();
       EXPECT_EQ(ran.load(std::memory_order_relaxed), 64);
       // The group lives until the outside wait is over.
       while (!outside_done.load(std::memory_order_acquire)) std::this_thread::yield();
     }).get();
    waiter.join();
  }
}

TEST(TaskGroup, WaitWithNothingRunReturns) {
  weft::ThreadPool pool(workers(1));
  weft::TaskGroup g(pool);
  g.wait();
  SUCCEED();
}

}  // namespace
