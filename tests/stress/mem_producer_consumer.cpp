// A producer allocates 64-byte objects and passes them through a bounded
// queue to a consumer that frees them. The producer must reuse the
// consumer's (remote) frees, so the pool's peak size is bounded by what is
// in flight, whatever the scheduling: asserted on the pool's own counters.
#include "weft/mem/pool_allocator.hpp"
#include "weft/mem/pool_resource.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"

namespace {

using weft::PoolResource;

// Single-producer single-consumer ring; spins with yield when full/empty.
template <class T, std::size_t kCapacity>
class SpscRing {
 public:
  void push(T v) {
    const std::size_t t = tail_.load(std::memory_order_relaxed);
    while (t - head_.load(std::memory_order_acquire) == kCapacity) std::this_thread::yield();
    slots_[t % kCapacity] = v;
    tail_.store(t + 1, std::memory_order_release);
  }
  T pop() {
    const std::size_t h = head_.load(std::memory_order_relaxed);
    while (tail_.load(std::memory_order_acquire) == h) std::this_thread::yield();
    T v = slots_[h % kCapacity];
    head_.store(h + 1, std::memory_order_release);
    return v;
  }

 private:
  std::vector<T> slots_ = std::vector<T>(kCapacity);
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
};

struct Message {
  std::uint64_t seq;
  std::uint64_t payload[7];
};
static_assert(sizeof(Message) == 64);

TEST(PoolResourceStress, ProducerConsumerPeakIsBoundedByInFlight) {
  weft::test::Watchdog watchdog("PoolResourceStress.ProducerConsumerPeakIsBoundedByInFlight");
  constexpr std::size_t kQueue = 4096;
  const auto count = static_cast<std::uint64_t>(weft::test::stress_count(1'000'000));
  PoolResource pool;
  SpscRing<Message*, kQueue> queue;
  std::atomic<bool> out_of_order{false};

  std::thread consumer([&] {
    for (std::uint64_t i = 0; i < count; ++i) {
      Message* m = queue.pop();
      if (m->seq != i || m->payload[6] != i * 6) out_of_order.store(true);
      pool.deallocate(m, sizeof(Message), alignof(Message));
    }
  });
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < count; ++i) {
      auto* m = static_cast<Message*>(pool.allocate(sizeof(Message), alignof(Message)));
      m->seq = i;
      for (std::uint64_t k = 0; k < 7; ++k) m->payload[k] = i * k;
      queue.push(m);
    }
  });
  producer.join();
  consumer.join();

  EXPECT_FALSE(out_of_order.load());
  EXPECT_EQ(pool.live_blocks(), 0);
  // The producer takes a new chunk only when its local list is empty and it
  // found its remote list empty, i.e. when every block carved so far is live:
  // in the queue, or held by one of the two threads (<= kQueue + 2). So the
  // chunks in use then number at most ceil((kQueue + 2) / per_chunk), plus
  // the new one. One more chunk of slack covers frees pushed just as the
  // producer looked (its emptiness check is a relaxed load).
  const std::size_t per_chunk = PoolResource::blocks_per_chunk(PoolResource::pooled_size(sizeof(Message)));
  const std::size_t bound_chunks = (kQueue + 2 + per_chunk - 1) / per_chunk + 2;
  EXPECT_LE(pool.peak_bytes_held(), bound_chunks * PoolResource::kChunkSize)
      << "peak " << pool.peak_bytes_held() << " bytes for " << count << " messages";
  // Far below what no reuse would take.
  EXPECT_LT(pool.peak_bytes_held(), count * sizeof(Message) / 4);
  // Both threads exited with nothing outstanding: every chunk went back.
  EXPECT_EQ(pool.bytes_held(), 0U);
}

TEST(PoolResourceStress, ProducerConsumerThroughPoolAllocatorStaysBounded) {
  // The same pipeline with std::vector<int, PoolAllocator<int>> payloads of
  // varying small sizes, so several size classes are in flight at once.
  weft::test::Watchdog watchdog("PoolResourceStress.ProducerConsumerThroughPoolAllocatorStaysBounded");
  using Vec = std::vector<std::uint32_t, weft::PoolAllocator<std::uint32_t>>;
  constexpr std::size_t kQueue = 1024;
  const auto count = static_cast<std::uint32_t>(weft::test::stress_count(300'000));
  PoolResource pool;
  SpscRing<Vec*, kQueue> queue;
  std::atomic<std::uint64_t> checksum{0};

  std::thread consumer([&] {
    std::uint64_t sum = 0;
    weft::PoolAllocator<Vec> alloc(&pool);
    for (std::uint32_t i = 0; i < count; ++i) {
      Vec* v = queue.pop();
      for (std::uint32_t x : *v) sum += x;
      std::allocator_traits<weft::PoolAllocator<Vec>>::destroy(alloc, v);
      alloc.deallocate(v, 1);
    }
    checksum.store(sum);
  });
  std::uint64_t expected = 0;
  std::thread producer([&] {
    weft::PoolAllocator<Vec> alloc(&pool);
    for (std::uint32_t i = 0; i < count; ++i) {
      Vec* v = alloc.allocate(1);
      std::allocator_traits<weft::PoolAllocator<Vec>>::construct(alloc, v, weft::PoolAllocator<std::uint32_t>(&pool));
      const std::uint32_t n = 1 + i % 100;  // 4..400 bytes of elements
      v->reserve(n);
      for (std::uint32_t k = 0; k < n; ++k) v->push_back(i + k);
      for (std::uint32_t k = 0; k < n; ++k) expected += i + k;
      queue.push(v);
    }
  });
  producer.join();
  consumer.join();

  EXPECT_EQ(checksum.load(), expected);
  EXPECT_EQ(pool.live_blocks(), 0);
  // Per size class, the argument of the test above with at most
  // 2 * (kQueue + 2) blocks of the class in flight (a message is a Vec object
  // and its element buffer, which may share a class).
  std::size_t bound = 0;
  for (const std::size_t size : PoolResource::kSizeClasses) {
    const std::size_t per_chunk = PoolResource::blocks_per_chunk(size);
    bound += ((2 * (kQueue + 2) + per_chunk - 1) / per_chunk + 2) * PoolResource::kChunkSize;
  }
  EXPECT_LE(pool.peak_bytes_held(), bound);
  EXPECT_EQ(pool.bytes_held(), 0U);
}

}  // namespace
