#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/task_group.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>

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

TEST(TaskGroup, WaitWithNothingRunReturns) {
  weft::ThreadPool pool(workers(1));
  weft::TaskGroup g(pool);
  g.wait();
  SUCCEED();
}

}  // namespace
