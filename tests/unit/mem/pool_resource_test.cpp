// weft::PoolResource on one thread: size classes, alignment, reuse, the
// upstream route, counters and release on destruction.
#include "weft/mem/pool_resource.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <set>
#include <vector>

namespace {

using weft::PoolResource;

// Counts what passes through it to new_delete_resource(), so tests can see
// what the pool took from upstream and gave back.
class CountingResource final : public std::pmr::memory_resource {
 public:
  std::int64_t outstanding_bytes() const { return bytes_.load(); }
  std::int64_t allocations() const { return allocs_.load(); }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    bytes_ += static_cast<std::int64_t>(bytes);
    ++allocs_;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    bytes_ -= static_cast<std::int64_t>(bytes);
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }

  std::atomic<std::int64_t> bytes_{0};
  std::atomic<std::int64_t> allocs_{0};
};

bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

TEST(PoolResource, SizeClassesAreSortedMultiplesOfMaxAlign) {
  for (std::size_t i = 0; i < PoolResource::kSizeClasses.size(); ++i) {
    EXPECT_EQ(PoolResource::kSizeClasses[i] % alignof(std::max_align_t), 0U);
    if (i > 0) {
      EXPECT_LT(PoolResource::kSizeClasses[i - 1], PoolResource::kSizeClasses[i]);
    }
  }
  EXPECT_EQ(PoolResource::kSizeClasses.back(), PoolResource::kMaxPooledSize);
}

TEST(PoolResource, PooledSizeRoundsUpToTheSmallestFittingClass) {
  EXPECT_EQ(PoolResource::pooled_size(0), 16U);
  EXPECT_EQ(PoolResource::pooled_size(1), 16U);
  EXPECT_EQ(PoolResource::pooled_size(16), 16U);
  EXPECT_EQ(PoolResource::pooled_size(17), 32U);
  EXPECT_EQ(PoolResource::pooled_size(24), 32U);
  EXPECT_EQ(PoolResource::pooled_size(129), 160U);
  EXPECT_EQ(PoolResource::pooled_size(512), 512U);
  EXPECT_EQ(PoolResource::pooled_size(513), 0U);
  // Over-aligned: the smallest class that is a multiple of the alignment.
  EXPECT_EQ(PoolResource::pooled_size(8, 64), 64U);
  EXPECT_EQ(PoolResource::pooled_size(65, 64), 128U);
  EXPECT_EQ(PoolResource::pooled_size(100, 128), 128U);
  EXPECT_EQ(PoolResource::pooled_size(8, 512), 512U);
  EXPECT_EQ(PoolResource::pooled_size(8, 1024), 0U);
  for (std::size_t bytes = 0; bytes <= PoolResource::kMaxPooledSize; ++bytes) {
    const std::size_t c = PoolResource::pooled_size(bytes);
    ASSERT_GE(c, bytes);
    // Smallest: no smaller class would fit.
    for (const std::size_t s : PoolResource::kSizeClasses) {
      if (s < c) {
        ASSERT_LT(s, bytes) << bytes;
      }
    }
  }
}

TEST(PoolResource, EverySizeClassAllocatesWritableDistinctAlignedBlocks) {
  PoolResource pool;
  for (const std::size_t size : PoolResource::kSizeClasses) {
    // More than one chunk's worth, so chunk changes are crossed too.
    const std::size_t n = PoolResource::blocks_per_chunk(size) + 7;
    std::vector<unsigned char*> blocks;
    for (std::size_t i = 0; i < n; ++i) {
      auto* p = static_cast<unsigned char*>(pool.allocate(size));
      ASSERT_NE(p, nullptr);
      ASSERT_TRUE(aligned(p, alignof(std::max_align_t))) << size;
      std::memset(p, static_cast<int>(i & 0xff), size);
      blocks.push_back(p);
    }
    // No overlap: sorted blocks are at least `size` apart.
    std::vector<unsigned char*> sorted = blocks;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 1; i < sorted.size(); ++i) ASSERT_GE(static_cast<std::size_t>(sorted[i] - sorted[i - 1]), size);
    // Contents survived the neighbours' writes.
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t b = 0; b < size; ++b) ASSERT_EQ(blocks[i][b], static_cast<unsigned char>(i & 0xff));
    }
    for (unsigned char* p : blocks) pool.deallocate(p, size);
  }
  EXPECT_EQ(pool.live_blocks(), 0);
}

TEST(PoolResource, OddSizesBetweenClasses) {
  PoolResource pool;
  std::vector<std::pair<void*, std::size_t>> blocks;
  for (std::size_t size = 1; size <= PoolResource::kMaxPooledSize; size += 7) {
    void* p = pool.allocate(size);
    std::memset(p, 0xab, size);
    blocks.emplace_back(p, size);
  }
  EXPECT_EQ(pool.live_blocks(), static_cast<std::int64_t>(blocks.size()));
  for (auto [p, size] : blocks) pool.deallocate(p, size);
  EXPECT_EQ(pool.live_blocks(), 0);
}

TEST(PoolResource, OverAlignedRequestsAreAligned) {
  CountingResource upstream;
  PoolResource pool(&upstream);
  for (std::size_t align = 32; align <= 4096; align *= 2) {
    for (const std::size_t size : {std::size_t{1}, std::size_t{40}, std::size_t{200}, std::size_t{512}}) {
      std::vector<void*> blocks;
      for (int i = 0; i < 50; ++i) {
        void* p = pool.allocate(size, align);
        ASSERT_TRUE(aligned(p, align)) << "size " << size << " align " << align;
        std::memset(p, 0x5a, size);
        blocks.push_back(p);
      }
      for (void* p : blocks) pool.deallocate(p, size, align);
    }
  }
  EXPECT_EQ(pool.live_blocks(), 0);
}

TEST(PoolResource, FreedBlocksAreReusedLastInFirstOut) {
  PoolResource pool;
  void* a = pool.allocate(48);
  void* b = pool.allocate(48);
  EXPECT_NE(a, b);
  pool.deallocate(a, 48);
  pool.deallocate(b, 48);
  EXPECT_EQ(pool.allocate(48), b);
  EXPECT_EQ(pool.allocate(48), a);
  // Any size of the same class reuses the same block.
  pool.deallocate(a, 33);
  EXPECT_EQ(pool.allocate(40), a);
  pool.deallocate(a, 40);
  pool.deallocate(b, 48);
}

TEST(PoolResource, SteadyStateDoesNotGrow) {
  PoolResource pool;
  std::vector<void*> blocks(1000);
  for (void*& p : blocks) p = pool.allocate(64);
  for (void* p : blocks) pool.deallocate(p, 64);
  const std::size_t held = pool.bytes_held();
  EXPECT_GT(held, 0U);
  for (int round = 0; round < 100; ++round) {
    for (void*& p : blocks) p = pool.allocate(64);
    for (void* p : blocks) pool.deallocate(p, 64);
  }
  EXPECT_EQ(pool.bytes_held(), held);
  EXPECT_EQ(pool.peak_bytes_held(), held);
}

TEST(PoolResource, CountersTrackChunksAndLiveBlocks) {
  CountingResource upstream;
  {
    PoolResource pool(&upstream);
    EXPECT_EQ(pool.bytes_held(), 0U);
    EXPECT_EQ(pool.live_blocks(), 0);
    const std::size_t per_chunk = PoolResource::blocks_per_chunk(128);
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < per_chunk; ++i) blocks.push_back(pool.allocate(128));
    EXPECT_EQ(pool.bytes_held(), PoolResource::kChunkSize);
    blocks.push_back(pool.allocate(128));
    EXPECT_EQ(pool.bytes_held(), 2 * PoolResource::kChunkSize);
    EXPECT_EQ(pool.peak_bytes_held(), 2 * PoolResource::kChunkSize);
    EXPECT_EQ(pool.live_blocks(), static_cast<std::int64_t>(per_chunk + 1));
    EXPECT_EQ(upstream.outstanding_bytes(), static_cast<std::int64_t>(2 * PoolResource::kChunkSize));
    for (void* p : blocks) pool.deallocate(p, 128);
    EXPECT_EQ(pool.live_blocks(), 0);
    EXPECT_EQ(pool.heap_count(), 1U);
  }
  // The destructor gave every chunk back.
  EXPECT_EQ(upstream.outstanding_bytes(), 0);
}

TEST(PoolResource, LargeRequestsGoUpstream) {
  CountingResource upstream;
  PoolResource pool(&upstream);
  void* p = pool.allocate(4096);
  EXPECT_EQ(upstream.outstanding_bytes(), 4096);
  EXPECT_EQ(pool.bytes_held(), 0U);  // not counted as chunk memory
  std::memset(p, 1, 4096);
  pool.deallocate(p, 4096);
  EXPECT_EQ(upstream.outstanding_bytes(), 0);
  void* q = pool.allocate(64, 1024);  // over-aligned beyond the classes
  EXPECT_TRUE(aligned(q, 1024));
  EXPECT_EQ(upstream.outstanding_bytes(), 64);
  pool.deallocate(q, 64, 1024);
  EXPECT_EQ(upstream.outstanding_bytes(), 0);
}

TEST(PoolResource, InstancesAreIndependent) {
  CountingResource up1;
  CountingResource up2;
  PoolResource a(&up1);
  PoolResource b(&up2);
  std::set<void*> seen;
  std::vector<void*> from_a;
  std::vector<void*> from_b;
  // Alternating between resources exercises the per-thread lookup beyond the
  // most-recently-used cache.
  for (int i = 0; i < 3000; ++i) {
    from_a.push_back(a.allocate(32));
    from_b.push_back(b.allocate(32));
    EXPECT_TRUE(seen.insert(from_a.back()).second);
    EXPECT_TRUE(seen.insert(from_b.back()).second);
  }
  EXPECT_EQ(a.live_blocks(), 3000);
  EXPECT_EQ(b.live_blocks(), 3000);
  EXPECT_EQ(a.bytes_held(), static_cast<std::size_t>(up1.outstanding_bytes()));
  EXPECT_EQ(b.bytes_held(), static_cast<std::size_t>(up2.outstanding_bytes()));
  for (void* p : from_a) a.deallocate(p, 32);
  for (void* p : from_b) b.deallocate(p, 32);
  EXPECT_EQ(a.live_blocks(), 0);
  EXPECT_EQ(b.live_blocks(), 0);
  EXPECT_FALSE(a.is_equal(b));
  EXPECT_TRUE(a.is_equal(a));
}

TEST(PoolResource, ManyShortLivedResourcesOnOneThread) {
  CountingResource upstream;
  for (int i = 0; i < 200; ++i) {
    PoolResource pool(&upstream);
    void* p = pool.allocate(16);
    pool.deallocate(p, 16);
  }
  EXPECT_EQ(upstream.outstanding_bytes(), 0);
  // A resource created afterwards starts clean despite stale per-thread state.
  PoolResource pool(&upstream);
  EXPECT_EQ(pool.heap_count(), 0U);
  void* p = pool.allocate(16);
  EXPECT_EQ(pool.heap_count(), 1U);
  EXPECT_EQ(pool.live_blocks(), 1);
  pool.deallocate(p, 16);
}

TEST(PoolResource, DestructorReleasesChunksOfEveryClass) {
  CountingResource upstream;
  {
    PoolResource pool(&upstream);
    for (const std::size_t size : PoolResource::kSizeClasses) {
      void* p = pool.allocate(size);
      pool.deallocate(p, size);
    }
    EXPECT_EQ(pool.bytes_held(), PoolResource::kSizeClasses.size() * PoolResource::kChunkSize);
  }
  EXPECT_EQ(upstream.outstanding_bytes(), 0);
}

TEST(PoolResource, DefaultResourceIsProcessWide) {
  PoolResource& a = weft::default_pool_resource();
  PoolResource& b = weft::default_pool_resource();
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(a.upstream(), std::pmr::new_delete_resource());
  void* p = a.allocate(24);
  b.deallocate(p, 24);
}

}  // namespace
