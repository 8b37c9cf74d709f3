// The deque, Parker, Event and pool under seeded random interleavings: each
// seed perturbs every sched point differently; a failure names its seed.
// Counters in this file are relaxed: only their totals are read, after the
// threads that bump them are joined or waited for (which synchronizes).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "deque_race.hpp"
#include "fork_join.hpp"
#include "interleave.hpp"
#include "weft/detail/exec/deque.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/queue/mpmc_queue.hpp"
#include "weft/queue/spsc_queue.hpp"
#include "weft/sync/event.hpp"
#include "weft/sync/parker.hpp"

namespace {

TEST(Interleave, DequeOwnerAndThieves) {
  weft::test::for_each_interleaving("deque owner/thieves", 1000, [&](std::uint64_t) {
    const std::vector<int> taken = weft::test::deque_race(300, 2, 2, 2);
    for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], 1) << "item " << i;
  });
}

TEST(Interleave, DequeOwnerAndBatchThieves) {
  weft::test::for_each_interleaving("deque owner/batch thieves", 1000, [&](std::uint64_t) {
    const std::vector<int> taken = weft::test::deque_race(300, 2, 2, 2, weft::test::OwnerTakes::batched);
    for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], 1) << "item " << i;
  });
}

TEST(Interleave, DequeOwnerClaimIfAndThieves) {
  weft::test::for_each_interleaving("deque claim_if owner/thieves", 1000, [&](std::uint64_t) {
    const std::vector<int> taken = weft::test::deque_race(300, 2, 2, 2, weft::test::OwnerTakes::claim_if);
    for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], 1) << "item " << i;
  });
}

TEST(Interleave, DequeOwnerTakesGroupsBackAndThieves) {
  weft::test::for_each_interleaving("deque take_n owner/thieves", 1000, [&](std::uint64_t) {
    const std::vector<int> taken = weft::test::deque_race(300, 2, 2, 2, weft::test::OwnerTakes::take_n);
    for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], 1) << "item " << i;
  });
}

TEST(Interleave, ParkerManyUnparkers) {
  weft::test::for_each_interleaving("parker many unparkers", 1000, [&](std::uint64_t) {
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
  });
}

TEST(Interleave, EventRingAndResets) {
  weft::test::for_each_interleaving("event ring with resets", 600, [&](std::uint64_t seed) {
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
  });
}

TEST(Interleave, QueuesDeliverExactlyOnce) {
  weft::test::for_each_interleaving("spsc and mpmc queues", 600, [&](std::uint64_t) {
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
  });
}

using weft::test::fib;

TEST(Interleave, PoolPostSubmitGroupShutdown) {
  weft::test::for_each_interleaving("pool post/submit/group/shutdown", 400, [&](std::uint64_t seed) {
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
      ASSERT_EQ((seed % 2 ? weft::detail::get_remote(f) : f.get()), 21);
      ASSERT_EQ(pf.load(), 64);
      outside.join();
      pool.wait_idle();
      ASSERT_EQ(posted.load(), 50);
      for (int i = 0; i < 20; ++i) pool.post([&] { posted.fetch_add(1, std::memory_order_relaxed); });
    }  // the destructor must run the last 20
    ASSERT_EQ(posted.load(), 70);
  });
}


}  // namespace

namespace {

std::atomic<int> g_hook_calls{0};

// The seeds above only mean something if the structures really call the
// hook: count the calls one push, pop, set and unpark make.
TEST(Interleave, SeamReachesTheStructures) {
  weft::detail::g_sched_hook = []() noexcept { g_hook_calls.fetch_add(1, std::memory_order_relaxed); };
  weft::detail::TaskNode t;
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
