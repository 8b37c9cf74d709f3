#include "weft/detail/exec/deque.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace {

std::vector<weft::detail::TaskNode> make_tasks(std::size_t n) { return std::vector<weft::detail::TaskNode>(n); }

TEST(WorkStealingDeque, OwnerIsLifoThievesAreFifo) {
  weft::detail::WorkStealingDeque d(4);
  auto tasks = make_tasks(3);
  for (auto& t : tasks) d.push(&t);
  weft::detail::TaskNode* x = nullptr;
  ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
  EXPECT_EQ(x, &tasks[0]);
  EXPECT_EQ(d.pop(), &tasks[2]);
  EXPECT_EQ(d.pop(), &tasks[1]);
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal(x), weft::detail::Steal::empty);
  EXPECT_TRUE(d.empty());
}

TEST(WorkStealingDeque, ClaimBottomIfKeepsWhatItWantsAndPutsTheRestBackInOrder) {
  weft::detail::WorkStealingDeque d(4);
  auto tasks = make_tasks(4);
  for (auto& t : tasks) d.push(&t);
  std::vector<const weft::detail::TaskNode*> seen;
  bool pushed_back = false;
  auto claim = [&](const weft::detail::TaskNode* want) {
    return d.claim_bottom_if(
        [&seen, want](const weft::detail::TaskNode* t) {
          seen.push_back(t);
          return t == want;
        },
        pushed_back);
  };
  // The newest is tasks[3]: asked for another, it goes back where it was.
  EXPECT_EQ(claim(&tasks[0]), nullptr);
  EXPECT_TRUE(pushed_back);
  EXPECT_EQ(d.size(), 4);
  EXPECT_EQ(claim(&tasks[3]), &tasks[3]);
  EXPECT_FALSE(pushed_back);
  EXPECT_EQ(claim(&tasks[2]), &tasks[2]);
  EXPECT_EQ(seen, (std::vector<const weft::detail::TaskNode*>{&tasks[3], &tasks[3], &tasks[2]}));
  // The rest in their order: owner from the bottom, thief from the top.
  weft::detail::TaskNode* x = nullptr;
  ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
  EXPECT_EQ(x, &tasks[0]);
  // The last task, put back, is still there to pop; an empty deque asks nothing.
  EXPECT_EQ(claim(&tasks[0]), nullptr);
  EXPECT_TRUE(pushed_back);
  EXPECT_EQ(d.pop(), &tasks[1]);
  seen.clear();
  EXPECT_EQ(claim(&tasks[1]), nullptr);
  EXPECT_FALSE(pushed_back);
  EXPECT_TRUE(seen.empty());
  EXPECT_TRUE(d.empty());
}

TEST(WorkStealingDeque, PopExactlyTakesOnlyTheTaskAskedForAndPutsAnOtherBack) {
  weft::detail::WorkStealingDeque d(4);
  auto tasks = make_tasks(3);
  for (auto& t : tasks) d.push(&t);
  bool pushed_back = false;
  // The newest is tasks[2]: asked for tasks[1], it goes back where it was.
  EXPECT_FALSE(d.pop_exactly(&tasks[1], pushed_back));
  EXPECT_TRUE(pushed_back);
  EXPECT_EQ(d.size(), 3);
  EXPECT_TRUE(d.pop_exactly(&tasks[2], pushed_back));
  EXPECT_FALSE(pushed_back);
  // A thief takes tasks[0]; tasks[1] is still the owner's to take.
  weft::detail::TaskNode* x = nullptr;
  ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
  EXPECT_EQ(x, &tasks[0]);
  EXPECT_TRUE(d.pop_exactly(&tasks[1], pushed_back));
  // Empty: nothing taken, nothing put back.
  EXPECT_FALSE(d.pop_exactly(&tasks[0], pushed_back));
  EXPECT_FALSE(pushed_back);
  EXPECT_TRUE(d.empty());
}

TEST(WorkStealingDeque, TakeNewestNTakesTheNewestTasksOnlyWithAnOlderOneLeft) {
  weft::detail::WorkStealingDeque d(8);
  auto tasks = make_tasks(5);
  for (auto& t : tasks) d.push(&t);
  bool restored = true;
  const auto from = [&](std::size_t first) {
    return [&tasks, first](std::int64_t i) { return &tasks[first + static_cast<std::size_t>(i)]; };
  };
  // Not the newest three in their order: nothing taken, nothing moved.
  EXPECT_FALSE(d.take_newest_n(3, from(1), restored));
  EXPECT_FALSE(restored);
  EXPECT_EQ(d.size(), 5);
  // tasks[2..5) are the newest three, with two older ones below them.
  EXPECT_TRUE(d.take_newest_n(3, from(2), restored));
  EXPECT_FALSE(restored);
  EXPECT_EQ(d.size(), 2);
  // The two left are every task queued: the oldest is a thief's to race
  // for, so they stay (one at a time is the way), found before any store.
  EXPECT_FALSE(d.take_newest_n(2, from(0), restored));
  EXPECT_FALSE(restored);
  weft::detail::TaskNode* x = nullptr;
  ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
  EXPECT_EQ(x, &tasks[0]);
  EXPECT_EQ(d.pop(), &tasks[1]);
  EXPECT_TRUE(d.empty());
  // A push after a take reuses the slots the taken tasks held.
  d.push(&tasks[0]);
  d.push_n(3, from(2));
  EXPECT_TRUE(d.take_newest_n(3, from(2), restored));
  EXPECT_FALSE(restored);
  EXPECT_EQ(d.pop(), &tasks[0]);
  EXPECT_TRUE(d.empty());
}

TEST(WorkStealingDeque, PushNIsNPushesAndGrowsFirst) {
  weft::detail::WorkStealingDeque d(4);
  auto tasks = make_tasks(11);
  d.push(&tasks[0]);
  // Ten more into a deque of 4 slots: it grows (twice) before they go in.
  d.push_n(10, [&](std::int64_t i) { return &tasks[static_cast<std::size_t>(i) + 1]; });
  EXPECT_EQ(d.size(), 11);
  weft::detail::TaskNode* x = nullptr;
  ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
  EXPECT_EQ(x, &tasks[0]);
  ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
  EXPECT_EQ(x, &tasks[1]);
  for (std::size_t i = 10; i >= 2; --i) EXPECT_EQ(d.pop(), &tasks[i]) << i;
  EXPECT_TRUE(d.empty());
}

TEST(WorkStealingDeque, GrowsPastItsCapacity) {
  weft::detail::WorkStealingDeque d(2);
  auto tasks = make_tasks(1000);
  for (auto& t : tasks) d.push(&t);
  EXPECT_EQ(d.size(), 1000);
  weft::detail::TaskNode* x = nullptr;
  for (std::size_t i = 0; i < 500; ++i) {
    ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
    ASSERT_EQ(x, &tasks[i]);
  }
  for (std::size_t i = 999; i >= 500; --i) ASSERT_EQ(d.pop(), &tasks[i]);
  EXPECT_TRUE(d.empty());
}

TEST(WorkStealingDeque, ABatchIsHalfTheTasksRoundedUpOldestFirst) {
  using weft::detail::Steal;
  weft::detail::WorkStealingDeque d(4);
  auto tasks = make_tasks(5);
  for (auto& t : tasks) d.push(&t);
  std::array<weft::detail::TaskNode*, weft::detail::WorkStealingDeque::kMaxBatch> got{};
  std::int64_t n = 0;
  ASSERT_EQ(d.steal_batch(got.data(), 8, n), Steal::success);  // half of 5, rounded up
  ASSERT_EQ(n, 3);
  EXPECT_EQ(got[0], &tasks[0]);
  EXPECT_EQ(got[1], &tasks[1]);
  EXPECT_EQ(got[2], &tasks[2]);
  ASSERT_EQ(d.steal_batch(got.data(), 8, n), Steal::success);  // half of 2
  ASSERT_EQ(n, 1);
  EXPECT_EQ(got[0], &tasks[3]);
  ASSERT_EQ(d.steal_batch(got.data(), 8, n), Steal::success);  // the last one
  ASSERT_EQ(n, 1);
  EXPECT_EQ(got[0], &tasks[4]);
  EXPECT_EQ(d.steal_batch(got.data(), 8, n), Steal::empty);
}

TEST(WorkStealingDeque, ABatchIsCappedByTheThiefAndByKMaxBatch) {
  using weft::detail::WorkStealingDeque;
  WorkStealingDeque d(2);
  auto tasks = make_tasks(200);
  for (auto& t : tasks) d.push(&t);
  std::array<weft::detail::TaskNode*, WorkStealingDeque::kMaxBatch> got{};
  std::int64_t n = 0;
  ASSERT_EQ(d.steal_batch(got.data(), 5, n), weft::detail::Steal::success);
  EXPECT_EQ(n, 5);
  ASSERT_EQ(d.steal_batch(got.data(), 1000, n), weft::detail::Steal::success);
  EXPECT_EQ(n, WorkStealingDeque::kMaxBatch);
  EXPECT_EQ(got[0], &tasks[5]);
  EXPECT_EQ(d.size(), 200 - 5 - WorkStealingDeque::kMaxBatch);
}

// pop_batched() is the owner's LIFO pop on both of its paths: far from the
// top (no CAS) and within kMaxBatch of it, where it claims the tasks up to
// its own through top_ and pushes the others back in their order.
TEST(WorkStealingDeque, PopBatchedIsLifoNearAndFarFromTheTop) {
  using weft::detail::WorkStealingDeque;
  WorkStealingDeque d(4);
  const std::size_t n = 3 * WorkStealingDeque::kMaxBatch;
  auto tasks = make_tasks(n);
  for (auto& t : tasks) d.push(&t);
  std::array<weft::detail::TaskNode*, WorkStealingDeque::kMaxBatch> got{};
  std::int64_t k = 0;
  ASSERT_EQ(d.steal_batch(got.data(), 2, k), weft::detail::Steal::success);  // top is 2 now
  ASSERT_EQ(k, 2);
  bool pushed_back = false;  // what it pushed back; no pool here to republish to
  for (std::size_t i = n; i-- > 2;) ASSERT_EQ(d.pop_batched(pushed_back), &tasks[i]) << i;
  EXPECT_EQ(d.pop_batched(pushed_back), nullptr);
  EXPECT_TRUE(d.empty());
  // And the deque works on after the claims: push, steal, pop.
  d.push(&tasks[0]);
  d.push(&tasks[1]);
  weft::detail::TaskNode* x = nullptr;
  ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
  EXPECT_EQ(x, &tasks[0]);
  EXPECT_EQ(d.pop_batched(pushed_back), &tasks[1]);
  EXPECT_EQ(d.pop_batched(pushed_back), nullptr);
}

TEST(WorkStealingDeque, CapacityMustBeAPowerOfTwo) {
  EXPECT_THROW(weft::detail::WorkStealingDeque(3), std::invalid_argument);
  EXPECT_THROW(weft::detail::WorkStealingDeque(0), std::invalid_argument);
}

}  // namespace
