#include "weft/detail/exec/deque.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

std::vector<weft::detail::Task> make_tasks(std::size_t n) { return std::vector<weft::detail::Task>(n); }

TEST(WorkStealingDeque, OwnerIsLifoThievesAreFifo) {
  weft::detail::WorkStealingDeque d(4);
  auto tasks = make_tasks(3);
  for (auto& t : tasks) d.push(&t);
  weft::detail::Task* x = nullptr;
  ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
  EXPECT_EQ(x, &tasks[0]);
  EXPECT_EQ(d.pop(), &tasks[2]);
  EXPECT_EQ(d.pop(), &tasks[1]);
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal(x), weft::detail::Steal::empty);
  EXPECT_TRUE(d.empty());
}

TEST(WorkStealingDeque, GrowsPastItsCapacity) {
  weft::detail::WorkStealingDeque d(2);
  auto tasks = make_tasks(1000);
  for (auto& t : tasks) d.push(&t);
  EXPECT_EQ(d.size(), 1000);
  weft::detail::Task* x = nullptr;
  for (std::size_t i = 0; i < 500; ++i) {
    ASSERT_EQ(d.steal(x), weft::detail::Steal::success);
    ASSERT_EQ(x, &tasks[i]);
  }
  for (std::size_t i = 999; i >= 500; --i) ASSERT_EQ(d.pop(), &tasks[i]);
  EXPECT_TRUE(d.empty());
}

TEST(WorkStealingDeque, CapacityMustBeAPowerOfTwo) {
  EXPECT_THROW(weft::detail::WorkStealingDeque(3), std::invalid_argument);
  EXPECT_THROW(weft::detail::WorkStealingDeque(0), std::invalid_argument);
}

}  // namespace
