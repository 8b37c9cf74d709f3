// docs/guide/memory.md: per-thread pools behind std::pmr and an allocator.
#include <weft/weft.hpp>

#include <list>
#include <memory_resource>
#include <numeric>
#include <thread>

#include "expect.hpp"

int main() {
  weft::PoolResource pool;                                    // a std::pmr::memory_resource
  std::pmr::list<int> a{&pool};                               // the pmr route
  std::list<int, weft::PoolAllocator<int>> b{weft::PoolAllocator<int>(&pool)};
  std::list<int, weft::PoolAllocator<int>> c;                 // the process-wide default pool
  for (int i = 1; i <= 1000; ++i) {
    a.push_back(i);
    b.push_back(i);
    c.push_back(i);
  }
  expect(std::accumulate(a.begin(), a.end(), 0L) == 500'500, "the pmr list holds what was pushed");
  expect(b == std::list<int, weft::PoolAllocator<int>>(c.begin(), c.end()), "both allocator routes agree");
  expect(b.get_allocator() == weft::PoolAllocator<int>(&pool), "b allocates from `pool`");

  // Any thread may free any block: it goes back to the thread that owns it.
  std::thread other([&] { b.clear(); });
  other.join();
  expect(b.empty(), "another thread freed b's nodes");
  return 0;
}
