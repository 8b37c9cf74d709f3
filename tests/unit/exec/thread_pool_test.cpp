#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/thread_pool.hpp"

#include <gtest/gtest.h>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "throws.hpp"
#include "watchdog.hpp"
#include "weft/sync/event.hpp"
#include "weft/topo/affinity.hpp"

using namespace std::chrono_literals;

namespace {

weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

TEST(ThreadPool, ZeroOrNegativeWorkersIsAnError) {
  EXPECT_THROW(weft::ThreadPool(workers(0)), std::invalid_argument);
  EXPECT_THROW(weft::ThreadPool(workers(-2)), std::invalid_argument);
  try {
    weft::ThreadPool p(workers(0));
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("got 0"), std::string::npos) << e.what();
  }
}

TEST(ThreadPool, DefaultSizeIsAvailableParallelism) {
  weft::ThreadPool pool;
  EXPECT_EQ(pool.size(), weft::available_parallelism());
}

TEST(ThreadPool, PostRunsEveryTask) {
  weft::test::Watchdog dog("post runs every task");
  weft::ThreadPool pool(workers(2));
  std::atomic<int> n{0};
  for (int i = 0; i < 10000; ++i) pool.post([&] { n.fetch_add(1, std::memory_order_relaxed); });
  pool.wait_idle();
  EXPECT_EQ(n.load(), 10000);
}

TEST(ThreadPool, SubmitReturnsValuesAndVoid) {
  weft::ThreadPool pool(workers(2));
  auto a = pool.submit([] { return 6 * 7; });
  auto b = pool.submit([] { return std::string("weft"); });
  int side = 0;
  auto c = pool.submit([&] { side = 5; });
  EXPECT_EQ(a.get(), 42);
  EXPECT_EQ(b.get(), "weft");
  c.get();
  EXPECT_EQ(side, 5);
  EXPECT_FALSE(a.valid());
  EXPECT_THROW(a.get(), std::future_error);
}

TEST(ThreadPool, GetRethrowsTheTasksException) {
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  EXPECT_TRUE(weft::test::throws_what<std::runtime_error>([&] { f.get(); }, "boom")) << "from get()";
}

TEST(ThreadPool, WaitForTimesOutThenSucceeds) {
  weft::test::Watchdog dog("wait_for");
  weft::ThreadPool pool(workers(1));
  weft::Event release;
  auto f = pool.submit([&] {
    release.wait();
    return 1;
  });
  // wait_for never runs the task in place, so it times out while the worker
  // is blocked (or has not started it).
  EXPECT_FALSE(f.wait_for(20ms));
  EXPECT_FALSE(f.ready());
  release.set();
  EXPECT_TRUE(f.wait_for(10s));
  EXPECT_TRUE(f.ready());
  EXPECT_EQ(f.get(), 1);
}

TEST(ThreadPool, ForcedRemoteGetIsRunByAWorker) {
  weft::ThreadPool pool(workers(2));
  for (int i = 0; i < 100; ++i) {
    auto f = pool.submit([] { return weft::ThreadPool::current_worker_index(); });
    EXPECT_GE(weft::detail::get_remote(f), 0);
  }
}

TEST(ThreadPool, InlineGetMayRunInPlace) {
  weft::ThreadPool pool(workers(1));
  weft::Event hold;
  pool.post([&] { hold.wait(); });  // keep the only worker busy
  auto f = pool.submit([] { return weft::ThreadPool::current_worker_index(); });
  EXPECT_EQ(f.get(), -1) << "the unstarted task should have run here, outside the pool";
  hold.set();
  pool.wait_idle();
}

// A pool of one worker, nested submit+get from inside tasks: the waiting
// worker runs the inner tasks itself, so nothing deadlocks.
int nested(weft::ThreadPool& pool, int depth) {
  if (depth == 0) return 1;
  auto f = pool.submit([&pool, depth] { return nested(pool, depth - 1); });
  auto g = pool.submit([&pool, depth] { return nested(pool, depth - 1) ; });
  return weft::detail::get_remote(f) + g.get();
}

TEST(ThreadPool, NestedGetOnOneWorkerDoesNotDeadlock) {
  weft::test::Watchdog dog("nested submit+get on a pool of one", std::chrono::seconds(60));
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([&] { return nested(pool, 10); });
  EXPECT_EQ(weft::detail::get_remote(f), 1024);
}

TEST(ThreadPool, PostedExceptionIsRethrownByWaitIdleAndPoolStaysUsable) {
  weft::ThreadPool pool(workers(2));
  pool.post([] { throw std::runtime_error("posted"); });
  pool.post([] { throw std::runtime_error("second"); });
  EXPECT_THROW(pool.wait_idle(), std::runtime_error);
  pool.wait_idle();  // reported once
  std::atomic<int> n{0};
  pool.post([&] { n = 1; });
  pool.wait_idle();
  EXPECT_EQ(n.load(), 1);
}

TEST(ThreadPool, SubmitAfterShutdownThrows) {
  weft::ThreadPool pool(workers(2));
  pool.shutdown();
  EXPECT_THROW(pool.post([] {}), std::runtime_error);
  EXPECT_THROW((void)pool.submit([] { return 1; }), std::runtime_error);
  pool.shutdown();  // idempotent
}

TEST(ThreadPool, DestructorRunsEveryQueuedTask) {
  weft::test::Watchdog dog("destroy with queued tasks");
  std::atomic<int> n{0};
  {
    weft::ThreadPool pool(workers(2));
    for (int i = 0; i < 100000; ++i) pool.post([&] { n.fetch_add(1, std::memory_order_relaxed); });
  }
  EXPECT_EQ(n.load(), 100000);
}

TEST(ThreadPool, DestructorRunsTasksSpawnedDuringShutdown) {
  weft::test::Watchdog dog("nested posts during shutdown");
  std::atomic<int> n{0};
  {
    weft::ThreadPool pool(workers(2));
    for (int i = 0; i < 100; ++i)
      pool.post([&] {
        for (int k = 0; k < 100; ++k) pool.post([&] { n.fetch_add(1, std::memory_order_relaxed); });
      });
  }
  EXPECT_EQ(n.load(), 10000);
}

TEST(ThreadPool, IdlePoolIsDestroyedWithoutHanging) {
  weft::test::Watchdog dog("destroy an idle pool", std::chrono::seconds(10));
  for (int i = 0; i < 20; ++i) weft::ThreadPool pool(workers(3));
  SUCCEED();
}

TEST(ThreadPool, WaitIdleFromAWorkerIsRefused) {
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([&] {
    try {
      pool.wait_idle();
    } catch (const std::logic_error&) {
      return true;
    }
    return false;
  });
  EXPECT_TRUE(weft::detail::get_remote(f));
}

TEST(ThreadPool, WorkerIdentity) {
  weft::ThreadPool pool(workers(2));
  EXPECT_FALSE(pool.is_worker());
  EXPECT_EQ(weft::ThreadPool::current_worker_index(), -1);
  auto f = pool.submit([&] { return pool.is_worker(); });
  EXPECT_TRUE(weft::detail::get_remote(f));
}

TEST(ThreadPool, PlacementPinsWorkers) {
  weft::PoolOptions o;
  o.workers = 2;
  o.placement = weft::Placement::compact;
  weft::ThreadPool pool(o);
  ASSERT_EQ(pool.cpus().size(), 2u);
  for (int i = 0; i < 50; ++i) {
    auto f = pool.submit([&] {
      const int idx = weft::ThreadPool::current_worker_index();
      return weft::current_cpu() == pool.cpus()[static_cast<std::size_t>(idx)];
    });
    EXPECT_TRUE(weft::detail::get_remote(f));
  }
}

TEST(ThreadPool, OnePerCoreBeyondTheCoresIsAnError) {
  weft::PoolOptions o;
  o.workers = static_cast<int>(weft::Topology::instance().cores().size()) + 1;
  o.placement = weft::Placement::one_per_core;
  EXPECT_THROW(weft::ThreadPool{o}, std::invalid_argument);
}

TEST(ThreadPool, DroppedFutureStillRuns) {
  weft::ThreadPool pool(workers(1));
  std::atomic<bool> ran{false};
  { auto f = pool.submit([&] { ran = true; }); }
  pool.wait_idle();
  EXPECT_TRUE(ran.load());
}

TEST(ThreadPool, WorkersGetTheStackSizeAskedFor) {
  weft::PoolOptions o;
  o.workers = 2;
  o.stack_size = std::size_t{64} << 20;
  weft::ThreadPool pool(o);
  auto f = pool.submit([] {
    pthread_attr_t attr;
    std::size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstacksize(&attr, &size);
      pthread_attr_destroy(&attr);
    }
    return size;
  });
  EXPECT_GE(weft::detail::get_remote(f), std::size_t{64} << 20);
}

TEST(ThreadPool, AStackBelowTheMinimumIsRefusedByName) {
  weft::PoolOptions o;
  o.workers = 1;
  o.stack_size = 100;
  try {
    weft::ThreadPool pool(o);
    FAIL() << "a 100-byte stack was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stack of 100 bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
