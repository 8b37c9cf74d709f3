// What happens to a thread's pool memory when the thread exits: released at
// once if all its blocks are free, else orphaned, then released by the free
// of its last block, or adopted (and reused) by the next thread.
#include "weft/mem/pool_allocator.hpp"
#include "weft/mem/pool_resource.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"

namespace {

using weft::PoolResource;

struct Block {
  void* p;
  std::size_t size;
};

constexpr std::size_t kSizes[] = {16, 64, 256};

// Allocates, for each size, half a chunk's worth of blocks on a new thread,
// which then exits; returns the blocks.
std::vector<Block> allocate_on_a_thread_that_exits(PoolResource& pool) {
  std::vector<Block> blocks;
  std::thread t([&] {
    for (const std::size_t size : kSizes) {
      for (std::size_t i = 0; i < PoolResource::blocks_per_chunk(size) / 2; ++i) {
        blocks.push_back({pool.allocate(size), size});
      }
    }
  });
  t.join();
  return blocks;
}

TEST(PoolResourceThreadExit, ExitWithNothingOutstandingReleasesAtOnce) {
  PoolResource pool;
  std::thread t([&] {
    std::vector<void*> v;
    for (int i = 0; i < 1000; ++i) v.push_back(pool.allocate(48));
    for (void* p : v) pool.deallocate(p, 48);
  });
  t.join();
  EXPECT_GT(pool.peak_bytes_held(), 0U);
  EXPECT_EQ(pool.bytes_held(), 0U);
  EXPECT_EQ(pool.orphaned_heap_count(), 0U);
}

TEST(PoolResourceThreadExit, OrphanIsReleasedWhenItsLastBlockIsFreed) {
  PoolResource pool;
  std::vector<Block> blocks = allocate_on_a_thread_that_exits(pool);
  ASSERT_FALSE(blocks.empty());
  EXPECT_EQ(pool.orphaned_heap_count(), 1U);
  EXPECT_EQ(pool.bytes_held(), std::size(kSizes) * PoolResource::kChunkSize);
  EXPECT_EQ(pool.live_blocks(), static_cast<std::int64_t>(blocks.size()));
  const Block last = blocks.back();
  blocks.pop_back();
  for (const Block& b : blocks) pool.deallocate(b.p, b.size);
  // Still one block out: the orphan keeps its chunks.
  EXPECT_EQ(pool.orphaned_heap_count(), 1U);
  EXPECT_EQ(pool.bytes_held(), std::size(kSizes) * PoolResource::kChunkSize);
  EXPECT_EQ(pool.live_blocks(), 1);
  pool.deallocate(last.p, last.size);
  EXPECT_EQ(pool.orphaned_heap_count(), 0U);
  EXPECT_EQ(pool.bytes_held(), 0U);
  EXPECT_EQ(pool.live_blocks(), 0);
}

TEST(PoolResourceThreadExit, NextThreadAdoptsTheOrphanAndReusesItsFreedBlocks) {
  PoolResource pool;
  std::vector<Block> blocks = allocate_on_a_thread_that_exits(pool);
  const std::size_t held = pool.bytes_held();
  const Block kept = blocks.back();
  blocks.pop_back();
  // Freed by this (non-owner) thread: they go to the orphan's remote lists.
  for (const Block& b : blocks) pool.deallocate(b.p, b.size);
  ASSERT_EQ(pool.orphaned_heap_count(), 1U);

  // A new thread adopts the orphan: the same number of blocks again needs no
  // new chunk (the freed ones come back, plus room left in the chunks).
  std::vector<Block> again;
  std::thread t([&] {
    for (const std::size_t size : kSizes) {
      for (std::size_t i = 0; i < PoolResource::blocks_per_chunk(size) / 2; ++i) {
        again.push_back({pool.allocate(size), size});
      }
    }
    EXPECT_EQ(pool.orphaned_heap_count(), 0U);
    EXPECT_EQ(pool.heap_count(), 1U);
    EXPECT_EQ(pool.bytes_held(), held);
    // Freed by their owner this time; `kept` is still out.
    for (const Block& b : again) pool.deallocate(b.p, b.size);
  });
  t.join();
  EXPECT_EQ(pool.bytes_held(), held);
  EXPECT_EQ(pool.peak_bytes_held(), held);
  EXPECT_EQ(pool.orphaned_heap_count(), 1U);
  EXPECT_EQ(pool.live_blocks(), 1);
  pool.deallocate(kept.p, kept.size);
  EXPECT_EQ(pool.bytes_held(), 0U);
  EXPECT_EQ(pool.live_blocks(), 0);
}

TEST(PoolResourceThreadExit, ThreadLocalContainerFreesIntoALiveHeapAtExit) {
  static PoolResource* pool_for_thread = nullptr;
  PoolResource pool;
  pool_for_thread = &pool;
  std::thread t([] {
    // Destroyed during thread exit, before the pool's exit hook runs.
    thread_local std::list<int, weft::PoolAllocator<int>> tl{weft::PoolAllocator<int>(pool_for_thread)};
    for (int i = 0; i < 5000; ++i) tl.push_back(i);
  });
  t.join();
  EXPECT_EQ(pool.live_blocks(), 0);
  EXPECT_EQ(pool.orphaned_heap_count(), 0U);
  EXPECT_EQ(pool.bytes_held(), 0U);
  pool_for_thread = nullptr;
}

TEST(PoolResourceThreadExit, ThreadMayOutliveAResourceItUsed) {
  weft::test::Watchdog watchdog("PoolResourceThreadExit.ThreadMayOutliveAResourceItUsed");
  std::mutex m;
  std::condition_variable cv;
  int step = 0;
  auto pool = std::make_unique<PoolResource>();
  std::thread t([&] {
    void* p = pool->allocate(32);
    pool->deallocate(p, 32);
    std::unique_lock lock(m);
    step = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return step == 2; });
    // Exits with a heap entry for a destroyed resource: the hook must skip it.
  });
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return step == 1; });
  }
  pool.reset();
  // A new resource, possibly at the same address, is unaffected.
  PoolResource other;
  void* q = other.allocate(32);
  {
    std::lock_guard lock(m);
    step = 2;
  }
  cv.notify_all();
  t.join();
  EXPECT_EQ(other.heap_count(), 1U);
  EXPECT_EQ(other.live_blocks(), 1);
  other.deallocate(q, 32);
  EXPECT_EQ(other.live_blocks(), 0);
}

TEST(PoolResourceThreadExit, ManyThreadsExitWhileOthersFreeTheirBlocks) {
  weft::test::Watchdog watchdog("PoolResourceThreadExit.ManyThreadsExitWhileOthersFreeTheirBlocks");
  const std::int64_t generations = weft::test::stress_count(2000, 50) / 10;
  PoolResource pool;
  std::mutex m;
  std::vector<Block> pending;
  std::atomic<bool> stop{false};
  // A freer thread returns blocks of threads that already exited.
  std::thread freer([&] {
    std::vector<Block> batch;
    while (!stop.load()) {
      {
        std::lock_guard lock(m);
        batch.swap(pending);
      }
      for (const Block& b : batch) pool.deallocate(b.p, b.size);
      batch.clear();
      std::this_thread::yield();
    }
    std::lock_guard lock(m);
    for (const Block& b : pending) pool.deallocate(b.p, b.size);
    pending.clear();
  });
  for (std::int64_t g = 0; g < generations; ++g) {
    std::vector<std::thread> ts;
    for (int k = 0; k < 4; ++k) {
      ts.emplace_back([&, k] {
        std::vector<Block> mine;
        for (int i = 0; i < 200; ++i) mine.push_back({pool.allocate(kSizes[static_cast<std::size_t>(i + k) % 3]), kSizes[static_cast<std::size_t>(i + k) % 3]});
        // Half freed here, half left to the freer (possibly after we exit).
        for (std::size_t i = 0; i < mine.size(); i += 2) pool.deallocate(mine[i].p, mine[i].size);
        std::lock_guard lock(m);
        for (std::size_t i = 1; i < mine.size(); i += 2) pending.push_back(mine[i]);
      });
    }
    for (std::thread& t : ts) t.join();
  }
  stop.store(true);
  freer.join();
  EXPECT_EQ(pool.live_blocks(), 0);
  EXPECT_EQ(pool.orphaned_heap_count(), 0U);
  EXPECT_EQ(pool.bytes_held(), 0U);
  // Heaps are recycled: at most the threads alive at once ever needed one.
  EXPECT_LE(pool.heap_count(), 4U);
}

}  // namespace
