// The pool's two cost choices (weft/detail/exec/idle_policy.hpp): how long
// an idle worker searches, and which sleeper a wake-up or the seat takes.
#include "weft/detail/exec/idle_policy.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace {

using weft::detail::kPlacementLook;
using weft::detail::pick_sleeper;
using weft::detail::SearchStretch;
using namespace std::chrono_literals;

constexpr std::chrono::nanoseconds kBase = 20us;

TEST(SearchStretch, StretchesWhileASeatedCallersTasksComeJustAfterTheSearchGaveUp) {
  SearchStretch l;
  EXPECT_EQ(l.budget(kBase), 20us);
  l.climb(1'000, 1'000 + 30'000, kBase, true, true);  // 30 us after the start: within 2 x 20
  EXPECT_EQ(l.budget(kBase), 40us);
  l.climb(1'000, 1'000 + 70'000, kBase, true, true);  // within 2 x 40
  EXPECT_EQ(l.budget(kBase), 80us);
  for (int i = 0; i < 10; ++i) l.climb(0, 1'000, kBase, true, true);
  EXPECT_EQ(l.level, SearchStretch::kMax);
  EXPECT_EQ(l.budget(kBase), 160us);
}

TEST(SearchStretch, NeverStretchesWithNobodySeated) {
  SearchStretch l;
  for (int i = 0; i < 5; ++i) l.climb(0, 1'000, kBase, true, false);
  EXPECT_EQ(l.level, 0);  // the tuner's budget stands
  l.climb(0, 1'000, kBase, true, true);
  l.climb(0, 1'000, kBase, true, false);  // the seat is gone, tasks still come soon: kept
  EXPECT_EQ(l.level, 1);
}

TEST(SearchStretch, ShrinksBackWhenTasksComeLate) {
  SearchStretch l;
  for (int i = 0; i < 3; ++i) l.climb(0, 1'000, kBase, true, true);
  l.climb(0, 1'000'000, kBase, true, true);  // one task per ms, even seated
  EXPECT_EQ(l.level, 2);
  for (int i = 0; i < 5; ++i) l.climb(0, 1'000'000, kBase, true, true);
  EXPECT_EQ(l.level, 0);
  l.climb(0, 1'000, kBase, true, true);
  l.climb(5'000, 4'000, kBase, true, true);  // a stamp older than the spin: no wake-up for it, late
  EXPECT_EQ(l.level, 0);
}

TEST(SearchStretch, StaysAtZeroWithoutAdaptation) {
  SearchStretch l;
  l.climb(0, 1'000, kBase, false, true);
  EXPECT_EQ(l.level, 0);
  EXPECT_EQ(l.budget(0ns), 0ns);
}

TEST(PickSleeper, TheSeatTakesTheMostRecentSleeperOnTheCallersCpu) {
  const std::vector<int> cpu_of{0, 1, 0, 1};
  const std::vector<int> sleepers{1, 3, 0, 2};  // 2 slept last
  EXPECT_EQ(pick_sleeper(sleepers, cpu_of, 0), 3U);  // worker 2
  EXPECT_EQ(pick_sleeper(sleepers, cpu_of, 1), 1U);  // worker 3
}

TEST(PickSleeper, FallsBackToTheMostRecent) {
  const std::vector<int> cpu_of{0, 0, -1};
  EXPECT_EQ(pick_sleeper({0, 1}, cpu_of, 1), 1U);   // nobody slept on CPU 1
  EXPECT_EQ(pick_sleeper({1, 0}, cpu_of, -1), 1U);  // the caller's CPU unknown
  EXPECT_EQ(pick_sleeper({0, 2}, cpu_of, 5), 1U);   // worker 2's unknown CPU is not CPU 5
  EXPECT_EQ(pick_sleeper({2, 0}, cpu_of, 0), 1U);   // worker 0 slept on CPU 0
  EXPECT_EQ(pick_sleeper({0, 7}, cpu_of, 0), 0U);   // worker 7 has no CPU recorded
}

TEST(PickSleeper, LooksOnlyAtTheMostRecentFew) {
  std::vector<int> cpu_of(kPlacementLook + 1, 1);
  cpu_of[0] = 0;
  std::vector<int> sleepers;
  for (int w = 0; w <= static_cast<int>(kPlacementLook); ++w) sleepers.push_back(w);
  // Worker 0, the only one on CPU 0, is beyond the look: the most recent.
  EXPECT_EQ(pick_sleeper(sleepers, cpu_of, 0), kPlacementLook);
  sleepers.erase(sleepers.begin() + 1);
  EXPECT_EQ(pick_sleeper(sleepers, cpu_of, 0), 0U);
}

}  // namespace
