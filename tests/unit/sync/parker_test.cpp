#include "weft/sync/parker.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "watchdog.hpp"

using namespace std::chrono_literals;

TEST(Parker, UnparkBeforeParkIsNotLost) {
  weft::test::Watchdog dog("unpark before park");
  weft::Parker p;
  p.unpark();
  EXPECT_TRUE(p.notified());
  p.park();  // must return at once
  EXPECT_FALSE(p.notified());
}

TEST(Parker, PermitsDoNotAccumulate) {
  weft::Parker p;
  p.unpark();
  p.unpark();
  EXPECT_TRUE(p.park_for(1ms));
  EXPECT_FALSE(p.park_for(5ms)) << "two unparks left two permits";
}

TEST(Parker, ParkForTimesOut) {
  weft::Parker p;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(p.park_for(20ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 20ms);
  // The timed-out park left no stale "parked" state: a later unpark works.
  p.unpark();
  EXPECT_TRUE(p.park_for(1ms));
}

TEST(Parker, WakesASleepingOwner) {
  weft::test::Watchdog dog("wake a sleeping owner", std::chrono::seconds(30));
  weft::Parker p;
  int payload = 0;
  int seen = 0;
  std::thread owner([&] {
    p.park(weft::WaitOptions{std::chrono::nanoseconds(0), false});
    seen = payload;
  });
  std::this_thread::sleep_for(20ms);
  payload = 7;
  p.unpark();
  owner.join();
  EXPECT_EQ(seen, 7);
}
