// Cross-thread frees: 8 threads (on however few CPUs) allocate blocks of all
// size classes and free each other's, concurrently with their own
// allocations. Checks that no block is handed out twice (each carries its
// owner's stamp until freed) and that every chunk goes back once all is freed.
#include "weft/mem/pool_resource.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"

namespace {

using weft::PoolResource;

struct Block {
  void* p;
  std::size_t size;
  std::uint64_t stamp;
};

// Fills a block with `stamp` so a block handed out twice is caught when the
// second owner overwrites it.
void stamp_block(const Block& b) {
  auto* words = static_cast<std::uint64_t*>(b.p);
  for (std::size_t i = 0; i < b.size / sizeof(std::uint64_t); ++i) words[i] = b.stamp + i;
}
bool stamp_intact(const Block& b) {
  const auto* words = static_cast<const std::uint64_t*>(b.p);
  for (std::size_t i = 0; i < b.size / sizeof(std::uint64_t); ++i) {
    if (words[i] != b.stamp + i) return false;
  }
  return true;
}

// A mutex-guarded mailbox per thread: the test's transport, not the subject.
struct Mailbox {
  std::mutex mutex;
  std::vector<Block> blocks;
};

TEST(PoolResourceStress, CrossThreadFreesFromEightThreads) {
  weft::test::Watchdog watchdog("PoolResourceStress.CrossThreadFreesFromEightThreads");
  constexpr int kThreads = 8;
  const std::int64_t per_thread = weft::test::stress_count(200'000);
  PoolResource pool;
  std::vector<Mailbox> boxes(kThreads);
  std::atomic<int> corrupt{0};
  std::atomic<int> producing{kThreads};

  auto worker = [&](int self) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(self) * 7919 + 1);
    std::vector<Block> inbox;
    auto drain = [&] {
      {
        std::lock_guard lock(boxes[static_cast<std::size_t>(self)].mutex);
        inbox.swap(boxes[static_cast<std::size_t>(self)].blocks);
      }
      for (const Block& b : inbox) {
        if (!stamp_intact(b)) corrupt.fetch_add(1);
        pool.deallocate(b.p, b.size);
      }
      inbox.clear();
    };
    std::vector<Block> local;
    for (std::int64_t i = 0; i < per_thread; ++i) {
      const std::size_t size = PoolResource::kSizeClasses[rng() % PoolResource::kSizeClasses.size()] - rng() % 16;
      Block b{pool.allocate(size), size, (static_cast<std::uint64_t>(self) << 48) | static_cast<std::uint64_t>(i << 8)};
      stamp_block(b);
      const int to = static_cast<int>(rng() % kThreads);
      if (to == self) {
        // Some stay home for a while and are freed by their owner.
        local.push_back(b);
        if (local.size() > 64) {
          for (const Block& l : local) {
            if (!stamp_intact(l)) corrupt.fetch_add(1);
            pool.deallocate(l.p, l.size);
          }
          local.clear();
        }
      } else {
        std::lock_guard lock(boxes[static_cast<std::size_t>(to)].mutex);
        boxes[static_cast<std::size_t>(to)].blocks.push_back(b);
      }
      if (i % 256 == 0) drain();
    }
    for (const Block& l : local) {
      if (!stamp_intact(l)) corrupt.fetch_add(1);
      pool.deallocate(l.p, l.size);
    }
    producing.fetch_sub(1);
    // Keep freeing what others send until every producer is done; some
    // threads exit while their blocks are still out (orphaned heaps).
    while (producing.load() > 0) {
      drain();
      std::this_thread::yield();
    }
    drain();
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(corrupt.load(), 0);
  EXPECT_EQ(pool.live_blocks(), 0);
  // Every heap was released at exit or by the free of its last block.
  EXPECT_EQ(pool.orphaned_heap_count(), 0U);
  EXPECT_EQ(pool.bytes_held(), 0U);
  EXPECT_GT(pool.peak_bytes_held(), 0U);
}

}  // namespace
