// The queues' blocking push/pop with a std::stop_token: a stop requested on
// the token wakes a consumer sleeping on an empty queue and a producer
// sleeping on a full one (a zero spin budget forces the sleep), and the
// stopped call says so: pop() an empty optional, push() false with the item
// left with the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <stop_token>
#include <thread>

#include "watchdog.hpp"
#include "weft/queue/mpmc_queue.hpp"
#include "weft/queue/spsc_queue.hpp"

namespace {

const weft::WaitOptions kSleepAtOnce{std::chrono::nanoseconds(0), false};

template <class Q>
class QueueStop : public ::testing::Test {};
using Queues = ::testing::Types<weft::SpscQueue<std::unique_ptr<int>>, weft::MpmcQueue<std::unique_ptr<int>>>;
TYPED_TEST_SUITE(QueueStop, Queues);

TYPED_TEST(QueueStop, AStopWakesAConsumerOnAnEmptyQueue) {
  weft::test::Watchdog dog("stop wakes a sleeping pop", std::chrono::seconds(30));
  for (int round = 0; round < 50; ++round) {
    TypeParam q(4);
    std::stop_source src;
    std::atomic<int> got{-1};
    std::thread consumer([&] { got.store(q.pop(src.get_token(), kSleepAtOnce).has_value() ? 1 : 0); });
    if (round % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    src.request_stop();
    consumer.join();
    EXPECT_EQ(got.load(), 0) << "round " << round;
  }
}

TYPED_TEST(QueueStop, AStopWakesAProducerOnAFullQueue) {
  weft::test::Watchdog dog("stop wakes a sleeping push", std::chrono::seconds(30));
  for (int round = 0; round < 50; ++round) {
    TypeParam q(2);
    ASSERT_TRUE(q.try_push(std::make_unique<int>(1)));
    ASSERT_TRUE(q.try_push(std::make_unique<int>(2)));
    std::stop_source src;
    std::atomic<int> pushed{-1};
    auto item = std::make_unique<int>(3);
    std::thread producer([&] { pushed.store(q.push(std::move(item), src.get_token(), kSleepAtOnce) ? 1 : 0); });
    if (round % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    src.request_stop();
    producer.join();
    EXPECT_EQ(pushed.load(), 0) << "round " << round;
    ASSERT_NE(item, nullptr) << "a stopped push leaves the item with the caller";
    EXPECT_EQ(*item, 3);
    EXPECT_EQ(q.size(), 2u);
  }
}

TYPED_TEST(QueueStop, ItemsStillFlowAndWhatCanCompleteCompletes) {
  weft::test::Watchdog dog("stoppable push/pop deliver", std::chrono::seconds(30));
  TypeParam q(2);
  std::stop_source src;
  constexpr int kItems = 2000;
  std::thread producer([&] {
    for (int i = 0; i < kItems; ++i) ASSERT_TRUE(q.push(std::make_unique<int>(i), src.get_token(), kSleepAtOnce));
  });
  for (int i = 0; i < kItems; ++i) {
    std::optional<std::unique_ptr<int>> v = q.pop(src.get_token(), kSleepAtOnce);
    ASSERT_TRUE(v.has_value());
    ASSERT_EQ(**v, i);
  }
  producer.join();
  // Stopped, yet an item is there (pop) or there is room (push): they complete.
  src.request_stop();
  EXPECT_TRUE(q.push(std::make_unique<int>(7), src.get_token()));
  auto v = q.pop(src.get_token());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(**v, 7);
  EXPECT_FALSE(q.pop(src.get_token()).has_value()) << "empty and stopped: returns at once";
}

TEST(QueueStop, OnlyTheStoppedConsumerLeavesAnMpmcQueue) {
  weft::test::Watchdog dog("one of two consumers stopped", std::chrono::seconds(30));
  weft::MpmcQueue<int> q(4);
  std::stop_source stopped;
  std::stop_source other;
  std::atomic<int> other_got{-1};
  std::thread a([&] { EXPECT_FALSE(q.pop(stopped.get_token(), kSleepAtOnce).has_value()); });
  std::thread b([&] {
    auto v = q.pop(other.get_token(), kSleepAtOnce);
    other_got.store(v ? *v : -2);
  });
  stopped.request_stop();
  a.join();
  EXPECT_EQ(other_got.load(), -1) << "the other consumer must still wait";
  q.push(42);
  b.join();
  EXPECT_EQ(other_got.load(), 42);
}

}  // namespace
