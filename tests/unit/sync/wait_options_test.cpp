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

// A zero budget parks at once: one look, with no pause, no clock read and
// no sched_yield (each yield would cost the thread its next wake-up's
// preemption under EEVDF: spin.hpp), and nothing for the tuner to learn.
// A tiny budget still gets the first polls and one clock-read round (no
// yields asked for here).
TEST(SpinUntil, AZeroBudgetNeitherSpinsOnNorYields) {
  int polls = 0;
  auto o = weft::detail::spin_until([&] { return ++polls < 0; }, weft::WaitOptions{std::chrono::nanoseconds(0), false});
  EXPECT_FALSE(o.satisfied);
  EXPECT_EQ(polls, 1);
  EXPECT_EQ(o.start_ns, 0);
  polls = 0;
  o = weft::detail::spin_until([&] { return ++polls == 1; }, weft::WaitOptions{std::chrono::nanoseconds(0), false});
  EXPECT_TRUE(o.satisfied);
  polls = 0;
  o = weft::detail::spin_until([&] { return ++polls < 0; }, weft::WaitOptions{std::chrono::nanoseconds(1), false}, 0);
  EXPECT_FALSE(o.satisfied);
  EXPECT_EQ(polls, 4 + weft::detail::kPollsPerClockRead + 1);
}

// With a gap that grows (a pool worker's search), the clock is still read
// every kPollsPerClockRead pauses, not polls: a 1 ns budget polls in one
// round until 16 pauses have passed (gaps of 1, 2, 4, 4, 4, 4), so the
// budget is kept to within one gap. Every poll still happens: a predicate
// that turns true is seen at the poll it turns true on.
TEST(SpinUntil, AGrowingGapCountsPausesNotPollsBetweenClockReads) {
  int polls = 0;
  auto o = weft::detail::spin_until([&] { return ++polls < 0; }, weft::WaitOptions{std::chrono::nanoseconds(1), false},
                                    0, 4);
  EXPECT_FALSE(o.satisfied);
  EXPECT_EQ(polls, 4 + 6 + 1);
  polls = 0;
  o = weft::detail::spin_until([&] { return ++polls == 9; }, weft::WaitOptions{std::chrono::seconds(10), false}, 0,
                               1 << 20);
  EXPECT_TRUE(o.satisfied);
  EXPECT_EQ(polls, 9);
}

TEST(SpinUntil, PausesForConvertsTimeToAtLeastOnePause) {
  EXPECT_GE(weft::detail::pauses_for(0), 1);
  EXPECT_GE(weft::detail::pauses_for(1'000'000), weft::detail::pauses_for(1'000));
  EXPECT_GT(weft::detail::pauses_for(10'000'000), 1);  // no pause costs 10 ms
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

// A pool worker's search (brief_at_floor): once the tuner is at its floor, a
// wait that is not a probe looks once, where a plain wait at the same floor
// polls at least ~10 times; a probe still spins its full budget, and a look
// that finds its condition pays (the budget grows back).
TEST(SpinTuner, AtTheFloorABriefWaitLooksOnceAndProbesStillSpin) {
  const weft::WaitOptions opts{std::chrono::microseconds(20), true};
  auto& tuner = weft::detail::this_thread_tuner();
  tuner = {};
  tuner.shift = weft::detail::SpinTuner::kMaxShift;
  tuner.probe_interval = 1u << 20;  // no probe in the next waits
  int polls = 0;
  auto o = weft::detail::spin_until([&] { return ++polls < 0; }, opts, 0, 1, true);
  EXPECT_FALSE(o.satisfied);
  EXPECT_EQ(polls, 1);
  EXPECT_NE(o.start_ns, 0);  // the tuner learns from it
  polls = 0;
  o = weft::detail::spin_until([&] { return ++polls < 0; }, opts, 0, 1, false);
  EXPECT_GE(polls, 4 + 1 + 1);
  // A brief look that succeeds is a spin that paid.
  o = weft::detail::spin_until([] { return true; }, opts, 0, 1, true);
  EXPECT_TRUE(o.satisfied);
  weft::detail::adapt(o, opts, 0);
  EXPECT_EQ(tuner.shift, weft::detail::SpinTuner::kMaxShift - 1);
  // A probe at the floor spins the whole budget: 20 us of polls, not one.
  tuner.shift = weft::detail::SpinTuner::kMaxShift;
  tuner.probe_interval = 1;
  polls = 0;
  const std::int64_t t0 = weft::detail::now_ns();
  o = weft::detail::spin_until([&] { return ++polls < 0; }, opts, 0, 1, true);
  EXPECT_TRUE(o.probe);
  EXPECT_GT(polls, 1);
  EXPECT_GE(weft::detail::now_ns() - t0, 20'000);
  tuner = {};
}
