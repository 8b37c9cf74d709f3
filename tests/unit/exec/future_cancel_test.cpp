// Future<T>::cancel(): a task that had not started never runs; one that had
// runs to its end. A 1-worker pool held busy by a Gate keeps the tasks
// under test queued for as long as a test needs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "future_support.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/sync/event.hpp"

using namespace std::chrono_literals;

namespace {

using weft::test::Counted;
using weft::test::Gate;
using weft::test::workers;

TEST(FutureCancel, BeforeStartTheTaskNeverRunsAndGetThrowsCancelled) {
  weft::test::Watchdog dog("cancel before start");
  weft::ThreadPool pool(workers(1));
  std::atomic<int> runs{0};
  Gate gate(pool, 1);
  const long live = Counted::live.load();
  weft::Future<int> f = pool.submit(Counted(&runs));
  EXPECT_EQ(Counted::live.load(), live + 1);
  EXPECT_FALSE(f.ready());
  EXPECT_TRUE(f.cancel());
  EXPECT_EQ(Counted::live.load(), live) << "the callable of a cancelled task is destroyed at once";
  EXPECT_TRUE(f.valid());
  EXPECT_TRUE(f.ready());
  EXPECT_FALSE(f.cancel()) << "a second cancel finds it done";
  gate.release();
  pool.wait_idle();
  EXPECT_EQ(runs.load(), 0);
  EXPECT_THROW(f.get(), weft::cancelled);
  EXPECT_FALSE(f.valid());
  EXPECT_EQ(Counted::live.load(), live);
}

TEST(FutureCancel, AfterStartReturnsFalseAndTheTaskFinishes) {
  weft::test::Watchdog dog("cancel after start");
  weft::ThreadPool pool(workers(1));
  weft::Event started, go;
  auto f = pool.submit([&] {
    started.set();
    go.wait();
    return 5;
  });
  started.wait();
  EXPECT_FALSE(f.cancel());
  go.set();
  EXPECT_EQ(f.get(), 5);
}

TEST(FutureCancel, AfterDoneReturnsFalse) {
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([] { return 3; });
  f.wait();
  EXPECT_FALSE(f.cancel());
  EXPECT_EQ(f.get(), 3);
}

TEST(FutureCancel, VoidFutures) {
  weft::test::Watchdog dog("cancel a void task");
  weft::ThreadPool pool(workers(1));
  std::atomic<int> runs{0};
  Gate gate(pool, 1);
  auto f = pool.submit([&] { runs.fetch_add(1); });
  EXPECT_TRUE(f.cancel());
  gate.release();
  pool.wait_idle();
  EXPECT_THROW(f.get(), weft::cancelled);
  EXPECT_EQ(runs.load(), 0);
}

TEST(FutureCancel, WakesAThreadThatWaitsForTheResult) {
  weft::test::Watchdog dog("cancel wakes a waiter");
  weft::ThreadPool pool(workers(1));
  Gate gate(pool, 1);
  auto f = pool.submit([] { return 1; });
  std::atomic<bool> woke{false};
  // wait_for never runs the task in place, so it sleeps until the cancel.
  std::thread waiter([&] { woke = f.wait_for(60s); });
  std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(f.cancel());
  waiter.join();
  EXPECT_TRUE(woke.load());
  EXPECT_THROW(f.get(), weft::cancelled);
}

TEST(FutureCancel, InvalidFutureThrowsNoState) {
  weft::Future<int> f;
  EXPECT_THROW(f.cancel(), std::future_error);
}

TEST(FutureCancel, AContinuationCanBeCancelledBeforeItsAntecedentIsDone) {
  weft::test::Watchdog dog("cancel a continuation");
  weft::ThreadPool pool(workers(1));
  std::atomic<int> runs{0};
  Gate gate(pool, 1);
  const long live = Counted::live.load();
  auto first = pool.submit([] { return 1; });
  auto second = std::move(first).then([c = Counted(&runs)](int) { return c(); });
  EXPECT_TRUE(second.cancel());
  EXPECT_EQ(Counted::live.load(), live) << "the continuation's callable is destroyed at once";
  gate.release();
  pool.wait_idle();
  EXPECT_EQ(runs.load(), 0);
  EXPECT_THROW(second.get(), weft::cancelled);
}

TEST(FutureCancel, AContinuationThatStartedCannotBeCancelled) {
  weft::test::Watchdog dog("cancel a running continuation");
  weft::ThreadPool pool(workers(1));
  weft::Event started, go;
  auto f = pool.submit([] { return 2; }).then([&](int x) {
    started.set();
    go.wait();
    return x * 10;
  });
  started.wait();
  EXPECT_FALSE(f.cancel());
  go.set();
  EXPECT_EQ(f.get(), 20);
}

TEST(FutureCancel, ContinuationOfACancelledFutureSeesCancelled) {
  weft::test::Watchdog dog("then after cancel");
  weft::ThreadPool pool(workers(1));
  Gate gate(pool, 1);
  auto f = pool.submit([] { return 1; });
  ASSERT_TRUE(f.cancel());
  std::atomic<bool> called{false};
  auto g = std::move(f).then([&](int x) {
    called = true;
    return x;
  });
  gate.release();
  EXPECT_THROW(g.get(), weft::cancelled);
  EXPECT_FALSE(called.load());
}

}  // namespace
