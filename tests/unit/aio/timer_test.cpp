// weft::sleep_for / sleep_until: no earlier than asked, on the task's pool,
// cancellable, and nothing polls while timers wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <stop_token>
#include <thread>
#include <vector>

#include "aio_support.hpp"
#include "future_support.hpp"
#include "watchdog.hpp"
#include "weft/aio/sleep.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using weft::Task;

TEST(Timer, SleepForWaitsAtLeastItsDurationAndResumesOnThePool) {
  weft::test::Watchdog dog("sleep_for");
  weft::ThreadPool pool(weft::test::workers(2));
  auto task = [](weft::ThreadPool* p) -> Task<bool> {
    const auto t0 = Clock::now();
    co_await weft::sleep_for(5ms);
    const bool late_enough = Clock::now() - t0 >= 5ms;
    co_return late_enough && weft::ThreadPool::current() == p;
  };
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(weft::sync_wait(pool, task(&pool))) << "run " << i;
}

TEST(Timer, ManyTimersEachFireNoEarlierThanTheirDeadline) {
  weft::test::Watchdog dog("many timers");
  weft::ThreadPool pool(weft::test::workers(2));
  std::atomic<int> early{0};
  auto sleeper = [&](Clock::duration d) -> Task<> {
    const auto deadline = Clock::now() + d;
    co_await weft::sleep_until(deadline);
    if (Clock::now() < deadline) early.fetch_add(1);
  };
  std::mt19937 rng(7);
  std::vector<weft::Future<void>> done;
  for (int i = 0; i < 500; ++i) done.push_back(pool.spawn(sleeper(std::chrono::microseconds(rng() % 20000))));
  for (auto& f : done) f.get();
  EXPECT_EQ(early.load(), 0);
}

TEST(Timer, ADeadlineAlreadyPastGoesOnWithoutSuspending) {
  auto task = []() -> Task<std::thread::id> {
    co_await weft::sleep_until(Clock::now() - 1s);
    co_await weft::sleep_for(0ms);
    co_return std::this_thread::get_id();
  };
  EXPECT_EQ(weft::sync_wait(task()), std::this_thread::get_id());  // never left this thread
}

TEST(Timer, OtherClocksAreConverted) {
  weft::ThreadPool pool(weft::test::workers(1));
  auto task = []() -> Task<bool> {
    const auto t0 = Clock::now();
    co_await weft::sleep_until(std::chrono::system_clock::now() + 3ms);
    co_return Clock::now() - t0 >= 2ms;  // a system-clock step could shorten it by a little
  };
  EXPECT_TRUE(weft::sync_wait(pool, task()));
}

TEST(Timer, AStopEndsTheSleepWithCancelled) {
  weft::test::Watchdog dog("a stopped sleep", std::chrono::seconds(60));
  weft::ThreadPool pool(weft::test::workers(2));
  std::stop_source stop;
  auto task = [](std::stop_token t) -> Task<> { co_await weft::sleep_for(std::chrono::hours(1), t); };
  auto f = pool.spawn(task(stop.get_token()));
  std::this_thread::sleep_for(10ms);
  stop.request_stop();
  EXPECT_THROW(f.get(), weft::cancelled);

  // The task's own token is the default, and a token already stopped throws
  // without suspending.
  auto own = []() -> Task<> { co_await weft::sleep_for(std::chrono::hours(1)); };
  Task<> t = own();
  t.set_stop_token(stop.get_token());
  EXPECT_THROW(weft::sync_wait(pool, std::move(t)), weft::cancelled);
}

TEST(Timer, AStopRacingTheDeadlineResumesExactlyOnce) {
  weft::test::Watchdog dog("stops racing deadlines");
  weft::ThreadPool pool(weft::test::workers(2));
  std::atomic<int> fired{0}, cancelled{0};
  auto task = [&](std::stop_token t) -> Task<> {
    try {
      co_await weft::sleep_for(200us, t);
      fired.fetch_add(1);
    } catch (const weft::cancelled&) {
      cancelled.fetch_add(1);
    }
  };
  constexpr int kRounds = 400;
  for (int i = 0; i < kRounds; ++i) {
    std::stop_source s;
    auto f = pool.spawn(task(s.get_token()));
    std::this_thread::sleep_for(std::chrono::microseconds(150 + i % 100));
    s.request_stop();
    f.get();
  }
  EXPECT_EQ(fired.load() + cancelled.load(), kRounds);
}

TEST(Timer, PendingTimersDoNotWakeTheTimerThread) {
  weft::test::Watchdog dog("idle timers");
  std::stop_source stop;
  std::atomic<int> ended{0};
  auto sleeper = [&](Clock::time_point deadline) -> weft::test::Eager {
    try {
      co_await weft::sleep_until(deadline, stop.get_token());
    } catch (const weft::cancelled&) {
    }
    ended.fetch_add(1);
  };
  // Latest first would make every one the new earliest; earliest first
  // wakes the thread once.
  const auto base = Clock::now() + std::chrono::hours(1);
  for (int i = 0; i < 2000; ++i) sleeper(base + std::chrono::milliseconds(i));
  std::this_thread::sleep_for(20ms);  // the one wake-up for the first has happened
  const std::size_t before = weft::timer_thread_wakeups();
  std::this_thread::sleep_for(200ms);
  const std::size_t after = weft::timer_thread_wakeups();
  EXPECT_LE(after - before, 1U) << "the timer thread woke while 2,000 timers waited an hour";
  stop.request_stop();
  while (ended.load() != 2000) std::this_thread::sleep_for(1ms);
}

}  // namespace
