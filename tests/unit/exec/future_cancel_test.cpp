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

// Every test: one worker (a Gate on it keeps what is submitted queued), under
// a watchdog named after the test; and a task body that says it started and
// then blocks until `go`, for the tests of a task that is already running.
class FutureCancel : public ::testing::Test {
 protected:
  weft::test::Watchdog dog{::testing::UnitTest::GetInstance()->current_test_info()->name()};
  weft::Event started, go;
  weft::ThreadPool pool{workers(1)};

  void start_then_block() {
    started.set();
    go.wait();
  }
  // For a future whose task runs start_then_block(): once it has started,
  // cancel() refuses, and the task runs to its end with `want`.
  void expect_running_task_not_cancelled(weft::Future<int>& f, int want) {
    started.wait();
    EXPECT_FALSE(f.cancel());
    go.set();
    EXPECT_EQ(f.get(), want);
  }
};

TEST_F(FutureCancel, BeforeStartTheTaskNeverRunsAndGetThrowsCancelled) {
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

TEST_F(FutureCancel, AfterStartReturnsFalseAndTheTaskFinishes) {
  auto f = pool.submit([&] {
    start_then_block();
    return 5;
  });
  expect_running_task_not_cancelled(f, 5);
}

TEST_F(FutureCancel, AfterDoneReturnsFalse) {
  auto f = pool.submit([] { return 3; });
  f.wait();
  EXPECT_FALSE(f.cancel());
  EXPECT_EQ(f.get(), 3);
}

TEST_F(FutureCancel, VoidFutures) {
  std::atomic<int> runs{0};
  Gate gate(pool, 1);
  auto f = pool.submit([&] { runs.fetch_add(1); });
  EXPECT_TRUE(f.cancel());
  gate.release();
  pool.wait_idle();
  EXPECT_THROW(f.get(), weft::cancelled);
  EXPECT_EQ(runs.load(), 0);
}

TEST_F(FutureCancel, WakesAThreadThatWaitsForTheResult) {
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

TEST_F(FutureCancel, InvalidFutureThrowsNoState) {
  weft::Future<int> f;
  EXPECT_THROW(f.cancel(), std::future_error);
}

TEST_F(FutureCancel, AContinuationCanBeCancelledBeforeItsAntecedentIsDone) {
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

TEST_F(FutureCancel, AContinuationThatStartedCannotBeCancelled) {
  auto f = pool.submit([] { return 2; }).then([&](int x) {
    start_then_block();
    return x * 10;
  });
  expect_running_task_not_cancelled(f, 20);
}

TEST_F(FutureCancel, ContinuationOfACancelledFutureSeesCancelled) {
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
