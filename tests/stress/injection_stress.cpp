// Outside submitters coming and going: many more threads than 256 over the
// run, hundreds alive at once, each taking a slot (a released one where
// there is one), submitting, and exiting with tasks maybe still queued in
// its slot. Every task runs exactly once and wait_idle() returns
// (docs/design/pool.md, "Injection slots"). Counters are relaxed: only read
// after wait_idle() and the joins.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

TEST(InjectionStress, SubmittersComingAndGoingEachTaskRunsOnce) {
  const auto threads = static_cast<int>(weft::test::stress_count(3000, 600));
  constexpr int kAlive = 400;  // more than the old 256 slots at once
  constexpr int kPer = 20;
  weft::test::Watchdog dog("submitters coming and going");
  const auto total = static_cast<std::size_t>(threads) * kPer;
  auto hits = std::make_unique<std::atomic<std::uint8_t>[]>(total);
  weft::ThreadPool pool(weft::PoolOptions{.workers = 3});
  std::vector<std::thread> alive;
  alive.reserve(kAlive);
  std::uint64_t rng = 0x2545f4914f6cdd1dull;
  int next = 0;
  while (next < threads) {
    // Start a wave up to kAlive threads, then let a random part of them end
    // before the next wave: new threads take over the slots just released
    // while the others keep theirs.
    while (static_cast<int>(alive.size()) < kAlive && next < threads) {
      const int id = next++;
      alive.emplace_back([&pool, &hits, id] {
        for (int i = 0; i < kPer; ++i) {
          std::atomic<std::uint8_t>* hit = &hits[static_cast<std::size_t>(id) * kPer + static_cast<std::size_t>(i)];
          if (i % 5 == 4) {
            pool.submit([hit] { hit->fetch_add(1, std::memory_order_relaxed); }).get();
          } else {
            pool.post([hit] { hit->fetch_add(1, std::memory_order_relaxed); });
          }
        }
      });
    }
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    const std::size_t ending = 1 + rng % alive.size();
    for (std::size_t k = 0; k < ending; ++k) alive[k].join();
    alive.erase(alive.begin(), alive.begin() + static_cast<std::ptrdiff_t>(ending));
  }
  for (auto& t : alive) t.join();
  pool.wait_idle();
  for (std::size_t i = 0; i < total; ++i) ASSERT_EQ(hits[i].load(std::memory_order_relaxed), 1) << "task " << i;
}

// wait_idle() from one thread while submitters come and go: it returns each
// time, and every task counted (in slots released since) has run by then.
TEST(InjectionStress, WaitIdleWhileSlotsAreReleased) {
  const auto rounds = static_cast<int>(weft::test::stress_count(200, 50));
  weft::test::Watchdog dog("wait_idle with slots released");
  weft::ThreadPool pool(weft::PoolOptions{.workers = 2});
  std::atomic<std::int64_t> ran{0};
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::thread> ts;
    for (int k = 0; k < 8; ++k)
      ts.emplace_back([&] {
        for (int i = 0; i < 10; ++i) pool.post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
      });
    for (auto& t : ts) t.join();
    pool.wait_idle();
    ASSERT_EQ(ran.load(std::memory_order_relaxed), static_cast<std::int64_t>(r + 1) * 80) << "round " << r;
  }
}

}  // namespace
