// Many outside submitters: a thousand threads, far more than a group of
// injection slots (64) and than the 256 slots there once were, all
// submitting at once. Every task runs exactly once and wait_idle() sees them all.
// Counters are relaxed: only read after wait_idle() and the joins.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

constexpr int kSubmitters = 1000;

TEST(SubmittersStress, AThousandSubmittersEachTaskRunsOnce) {
  const auto per = static_cast<int>(std::max<std::int64_t>(1, weft::test::stress_count(100'000) / kSubmitters));
  weft::test::Watchdog dog("1000 submitting threads");
  const auto total = static_cast<std::size_t>(kSubmitters) * static_cast<std::size_t>(per);
  auto hits = std::make_unique<std::atomic<std::uint8_t>[]>(total);
  weft::PoolOptions o;
  o.workers = 4;
  weft::ThreadPool pool(o);
  std::atomic<bool> go{false};
  std::vector<std::thread> submitters;
  submitters.reserve(kSubmitters);
  for (int t = 0; t < kSubmitters; ++t)
    submitters.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();  // acquire: a start gate only
      for (int i = 0; i < per; ++i) {
        std::atomic<std::uint8_t>* hit = &hits[static_cast<std::size_t>(t) * static_cast<std::size_t>(per) +
                                               static_cast<std::size_t>(i)];
        pool.post([hit] { hit->fetch_add(1, std::memory_order_relaxed); });
      }
    });
  go.store(true, std::memory_order_release);  // release: pairs with the gate's acquire
  for (auto& s : submitters) s.join();
  pool.wait_idle();
  for (std::size_t i = 0; i < total; ++i) ASSERT_EQ(hits[i].load(std::memory_order_relaxed), 1) << "task " << i;
}

}  // namespace
