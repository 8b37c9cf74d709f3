#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "weft/queue/mpmc_queue.hpp"
#include "weft/queue/spsc_queue.hpp"

namespace {

template <class Q>
class Queues : public ::testing::Test {};
using Types = ::testing::Types<weft::SpscQueue<std::string>, weft::MpmcQueue<std::string>>;
TYPED_TEST_SUITE(Queues, Types);

TYPED_TEST(Queues, FifoUpToCapacityThenFull) {
  TypeParam q(3);  // rounds up to 4
  EXPECT_EQ(q.capacity(), 4u);
  EXPECT_TRUE(q.empty());
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.try_push(std::to_string(i)));
  EXPECT_TRUE(q.full());
  EXPECT_FALSE(q.try_push("overflow"));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(q.try_pop().value(), std::to_string(i));
  EXPECT_FALSE(q.try_pop().has_value());
  // Wraps around many laps.
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(q.try_push(std::to_string(i)));
    ASSERT_EQ(q.try_pop().value(), std::to_string(i));
  }
}

TYPED_TEST(Queues, ZeroCapacityIsAnError) { EXPECT_THROW(TypeParam(0), std::invalid_argument); }

TYPED_TEST(Queues, DestructorDestroysWhatIsLeft) {
  auto counter = std::make_shared<int>(0);
  {
    using Q = std::conditional_t<std::is_same_v<TypeParam, weft::SpscQueue<std::string>>,
                                 weft::SpscQueue<std::shared_ptr<int>>, weft::MpmcQueue<std::shared_ptr<int>>>;
    Q q(8);
    for (int i = 0; i < 5; ++i) q.try_push(counter);
    EXPECT_EQ(counter.use_count(), 6);
    q.try_pop();
    EXPECT_EQ(counter.use_count(), 5);
  }
  EXPECT_EQ(counter.use_count(), 1);
}

TYPED_TEST(Queues, MoveOnlyItems) {
  using Q = std::conditional_t<std::is_same_v<TypeParam, weft::SpscQueue<std::string>>,
                               weft::SpscQueue<std::unique_ptr<int>>, weft::MpmcQueue<std::unique_ptr<int>>>;
  Q q(2);
  q.push(std::make_unique<int>(5));
  EXPECT_EQ(*q.pop(), 5);
}

}  // namespace
