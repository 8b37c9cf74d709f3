// TaskGroup cancellation: cancel() and a stop token skip tasks that have not
// started, let running ones finish, and make wait() throw weft::cancelled
// exactly when something was skipped. Every test checks the books: tasks
// that ran + tasks skipped == tasks submitted, and every callable
// constructed was destroyed exactly once.
#include "weft/exec/task_group.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/sync/event.hpp"

namespace {

weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

// Counts every construction and destruction of the callables and every run.
// Counters are relaxed: read only after wait() (which synchronizes).
struct Books {
  std::atomic<long> made{0};
  std::atomic<long> destroyed{0};
  std::atomic<long> ran{0};
  [[nodiscard]] long alive() const { return made.load() - destroyed.load(); }
  // The books of a group whose tasks were all skipped: none ran, and every
  // callable made was destroyed.
  [[nodiscard]] ::testing::AssertionResult all_skipped() const {
    if (ran.load() == 0 && alive() == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << ran.load() << " ran (want 0), " << alive() << " alive (want 0)";
  }
};

class Counted {
 public:
  explicit Counted(Books& b) : b_(&b) { b_->made.fetch_add(1, std::memory_order_relaxed); }
  Counted(const Counted& o) : b_(o.b_) { b_->made.fetch_add(1, std::memory_order_relaxed); }
  Counted(Counted&& o) noexcept : b_(o.b_) { b_->made.fetch_add(1, std::memory_order_relaxed); }
  Counted& operator=(const Counted&) = delete;
  ~Counted() { b_->destroyed.fetch_add(1, std::memory_order_relaxed); }
  void operator()() const { b_->ran.fetch_add(1, std::memory_order_relaxed); }

 private:
  Books* b_;
};

// Occupies `n` workers of `pool` until release(), so what is run()
// meanwhile stays queued. Destruction releases them and waits until their
// tasks are done with the gate.
class Blocker {
 public:
  Blocker(weft::ThreadPool& pool, int n) : n_(n) {
    for (int i = 0; i < n; ++i)
      pool.post([this] {
        started_.fetch_add(1);
        gate_.wait();
        finished_.fetch_add(1);
      });
    while (started_.load() < n) std::this_thread::yield();
  }
  Blocker(const Blocker&) = delete;
  Blocker& operator=(const Blocker&) = delete;
  ~Blocker() {
    release();
    while (finished_.load() < n_) std::this_thread::yield();
  }
  void release() { gate_.set(); }

 private:
  int n_;
  std::atomic<int> started_{0};
  std::atomic<int> finished_{0};
  weft::Event gate_;
};

TEST(TaskGroupCancel, CancelBeforeRunSkipsEverythingAtOnce) {
  weft::ThreadPool pool(workers(2));
  Books b;
  weft::TaskGroup g(pool);
  g.cancel();
  EXPECT_TRUE(g.is_cancelled());
  for (int i = 0; i < 100; ++i) g.run(Counted(b));
  EXPECT_EQ(b.alive(), 0) << "a run() after cancel() destroys the callable at once";
  EXPECT_THROW(g.wait(), weft::cancelled);
  EXPECT_EQ(b.ran.load(), 0);
  EXPECT_TRUE(g.is_cancelled()) << "cancellation is for good";
}

TEST(TaskGroupCancel, QueuedTasksAreSkippedRunningOnesFinish) {
  weft::test::Watchdog dog("cancel while queued");
  for (int w : {1, 2}) {
    weft::ThreadPool pool(workers(w));
    Books b;
    std::atomic<bool> running_finished{false};
    weft::Event running_started;
    weft::Event may_finish;
    weft::TaskGroup g(pool);
    // One task of the group runs (and blocks) on the first worker; the
    // others are kept busy; what follows stays queued.
    g.run([&] {
      running_started.set();
      may_finish.wait();
      running_finished.store(true);
    });
    running_started.wait();
    Blocker others(pool, w - 1);
    constexpr int kQueued = 1000;
    for (int i = 0; i < kQueued; ++i) g.run(Counted(b));
    g.cancel();
    may_finish.set();
    others.release();
    EXPECT_THROW(g.wait(), weft::cancelled) << w << " workers";
    EXPECT_TRUE(running_finished.load()) << "wait() returned before the running task ended";
    EXPECT_TRUE(b.all_skipped()) << "every queued task started after the cancel";
  }
}

TEST(TaskGroupCancel, OtherWorkTakenBackWithTheGroupsTasksStillRuns) {
  // cancel() empties the calling thread's own queue in one step: the
  // group's tasks are destroyed there, everything else must go back in.
  weft::test::Watchdog dog("take back keeps foreign work");
  weft::ThreadPool pool(workers(2));
  Books b;
  std::atomic<int> posted{0};
  weft::TaskGroup other(pool);
  std::atomic<int> other_ran{0};
  weft::TaskGroup g(pool);
  {
    Blocker hold(pool, 2);
    for (int i = 0; i < 300; ++i) {
      g.run(Counted(b));
      if (i % 3 == 0) pool.post([&] { posted.fetch_add(1); });
      if (i % 5 == 0) other.run([&] { other_ran.fetch_add(1); });
    }
    g.cancel();
    EXPECT_EQ(b.alive(), 0) << "every queued task of the group was taken back at once";
    hold.release();
    EXPECT_THROW(g.wait(), weft::cancelled);
  }
  other.wait();
  pool.wait_idle();
  EXPECT_EQ(b.ran.load(), 0);
  EXPECT_EQ(posted.load(), 100);
  EXPECT_EQ(other_ran.load(), 60);
}

TEST(TaskGroupCancel, CancelAfterEverythingRanThrowsNothing) {
  weft::ThreadPool pool(workers(2));
  Books b;
  weft::TaskGroup g(pool);
  for (int i = 0; i < 50; ++i) g.run(Counted(b));
  g.wait();
  g.cancel();
  EXPECT_NO_THROW(g.wait()) << "nothing was skipped";
  EXPECT_EQ(b.ran.load(), 50);
  g.run(Counted(b));
  EXPECT_THROW(g.wait(), weft::cancelled) << "a run() after the cancel is skipped, and counted";
  EXPECT_NO_THROW(g.wait()) << "the skip was reported once";
  EXPECT_EQ(b.ran.load(), 50);
  EXPECT_EQ(b.alive(), 0);
}

TEST(TaskGroupCancel, CancelWhileTasksRunKeepsTheBooksBalanced) {
  weft::test::Watchdog dog("cancel while running");
  weft::ThreadPool pool(workers(2));
  for (int round = 0; round < 50; ++round) {
    Books b;
    constexpr int kTasks = 2000;
    bool threw = false;
    {
      weft::TaskGroup g(pool);
      for (int i = 0; i < kTasks; ++i) {
        g.run(Counted(b));
        if (i == kTasks / 2) g.cancel();
      }
      try {
        g.wait();
      } catch (const weft::cancelled&) {
        threw = true;
      }
    }
    EXPECT_EQ(b.alive(), 0);
    EXPECT_LE(b.ran.load(), kTasks / 2 + 1);
    EXPECT_EQ(threw, b.ran.load() < kTasks) << "wait() throws cancelled iff something was skipped";
  }
}

TEST(TaskGroupCancel, ATaskMayCancelItsOwnGroup) {
  weft::ThreadPool pool(workers(1));
  Books b;
  weft::TaskGroup g(pool);
  Blocker hold(pool, 1);
  std::atomic<bool> after_cancel{false};
  g.run([&] {
    g.cancel();
    after_cancel.store(true);  // the cancelling task itself runs to its end
  });
  for (int i = 0; i < 100; ++i) g.run(Counted(b));
  hold.release();
  EXPECT_THROW(g.wait(), weft::cancelled);
  EXPECT_TRUE(after_cancel.load());
  EXPECT_TRUE(b.all_skipped()) << "the worker took the tasks in order: all after the cancel";
}

TEST(TaskGroupCancel, CancelInsideNestedWaitOnAWorker) {
  weft::test::Watchdog dog("nested cancel");
  weft::ThreadPool pool(workers(2));
  Books b;
  auto f = pool.submit([&] {
    weft::TaskGroup g(pool);
    for (int i = 0; i < 500; ++i) g.run(Counted(b));
    g.run([&] { g.cancel(); });
    for (int i = 0; i < 500; ++i) g.run(Counted(b));
    try {
      g.wait();
      return false;
    } catch (const weft::cancelled&) {
      return true;
    }
  });
  const bool threw = weft::detail::get_remote(f);
  EXPECT_EQ(b.alive(), 0);
  EXPECT_EQ(threw, b.ran.load() < 1000);
}

TEST(TaskGroupCancel, AStopRequestCancels) {
  weft::test::Watchdog dog("stop token cancels");
  weft::ThreadPool pool(workers(1));
  Books b;
  std::stop_source src;
  weft::TaskGroup g(pool, src.get_token());
  EXPECT_FALSE(g.is_cancelled());
  Blocker hold(pool, 1);
  for (int i = 0; i < 100; ++i) g.run(Counted(b));
  std::thread requester([&] { src.request_stop(); });
  requester.join();
  EXPECT_TRUE(g.is_cancelled());
  hold.release();
  EXPECT_THROW(g.wait(), weft::cancelled);
  EXPECT_TRUE(b.all_skipped());
}

TEST(TaskGroupCancel, AnAlreadyStoppedTokenCancelsAtConstruction) {
  weft::ThreadPool pool(workers(1));
  std::stop_source src;
  src.request_stop();
  weft::TaskGroup g(pool, src.get_token());
  EXPECT_TRUE(g.is_cancelled());
  Books b;
  g.run(Counted(b));
  EXPECT_THROW(g.wait(), weft::cancelled);
  EXPECT_TRUE(b.all_skipped());
}

TEST(TaskGroupCancel, ATokenThatCannotStopChangesNothing) {
  weft::ThreadPool pool(workers(2));
  Books b;
  weft::TaskGroup g(pool, std::stop_token{});
  for (int i = 0; i < 100; ++i) g.run(Counted(b));
  EXPECT_NO_THROW(g.wait());
  EXPECT_EQ(b.ran.load(), 100);
  EXPECT_FALSE(g.is_cancelled());
}

TEST(TaskGroupCancel, ATasksOwnExceptionTakesPrecedence) {
  weft::ThreadPool pool(workers(1));
  Books b;
  weft::TaskGroup g(pool);
  Blocker hold(pool, 1);
  g.run([&] {
    g.cancel();
    throw std::runtime_error("the task's own error");
  });
  for (int i = 0; i < 10; ++i) g.run(Counted(b));
  hold.release();
  EXPECT_THROW(g.wait(), std::runtime_error);
  EXPECT_NO_THROW(g.wait()) << "the skips were reported with the error, not after it";
  EXPECT_TRUE(b.all_skipped());
}

TEST(TaskGroupCancel, ThePoolStaysUsable) {
  weft::test::Watchdog dog("pool after cancel");
  weft::ThreadPool pool(workers(2));
  {
    weft::TaskGroup g(pool);
    g.cancel();
    for (int i = 0; i < 100; ++i) g.run([] {});
    EXPECT_THROW(g.wait(), weft::cancelled);
  }
  Books b;
  weft::TaskGroup fresh(pool);
  for (int i = 0; i < 100; ++i) fresh.run(Counted(b));
  fresh.wait();
  EXPECT_EQ(b.ran.load(), 100);
  EXPECT_EQ(pool.submit([] { return 7; }).get(), 7);
  pool.wait_idle();
}

TEST(TaskGroupCancel, AStopRacingTheGroupsDestructionIsSafe) {
  weft::test::Watchdog dog("stop racing destruction");
  weft::ThreadPool pool(workers(2));
  for (int round = 0; round < 200; ++round) {
    std::stop_source src;
    std::atomic<bool> go{false};
    std::thread requester([&] {
      while (!go.load()) std::this_thread::yield();
      src.request_stop();
    });
    {
      weft::TaskGroup g(pool, src.get_token());
      for (int i = 0; i < 10; ++i) g.run([] {});
      go.store(true);
      try {
        g.wait();
      } catch (const weft::cancelled&) {
      }
    }
    requester.join();
  }
}

}  // namespace
