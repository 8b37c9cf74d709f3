#include "weft/sync/wait_options.hpp"

#include <gtest/gtest.h>

#include "weft/detail/sync/spin.hpp"
#include "weft/sync/cpu_relax.hpp"

using namespace std::chrono_literals;

TEST(WaitOptions, DefaultIsSettableAndClamped) {
  const auto before = weft::WaitOptions::default_spin();
  weft::WaitOptions::set_default_spin(1234ns);
  EXPECT_EQ(weft::WaitOptions{}.spin, 1234ns);
  weft::WaitOptions::set_default_spin(-5ns);
  EXPECT_EQ(weft::WaitOptions::default_spin(), 0ns);
  weft::WaitOptions::set_default_spin(std::chrono::hours(1));
  EXPECT_EQ(weft::WaitOptions::default_spin(), 10ms);
  weft::WaitOptions::set_default_spin(before);
}

TEST(WaitOptions, CalibrateMeasuresSomethingPlausible) {
  const weft::Calibration c = weft::calibrate(20);
  EXPECT_EQ(c.samples, 20);
  EXPECT_GT(c.pause_ns, 0.0);
  EXPECT_GT(c.wake_ns, 0.0);
  EXPECT_LE(c.wake_min_ns, c.wake_ns);
  EXPECT_LE(c.wake_ns, c.wake_max_ns);
  EXPECT_EQ(c.spin.count(), static_cast<std::int64_t>(c.wake_ns));
}

TEST(Backoff, CompletesAfterTheLimits) {
  weft::Backoff b;
  int steps = 0;
  while (!b.is_completed()) {
    b.snooze();
    ++steps;
  }
  EXPECT_EQ(steps, static_cast<int>(weft::Backoff::kYieldLimit) + 1);
  b.reset();
  EXPECT_FALSE(b.is_completed());
}

// A zero budget parks at once: the first polls and one clock-read round,
// then the last look, and no sched_yield between them (each yield would
// cost the thread its next wake-up's preemption under EEVDF: spin.hpp).
TEST(SpinUntil, AZeroBudgetNeitherSpinsOnNorYields) {
  int polls = 0;
  const auto o = weft::detail::spin_until([&] { return ++polls < 0; }, weft::WaitOptions{std::chrono::nanoseconds(0), false});
  EXPECT_FALSE(o.satisfied);
  EXPECT_EQ(polls, 4 + weft::detail::kPollsPerClockRead + 1);
}

TEST(SpinTuner, ShrinksWhenSpinsFailAndRecovers) {
  const weft::WaitOptions opts{std::chrono::microseconds(20), true};
  auto& tuner = weft::detail::this_thread_tuner();
  tuner = {};
  // Waits that parked for long: each one shrinks the budget.
  for (int i = 0; i < 10; ++i) {
    const auto o = weft::detail::spin_until([] { return false; }, opts);
    EXPECT_FALSE(o.satisfied);
    weft::detail::adapt(o, opts, o.start_ns + 1'000'000);
  }
  EXPECT_EQ(tuner.shift, weft::detail::SpinTuner::kMaxShift);
  // Waits satisfied while spinning (after the clock started) grow it back.
  for (int i = 0; i < 10; ++i) {
    int polls = 0;
    const auto o = weft::detail::spin_until([&] { return ++polls > 8; }, opts);
    EXPECT_TRUE(o.satisfied);
    weft::detail::adapt(o, opts, 0);
  }
  EXPECT_EQ(tuner.shift, 0u);
}
