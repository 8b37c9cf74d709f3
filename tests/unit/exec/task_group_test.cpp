#include "weft/exec/task_group.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "fork_join.hpp"
#include "watchdog.hpp"

namespace {

weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

using weft::test::fib;

TEST(TaskGroup, FibFromInsideAndOutsideThePool) {
  weft::test::Watchdog dog("fib(20)");
  for (int w : {1, 2, 4}) {
    weft::ThreadPool pool(workers(w));
    EXPECT_EQ(fib(pool, 20), 6765) << w << " workers, called from outside";
    auto f = pool.submit([&] { return fib(pool, 20); });
    EXPECT_EQ(f.get(weft::Inline::no), 6765) << w << " workers, root on a worker";
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
  EXPECT_EQ(f.get(weft::Inline::no), 200);
  EXPECT_EQ(depth_chain(pool, 25), 25);
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

TEST(TaskGroup, WaitWithNothingRunReturns) {
  weft::ThreadPool pool(workers(1));
  weft::TaskGroup g(pool);
  g.wait();
  SUCCEED();
}

}  // namespace
