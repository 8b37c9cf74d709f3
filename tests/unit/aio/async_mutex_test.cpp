// weft::AsyncMutex and weft::AsyncSemaphore: exclusion, limits, FIFO
// hand-off, stopped waiters leaving the line, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

#include "aio_support.hpp"
#include "future_support.hpp"
#include "watchdog.hpp"
#include "weft/aio/async_mutex.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using namespace std::chrono_literals;
using weft::Task;
using weft::test::Eager;

TEST(AsyncMutex, ExcludesAcrossSuspensionsInsideTheCriticalSection) {
  weft::test::Watchdog dog("mutex exclusion");
  weft::ThreadPool pool(weft::test::workers(2));
  weft::AsyncMutex mu;
  long total = 0;  // guarded by mu
  std::atomic<int> inside{0}, most{0};
  auto adder = [&]() -> Task<> {
    for (int i = 0; i < 2000; ++i) {
      auto lock = co_await mu.lock();
      const int now = inside.fetch_add(1) + 1;
      most.store(std::max(most.load(), now));
      const long seen = total;
      if (i % 7 == 0) co_await pool.schedule();  // hop while holding it
      total = seen + 1;
      inside.fetch_sub(1);
    }
  };
  std::vector<weft::Future<void>> fs;
  for (int i = 0; i < 6; ++i) fs.push_back(pool.spawn(adder()));
  for (auto& f : fs) f.get();
  EXPECT_EQ(total, 6 * 2000);
  EXPECT_EQ(most.load(), 1);
  EXPECT_TRUE(mu.try_lock());
  mu.unlock();
}

TEST(AsyncSemaphore, NeverLetsMoreThanItsCountInside) {
  weft::test::Watchdog dog("semaphore limit");
  weft::ThreadPool pool(weft::test::workers(2));
  weft::AsyncSemaphore sem(3);
  std::atomic<int> inside{0}, most{0};
  auto user = [&]() -> Task<> {
    for (int i = 0; i < 500; ++i) {
      co_await sem.acquire();
      const int now = inside.fetch_add(1) + 1;
      int m = most.load();
      while (m < now && !most.compare_exchange_weak(m, now)) {
      }
      co_await pool.schedule();
      inside.fetch_sub(1);
      sem.release();
    }
  };
  std::vector<weft::Future<void>> fs;
  for (int i = 0; i < 8; ++i) fs.push_back(pool.spawn(user()));
  for (auto& f : fs) f.get();
  EXPECT_LE(most.load(), 3);
  EXPECT_GE(most.load(), 1);
  EXPECT_EQ(sem.available(), 3);
}

TEST(AsyncSemaphore, HandsUnitsOverInArrivalOrder) {
  weft::test::Watchdog dog("FIFO hand-off");
  weft::AsyncSemaphore sem(0);
  std::mutex m;
  std::vector<int> order;
  auto waiter = [&](int id) -> Eager {
    co_await sem.acquire();
    std::lock_guard lock(m);
    order.push_back(id);
  };
  for (int id = 0; id < 6; ++id) waiter(id);  // each is in line before the next starts
  EXPECT_FALSE(sem.try_acquire());
  for (int k = 1; k <= 6; ++k) {
    sem.release();
    for (;;) {
      std::lock_guard lock(m);
      if (static_cast<int>(order.size()) == k) break;
    }
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(sem.available(), 0);
}

TEST(AsyncSemaphore, AStoppedWaiterLeavesTheLineHoldingNothing) {
  weft::test::Watchdog dog("stopped waiter");
  weft::AsyncSemaphore sem(0);
  std::stop_source stop_a;
  std::atomic<int> a_cancelled{0}, b_got{0};
  auto a = [&]() -> Eager {
    try {
      co_await sem.acquire(stop_a.get_token());
    } catch (const weft::cancelled&) {
      a_cancelled = 1;
    }
  };
  auto b = [&]() -> Eager {
    co_await sem.acquire();
    b_got = 1;
  };
  a();
  b();
  stop_a.request_stop();  // a resumes on the default pool
  while (a_cancelled.load() == 0) std::this_thread::sleep_for(1ms);
  sem.release();  // goes to b, not to the waiter that left
  while (b_got.load() == 0) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(sem.available(), 0);

  // A stop after the hand-off changes nothing.
  std::stop_source late;
  sem.release();
  auto c = [&]() -> Task<bool> {
    co_await sem.acquire(late.get_token());
    late.request_stop();
    co_return true;
  };
  EXPECT_TRUE(weft::sync_wait(c()));
  EXPECT_EQ(sem.available(), 0);
}

TEST(AsyncMutex, LockGuardsMoveAndUnlockOnce) {
  weft::AsyncMutex mu;
  auto task = [&]() -> Task<> {
    auto a = co_await mu.lock();
    EXPECT_TRUE(a.owns_lock());
    EXPECT_FALSE(mu.try_lock());
    weft::AsyncMutex::ScopedLock b = std::move(a);
    EXPECT_FALSE(a.owns_lock());
    b.unlock();
    EXPECT_FALSE(b.owns_lock());
    // A second unlock(), or one through the moved-from lock, names the
    // mistake (it once followed a null pointer).
    EXPECT_THROW(b.unlock(), std::logic_error);
    EXPECT_THROW(a.unlock(), std::logic_error);
    EXPECT_TRUE(mu.try_lock());
    weft::AsyncMutex::ScopedLock adopted(mu);
    // Assigning over a lock that holds the mutex unlocks it first.
    adopted = weft::AsyncMutex::ScopedLock();
    EXPECT_TRUE(mu.try_lock());
    mu.unlock();
  };
  weft::sync_wait(task());
  EXPECT_TRUE(mu.try_lock());
  mu.unlock();
}

TEST(AsyncSemaphore, BadCountsAndUnlockingAFreeMutexAreErrors) {
  EXPECT_THROW(weft::AsyncSemaphore(-1), std::invalid_argument);
  weft::AsyncSemaphore sem(1);
  EXPECT_THROW(sem.release(-2), std::invalid_argument);
  weft::AsyncMutex mu;
  try {
    mu.unlock();
    FAIL() << "unlock of a free mutex did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("not locked"), std::string::npos) << e.what();
  }
}

}  // namespace
