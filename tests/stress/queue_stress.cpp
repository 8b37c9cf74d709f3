// The queues under load: order and exactly-once delivery, blocking push/pop
// through tiny capacities, more threads than CPUs.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/queue/mpmc_queue.hpp"
#include "weft/queue/spsc_queue.hpp"

namespace {

TEST(QueueStress, SpscKeepsOrderThroughBlockingPushPop) {
  const std::int64_t n = weft::test::stress_count(1'000'000);
  weft::test::Watchdog dog("spsc queue");
  weft::SpscQueue<std::int64_t> q(16);
  std::thread producer([&] {
    for (std::int64_t i = 0; i < n; ++i) q.push(i);
  });
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(q.pop(), i);
  producer.join();
  EXPECT_TRUE(q.empty());
}

TEST(QueueStress, SpscTryPushIsNoticedByABlockedPop) {
  const std::int64_t n = weft::test::stress_count(20'000);
  weft::test::Watchdog dog("spsc try_push vs blocked pop");
  weft::SpscQueue<std::int64_t> q(4);
  std::thread producer([&] {
    for (std::int64_t i = 0; i < n; ++i)
      while (!q.try_push(i)) std::this_thread::yield();
  });
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += q.pop(weft::WaitOptions{std::chrono::nanoseconds(0), false});
  producer.join();
  EXPECT_EQ(sum, n * (n - 1) / 2);
}

TEST(QueueStress, MpmcDeliversEveryItemExactlyOnce) {
  constexpr int kProducers = 4, kConsumers = 4;
  const std::int64_t per = weft::test::stress_count(250'000);
  weft::test::Watchdog dog("mpmc queue");
  weft::MpmcQueue<std::int64_t> q(64);
  auto seen = std::make_unique<std::atomic<std::uint8_t>[]>(static_cast<std::size_t>(kProducers * per));
  std::vector<std::thread> ts;
  for (int p = 0; p < kProducers; ++p)
    ts.emplace_back([&, p] {
      for (std::int64_t i = 0; i < per; ++i) q.push(p * per + i);
    });
  std::atomic<std::int64_t> taken{0};
  for (int c = 0; c < kConsumers; ++c)
    ts.emplace_back([&] {
      std::int64_t last_by_producer[kProducers];
      for (auto& l : last_by_producer) l = -1;
      while (taken.fetch_add(1, std::memory_order_relaxed) < kProducers * per) {
        const std::int64_t v = q.pop();
        seen[static_cast<std::size_t>(v)].fetch_add(1, std::memory_order_relaxed);
        // FIFO per producer, as seen by one consumer.
        const int p = static_cast<int>(v / per);
        ASSERT_GT(v, last_by_producer[p]);
        last_by_producer[p] = v;
      }
    });
  for (auto& t : ts) t.join();
  for (std::int64_t i = 0; i < kProducers * per; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)].load(), 1) << i;
  EXPECT_TRUE(q.empty());
}

}  // namespace
