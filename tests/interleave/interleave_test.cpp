// The deque, Parker, Event and pool under seeded random interleavings: each
// seed perturbs every sched point differently; a failure names its seed.
// Counters in this file are relaxed: only their totals are read, after the
// threads that bump them are joined or waited for (which synchronizes).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "interleave.hpp"
#include "fork_join.hpp"
#include "watchdog.hpp"
#include "weft/detail/exec/deque.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/queue/mpmc_queue.hpp"
#include "weft/queue/spsc_queue.hpp"
#include "weft/sync/event.hpp"
#include "weft/sync/parker.hpp"

namespace {

// Every seeded run must complete; the count is printed for the record.
void report_runs(const char* what, std::size_t runs, std::size_t seeds) {
  std::printf("%s: %zu seeded interleavings run\n", what, runs);
  EXPECT_EQ(runs, seeds);
}

TEST(Interleave, DequeOwnerAndThieves) {
  weft::test::Watchdog dog("interleaved deque", std::chrono::seconds(240));
  const auto seeds = weft::test::seeds(1000);
  std::size_t runs = 0;
  for (std::uint64_t seed : seeds) {
    SCOPED_TRACE("WEFT_INTERLEAVE_SEED=" + std::to_string(seed));
    weft::test::Interleaving il(seed);
    constexpr int kItems = 300;
    std::vector<weft::detail::Task> tasks(kItems);
    auto taken = std::make_unique<std::atomic<int>[]>(kItems);
    weft::detail::WorkStealingDeque d(2);  // tiny: the array grows under the thieves
    std::atomic<bool> done{false};
    auto take = [&](weft::detail::Task* t) { taken[static_cast<std::size_t>(t - tasks.data())].fetch_add(1, std::memory_order_relaxed); };
    std::vector<std::thread> thieves;
    for (int k = 0; k < 2; ++k)
      thieves.emplace_back([&] {
        weft::detail::DequeThief thief(d);
        while (!done.load(std::memory_order_acquire) || !thief.empty()) {
          weft::detail::Task* t = nullptr;
          if (thief.steal(t) == weft::detail::Steal::success) take(t);
        }
      });
    weft::detail::DequeOwner owner(d);
    for (int i = 0; i < kItems; ++i) {
      owner.push(&tasks[static_cast<std::size_t>(i)]);
      if (i % 2 == 0)
        if (weft::detail::Task* t = owner.pop()) take(t);
    }
    while (weft::detail::Task* t = owner.pop()) take(t);
    done.store(true, std::memory_order_release);
    for (auto& t : thieves) t.join();
    for (std::size_t i = 0; i < kItems; ++i) ASSERT_EQ(taken[i].load(), 1) << "item " << i;
    ++runs;
  }
  report_runs("deque owner/thieves", runs, seeds.size());
}

TEST(Interleave, ParkerManyUnparkers) {
  weft::test::Watchdog dog("interleaved parker", std::chrono::seconds(240));
  const auto seeds = weft::test::seeds(1000);
  std::size_t runs = 0;
  for (std::uint64_t seed : seeds) {
    SCOPED_TRACE("WEFT_INTERLEAVE_SEED=" + std::to_string(seed));
    weft::test::Interleaving il(seed);
    weft::Parker owner;
    std::atomic<int> count{0};
    constexpr int kPer = 50;
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; ++t)
      ts.emplace_back([&] {
        for (int i = 0; i < kPer; ++i) {
          count.fetch_add(1, std::memory_order_relaxed);
          owner.unpark();
        }
      });
    // A tiny spin budget so the futex path is exercised too.
    const weft::WaitOptions opts{std::chrono::nanoseconds(200), false};
    while (count.load(std::memory_order_relaxed) < 3 * kPer) owner.park(opts);
    for (auto& t : ts) t.join();
    ASSERT_EQ(count.load(), 3 * kPer);
    ++runs;
  }
  report_runs("parker many unparkers", runs, seeds.size());
}

TEST(Interleave, EventRingAndResets) {
  weft::test::Watchdog dog("interleaved event ring", std::chrono::seconds(240));
  const auto seeds = weft::test::seeds(600);
  std::size_t runs = 0;
  for (std::uint64_t seed : seeds) {
    SCOPED_TRACE("WEFT_INTERLEAVE_SEED=" + std::to_string(seed));
    weft::test::Interleaving il(seed);
    constexpr int kThreads = 3;
    constexpr int kHops = 300;
    weft::Event ev[kThreads];
    int token = 0;
    const weft::WaitOptions opts{std::chrono::nanoseconds(seed % 2 ? 0 : 2000), false};
    std::vector<std::thread> ts;
    for (int i = 0; i < kThreads; ++i)
      ts.emplace_back([&, i] {
        for (int k = i; k < kHops; k += kThreads) {
          ev[i].wait(opts);
          ev[i].reset();
          ++token;
          ev[(i + 1) % kThreads].set();
        }
      });
    ev[0].set();
    for (auto& t : ts) t.join();
    ASSERT_EQ(token, kHops);
    ++runs;
  }
  report_runs("event ring with resets", runs, seeds.size());
}

TEST(Interleave, QueuesDeliverExactlyOnce) {
  weft::test::Watchdog dog("interleaved queues", std::chrono::seconds(240));
  const auto seeds = weft::test::seeds(600);
  std::size_t runs = 0;
  for (std::uint64_t seed : seeds) {
    SCOPED_TRACE("WEFT_INTERLEAVE_SEED=" + std::to_string(seed));
    weft::test::Interleaving il(seed);
    constexpr int kItems = 200;
    weft::SpscQueue<int> spsc(2);
    std::thread producer([&] {
      for (int i = 0; i < kItems; ++i) spsc.push(i);
    });
    for (int i = 0; i < kItems; ++i) ASSERT_EQ(spsc.pop(), i);
    producer.join();

    weft::MpmcQueue<int> mpmc(2);
    auto seen = std::make_unique<std::atomic<int>[]>(2 * kItems);
    std::vector<std::thread> ts;
    for (int p = 0; p < 2; ++p)
      ts.emplace_back([&, p] {
        for (int i = 0; i < kItems; ++i) mpmc.push(p * kItems + i);
      });
    for (int c = 0; c < 2; ++c)
      ts.emplace_back([&] {
        for (int i = 0; i < kItems; ++i) seen[static_cast<std::size_t>(mpmc.pop())].fetch_add(1, std::memory_order_relaxed);
      });
    for (auto& t : ts) t.join();
    for (std::size_t i = 0; i < 2 * kItems; ++i) ASSERT_EQ(seen[i].load(), 1) << "item " << i;
    ++runs;
  }
  report_runs("spsc and mpmc queues", runs, seeds.size());
}

using weft::test::fib;

TEST(Interleave, PoolPostSubmitGroupShutdown) {
  weft::test::Watchdog dog("interleaved pool", std::chrono::seconds(240));
  const auto seeds = weft::test::seeds(400);
  std::size_t runs = 0;
  for (std::uint64_t seed : seeds) {
    SCOPED_TRACE("WEFT_INTERLEAVE_SEED=" + std::to_string(seed));
    weft::test::Interleaving il(seed);
    std::atomic<int> posted{0};
    {
      weft::PoolOptions o;
      o.workers = 1 + static_cast<int>(seed % 3);
      o.wait.spin = std::chrono::nanoseconds(seed % 2 ? 0 : 5000);
      weft::ThreadPool pool(o);
      std::thread outside([&] {
        for (int i = 0; i < 50; ++i) pool.post([&] { posted.fetch_add(1, std::memory_order_relaxed); });
      });
      auto f = pool.submit([&] { return fib(pool, 8); });
      std::atomic<int> pf{0};
      weft::parallel_for(pool, 0, 64, [&](int) { pf.fetch_add(1, std::memory_order_relaxed); });
      ASSERT_EQ(f.get(seed % 2 ? weft::Inline::no : weft::Inline::allow), 21);
      ASSERT_EQ(pf.load(), 64);
      outside.join();
      pool.wait_idle();
      ASSERT_EQ(posted.load(), 50);
      for (int i = 0; i < 20; ++i) pool.post([&] { posted.fetch_add(1, std::memory_order_relaxed); });
    }  // the destructor must run the last 20
    ASSERT_EQ(posted.load(), 70);
    ++runs;
  }
  report_runs("pool post/submit/group/shutdown", runs, seeds.size());
}


}  // namespace

namespace {

std::atomic<int> g_hook_calls{0};

// The seeds above only mean something if the structures really call the
// hook: count the calls one push, pop, set and unpark make.
TEST(Interleave, SeamReachesTheStructures) {
  weft::detail::g_sched_hook = []() noexcept { g_hook_calls.fetch_add(1, std::memory_order_relaxed); };
  weft::detail::Task t;
  weft::detail::WorkStealingDeque d(2);
  d.push(&t);
  const int after_push = g_hook_calls.load();
  EXPECT_EQ(d.pop(), &t);
  const int after_pop = g_hook_calls.load();
  weft::Event e;
  e.set();
  const int after_set = g_hook_calls.load();
  weft::Parker p;
  p.unpark();
  p.park();
  weft::detail::g_sched_hook = nullptr;
  EXPECT_GT(after_push, 0);
  EXPECT_GT(after_pop, after_push);
  EXPECT_GT(after_set, after_pop);
  EXPECT_GT(g_hook_calls.load(), after_set);
}

}  // namespace
