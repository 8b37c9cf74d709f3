// The lost stop of Event::wait(stop_token) when set() and reset() race the
// stop (tests/model/event_stop.pml, -DRESET), forced step by step through
// the sched_point() seam rather than hoped for: a hook holds the first
// waiter between its announcement and its futex sleep while the main thread
// sets, stops, resets and lets a second waiter announce. With a word whose
// value can come back after a stop, the first waiter then sleeps for good;
// the test sees that as a failure (and rescues the thread with a set()).
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <thread>

#include "watchdog.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/sync/event.hpp"

namespace {

// Which thread is in the hook, and how many sched points it has passed.
enum class Role { kOther, kFirst, kSecond };
thread_local Role t_role = Role::kOther;
thread_local int t_points = 0;

// The handshakes between the hook and the main thread. seq_cst (the
// default) throughout: a test's bookkeeping, not the code under test.
std::atomic<bool> g_first_announced{false};
std::atomic<bool> g_first_go{false};
std::atomic<bool> g_second_announced{false};

void wait_for(const std::atomic<bool>& flag) noexcept {
  while (!flag.load()) sched_yield();
}

// The engine's second sched point in a wait is the one after announce()
// and the look at the token, just before the futex sleep.
void hook() noexcept {
  if (t_role == Role::kOther || ++t_points != 2) return;
  if (t_role == Role::kFirst) {
    g_first_announced.store(true);
    wait_for(g_first_go);
  } else {
    g_second_announced.store(true);
  }
}

TEST(InterleaveEventStop, AStopSurvivesSetResetAndAnotherAnnouncement) {
  weft::test::Watchdog dog("forced set/stop/reset race on an Event", std::chrono::seconds(120));
  const weft::WaitOptions sleep_at_once{std::chrono::nanoseconds(0), false};
  weft::Event e;
  std::stop_source src;
  std::atomic<int> first_result{-1};
  weft::detail::g_sched_hook = &hook;

  std::thread first([&] {
    t_role = Role::kFirst;
    first_result.store(e.wait(src.get_token(), sleep_at_once) ? 1 : 0);
  });
  wait_for(g_first_announced);  // 1. it announced and saw no stop
  e.set();                      // 2. nobody asleep yet: the wake finds no one
  src.request_stop();           // 3. the stop finds the event set
  e.reset();                    // 4.
  std::thread second([&] {
    t_role = Role::kSecond;
    e.wait(sleep_at_once);
  });
  wait_for(g_second_announced);  // 5. a waiter announced again
  g_first_go.store(true);        // 6. the first waiter goes on to its futex sleep

  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (first_result.load() < 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(first_result.load(), 0) << "the stopped waiter still sleeps 10 s after its stop: the stop was lost";

  e.set();  // releases the second waiter (and the first, had its stop been lost)
  first.join();
  second.join();
  weft::detail::g_sched_hook = nullptr;
}

}  // namespace
