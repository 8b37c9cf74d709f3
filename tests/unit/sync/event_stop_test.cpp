// Event::wait(stop_token): a stop requested on the token wakes a waiter that
// sleeps on the futex (a zero spin budget forces the sleep), with no
// polling; other waiters of the same event keep waiting for set().
#include "weft/sync/event.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stop_token>
#include <thread>
#include <vector>

#include "watchdog.hpp"

namespace {

const weft::WaitOptions kSleepAtOnce{std::chrono::nanoseconds(0), false};

TEST(EventStop, AStopWakesASleepingWaiter) {
  weft::test::Watchdog dog("stop wakes an Event waiter", std::chrono::seconds(30));
  for (int round = 0; round < 100; ++round) {
    weft::Event e;
    std::stop_source src;
    std::atomic<int> result{-1};
    std::thread waiter([&] { result.store(e.wait(src.get_token(), kSleepAtOnce) ? 1 : 0); });
    if (round % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // let it sleep
    src.request_stop();
    waiter.join();
    EXPECT_EQ(result.load(), 0) << "round " << round << ": the event was never set";
    EXPECT_FALSE(e.is_set());
  }
}

TEST(EventStop, SetStillWakesAndAnAlreadySetEventWins) {
  weft::test::Watchdog dog("set wakes a stoppable waiter", std::chrono::seconds(30));
  weft::Event e;
  std::stop_source src;
  std::atomic<int> result{-1};
  std::thread waiter([&] { result.store(e.wait(src.get_token(), kSleepAtOnce) ? 1 : 0); });
  e.set();
  waiter.join();
  EXPECT_EQ(result.load(), 1);
  src.request_stop();
  EXPECT_TRUE(e.wait(src.get_token())) << "set and stopped: an event already set returns true";
  e.reset();
  EXPECT_FALSE(e.wait(src.get_token())) << "a token already stopped ends the wait at once";
}

TEST(EventStop, OnlyTheStoppedWaiterLeaves) {
  weft::test::Watchdog dog("one of several waiters stopped", std::chrono::seconds(30));
  weft::Event e;
  std::stop_source stopped;
  std::stop_source other;
  std::atomic<int> left{0};
  std::atomic<int> plain_result{-1};
  std::thread a([&] {
    EXPECT_FALSE(e.wait(stopped.get_token(), kSleepAtOnce));
    left.fetch_add(1);
  });
  std::thread b([&] {
    plain_result.store(e.wait(other.get_token(), kSleepAtOnce) ? 1 : 0);
    left.fetch_add(1);
  });
  std::thread c([&] {
    e.wait(kSleepAtOnce);
    left.fetch_add(1);
  });
  stopped.request_stop();
  a.join();
  EXPECT_EQ(left.load(), 1) << "the others must still wait: the event is not set";
  e.set();
  b.join();
  c.join();
  EXPECT_EQ(plain_result.load(), 1);
  EXPECT_EQ(left.load(), 3);
}

TEST(EventStop, TheStopCallbackIsGoneAfterTheWait) {
  // The waiter's stop_callback lives only as long as its wait: a stop
  // requested afterwards must not touch the (destroyed) event.
  std::stop_source src;
  {
    weft::Event e;
    std::thread setter([&] { e.set(); });
    EXPECT_TRUE(e.wait(src.get_token(), kSleepAtOnce));
    setter.join();
  }
  src.request_stop();
  EXPECT_TRUE(src.stop_requested());
}

}  // namespace
