#include "weft/sync/event.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "watchdog.hpp"
#include "weft/detail/sync/spin.hpp"
#include "test_clock.hpp"

using namespace std::chrono_literals;

TEST(Event, StartsUnsetOrSet) {
  weft::Event a;
  EXPECT_FALSE(a.is_set());
  weft::Event b(true);
  EXPECT_TRUE(b.is_set());
}

TEST(Event, SetResetCycle) {
  weft::Event e;
  e.set();
  EXPECT_TRUE(e.is_set());
  e.wait();  // returns at once
  e.reset();
  EXPECT_FALSE(e.is_set());
  e.reset();  // idempotent
  EXPECT_FALSE(e.is_set());
}

TEST(Event, WaitForTimesOutWhenUnset) {
  weft::Event e;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(e.wait_for(20ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 20ms);
  EXPECT_FALSE(e.wait_for(0ms));
}

TEST(Event, WakesSleepingWaiters) {
  weft::test::Watchdog dog("Event wakes sleeping waiters", std::chrono::seconds(30));
  weft::Event e;
  int payload = 0;
  std::vector<std::thread> waiters;
  std::atomic<int> seen{0};
  for (int i = 0; i < 4; ++i)
    waiters.emplace_back([&] {
      // A zero spin budget forces the futex path.
      e.wait(weft::WaitOptions{std::chrono::nanoseconds(0), false});
      if (payload == 42) seen.fetch_add(1);
    });
  std::this_thread::sleep_for(20ms);  // let them reach the futex
  payload = 42;                        // published by set()'s release
  e.set();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(seen.load(), 4);
}

TEST(Event, IdleWaiterBurnsLittleCpu) {
  // A thread waiting 1 s on an unset event spins for the budget, then sleeps.
  weft::Event e;
  std::int64_t cpu_ns = -1;
  std::thread waiter([&] {
    const std::int64_t c0 = weft::test::thread_cpu_ns();
    EXPECT_FALSE(e.wait_for(1s));
    cpu_ns = weft::test::thread_cpu_ns() - c0;
  });
  waiter.join();
  std::printf("a 1 s wait on an unset Event burned %.3f ms of CPU\n", static_cast<double>(cpu_ns) / 1e6);
  // 10 ms of CPU in 1 s of waiting would mean it kept spinning.
  EXPECT_LT(cpu_ns, 10'000'000) << "a 1 s wait on an unset Event burned " << cpu_ns << " ns of CPU";
}
