// weft::PoolAllocator<T> in standard containers, and the pmr route.
#include "weft/mem/pool_allocator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <memory_resource>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using weft::PoolAllocator;
using weft::PoolResource;

static_assert(std::is_same_v<std::allocator_traits<PoolAllocator<int>>::rebind_alloc<double>, PoolAllocator<double>>);
static_assert(std::allocator_traits<PoolAllocator<int>>::propagate_on_container_move_assignment::value);
static_assert(!std::allocator_traits<PoolAllocator<int>>::is_always_equal::value);

TEST(PoolAllocator, DefaultUsesTheProcessWideResource) {
  PoolAllocator<int> a;
  EXPECT_EQ(a.resource(), &weft::default_pool_resource());
  EXPECT_EQ(a, PoolAllocator<long>{});
}

TEST(PoolAllocator, EqualityFollowsTheResourceAcrossRebinds) {
  PoolResource r1;
  PoolResource r2;
  PoolAllocator<int> a(&r1);
  PoolAllocator<double> b(a);
  PoolAllocator<int> c(&r2);
  EXPECT_EQ(b.resource(), &r1);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_TRUE(a != c);
  // What a rebound copy allocates, the original's rebind can free.
  double* d = b.allocate(3);
  PoolAllocator<double>(a).deallocate(d, 3);
  EXPECT_EQ(r1.live_blocks(), 0);
}

TEST(PoolAllocator, StdListPushPopKeepsOrderAndContents) {
  PoolResource pool;
  std::list<int, PoolAllocator<int>> l{PoolAllocator<int>(&pool)};
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 10000; ++i) l.push_back(i);
    EXPECT_EQ(pool.live_blocks(), 10000);
    int expected = 0;
    while (!l.empty()) {
      ASSERT_EQ(l.front(), expected++);
      l.pop_front();
    }
    EXPECT_EQ(expected, 10000);
  }
  EXPECT_EQ(pool.live_blocks(), 0);
  // 10,000 list nodes of <= 32 bytes fit in a handful of chunks, reused each round.
  EXPECT_LE(pool.peak_bytes_held(), 10 * PoolResource::kChunkSize);
}

TEST(PoolAllocator, DefaultConstructedListWorks) {
  std::list<int, PoolAllocator<int>> l;
  for (int i = 0; i < 1000; ++i) l.push_front(i);
  l.sort();
  EXPECT_EQ(l.front(), 0);
  EXPECT_EQ(l.back(), 999);
  EXPECT_EQ(std::accumulate(l.begin(), l.end(), 0), 999 * 1000 / 2);
}

TEST(PoolAllocator, MapAndVectorOfStrings) {
  PoolResource pool;
  using Alloc = PoolAllocator<std::pair<const int, std::string>>;
  std::map<int, std::string, std::less<>, Alloc> m{Alloc(&pool)};
  for (int i = 0; i < 500; ++i) m.emplace(i, std::to_string(i * 7));
  EXPECT_EQ(m.size(), 500U);
  EXPECT_EQ(m.at(123), "861");
  // A vector grows past the pooled sizes and moves to upstream: still fine.
  std::vector<std::uint64_t, PoolAllocator<std::uint64_t>> v{PoolAllocator<std::uint64_t>(&pool)};
  for (std::uint64_t i = 0; i < 10000; ++i) v.push_back(i);
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), std::uint64_t{0}), 9999ULL * 10000 / 2);
  m.clear();
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(pool.live_blocks(), 0);
}

TEST(PoolAllocator, MoveAssignmentAndSwapAcrossResourcesPropagate) {
  PoolResource r1;
  PoolResource r2;
  std::list<int, PoolAllocator<int>> a{PoolAllocator<int>(&r1)};
  std::list<int, PoolAllocator<int>> b{PoolAllocator<int>(&r2)};
  a.assign({1, 2, 3});
  b.assign({4, 5});
  a.swap(b);
  EXPECT_EQ(a.get_allocator().resource(), &r2);
  EXPECT_EQ(a, (std::list<int, PoolAllocator<int>>{{4, 5}, PoolAllocator<int>(&r1)}));
  b = std::move(a);
  EXPECT_EQ(b.get_allocator().resource(), &r2);
  EXPECT_EQ(b.size(), 2U);
  b.clear();
  a.clear();
  EXPECT_EQ(r2.live_blocks(), 0);
}

TEST(PoolResourcePmr, PmrListGivesTheRightContents) {
  PoolResource pool;
  std::pmr::list<int> l{&pool};
  for (int i = 0; i < 10000; ++i) l.push_back(i * 3);
  EXPECT_EQ(pool.live_blocks(), 10000);
  int i = 0;
  for (int x : l) ASSERT_EQ(x, 3 * i++);
  l.remove_if([](int x) { return x % 2 == 1; });
  EXPECT_EQ(l.size(), 5000U);
  EXPECT_EQ(pool.live_blocks(), 5000);
  l.clear();
  EXPECT_EQ(pool.live_blocks(), 0);
}

TEST(PoolResourcePmr, NestedPmrContainersShareTheResource) {
  PoolResource pool;
  std::pmr::vector<std::pmr::string> v{&pool};
  for (int i = 0; i < 100; ++i) v.emplace_back(std::string(static_cast<std::size_t>(i), 'x'));
  EXPECT_EQ(v[99].get_allocator().resource(), &pool);
  EXPECT_EQ(v[99].size(), 99U);
  EXPECT_GT(pool.live_blocks(), 0);
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(pool.live_blocks(), 0);
}

}  // namespace
