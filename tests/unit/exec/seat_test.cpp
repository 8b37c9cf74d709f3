// The seat (weft/detail/exec/seat.hpp): an outside thread that calls a
// blocking algorithm, or waits for a TaskGroup, computes as one of the
// pool's P threads while a parked worker sits out, under that worker's
// index; at most P threads compute; the seat is given back however the
// call ends.
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/pool_stats.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "watchdog.hpp"

using namespace std::chrono_literals;

namespace {

// Workers that park as soon as they find nothing: a sleeper to lease.
weft::PoolOptions parking(int n) {
  weft::PoolOptions o;
  o.workers = n;
  o.wait.spin = 0ns;
  o.wait.adaptive = false;
  return o;
}

// Until every worker has parked once and the pool is idle: the next
// outside call finds a sleeper to lease.
void until_all_parked(weft::ThreadPool& pool) {
  while (pool.stats().total.parks < static_cast<std::uint64_t>(pool.size()) ||
         pool.idle_worker_count() < pool.size())
    std::this_thread::sleep_for(100us);  // the watchdog bounds it
}

void spin_for(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST(Seat, AnOutsideCallerComputesAsAWorkerUnderTheSittingOutWorkersIndex) {
  weft::test::Watchdog dog("seated caller");
  weft::ThreadPool pool(parking(2));
  until_all_parked(pool);
  const std::thread::id me = std::this_thread::get_id();
  std::atomic<int> mine{0};
  std::atomic<int> bad_index{0};
  std::atomic<int> my_index{-2};
  weft::parallel_for(pool, 0, 64, [&](int) {
    const int idx = weft::ThreadPool::current_worker_index();
    if (idx < 0 || idx >= pool.size()) bad_index.fetch_add(1);
    if (std::this_thread::get_id() == me) {
      mine.fetch_add(1);
      my_index.store(idx);
      if (!pool.is_worker()) bad_index.fetch_add(1);
    }
  });
  EXPECT_GT(mine.load(), 0) << "the caller computed nothing: no seat was taken";
  EXPECT_EQ(bad_index.load(), 0) << "an index outside [0, size()), or the seated caller not a worker";
  EXPECT_GE(my_index.load(), 0);
  // Given back: an outside thread again.
  EXPECT_FALSE(pool.is_worker());
  EXPECT_EQ(weft::ThreadPool::current_worker_index(), -1);
  pool.wait_idle();
  const weft::PoolStats s = pool.stats();
  EXPECT_GT(s.seated.busy.count(), 0);
  EXPECT_EQ(s.seated.index, -1);
}

// P threads at most, whoever calls: the bodies are slow enough that every
// thread that can join does; each index has one thread at a time.
TEST(Seat, AtMostPThreadsComputeAndEachIndexHasOneThread) {
  weft::test::Watchdog dog("at most P threads");
  for (int p : {1, 2, 3}) {
    weft::ThreadPool pool(parking(p));
    for (int round = 0; round < 10; ++round) {
      if (round % 2 == 0) until_all_parked(pool);  // a seat; odd rounds may hand off
      std::mutex m;
      std::set<std::thread::id> threads;
      std::vector<std::set<std::thread::id>> by_index(static_cast<std::size_t>(p));
      weft::parallel_for(pool, 0, 8 * p, [&](int) {
        spin_for(200us);
        const int idx = weft::ThreadPool::current_worker_index();
        std::lock_guard lock(m);
        threads.insert(std::this_thread::get_id());
        if (idx >= 0 && idx < p) by_index[static_cast<std::size_t>(idx)].insert(std::this_thread::get_id());
      });
      EXPECT_LE(threads.size(), static_cast<std::size_t>(p)) << p << " workers, round " << round;
      for (int i = 0; i < p; ++i)
        EXPECT_LE(by_index[static_cast<std::size_t>(i)].size(), 1U) << "index " << i << ", " << p << " workers";
    }
  }
}

TEST(Seat, IsGivenBackWhenTheCallThrows) {
  weft::test::Watchdog dog("seat and exceptions");
  weft::ThreadPool pool(parking(2));
  for (int round = 0; round < 20; ++round) {
    until_all_parked(pool);
    EXPECT_THROW(weft::parallel_for(pool, 0, 100, [](int i) {
                   if (i == 0) throw std::runtime_error("boom");
                 }),
                 std::runtime_error);
    EXPECT_FALSE(pool.is_worker()) << "round " << round;
    // The worker that sat out is back: both work again.
    std::atomic<int> n{0};
    for (int i = 0; i < 100; ++i) pool.post([&] { n.fetch_add(1); });
    pool.wait_idle();
    EXPECT_EQ(n.load(), 100);
  }
}

// TaskGroup::wait() on an outside thread takes the seat when a worker is
// parked: the caller runs some of the group's tasks, never more than P
// threads run them, and the worker that sat out works again afterwards. (A
// round whose pushes woke every worker has no seat: the caller then runs
// nothing, which is why only the sum over the rounds must show the seat.)
TEST(Seat, TaskGroupWaitFromOutsideComputesAsOneOfThePAndGivesTheSeatBack) {
  weft::test::Watchdog dog("task group wait seat");
  weft::ThreadPool pool(parking(2));
  const std::thread::id caller = std::this_thread::get_id();
  int on_caller = 0;
  int most_at_once = 0;
  for (int round = 0; round < 20; ++round) {
    until_all_parked(pool);
    std::atomic<int> mine{0};
    std::atomic<int> done{0};
    std::atomic<int> running{0};
    std::atomic<int> peak{0};
    {
      weft::TaskGroup g(pool);
      for (int i = 0; i < 2000; ++i) g.run([&] {
        const int now = running.fetch_add(1) + 1;
        for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
        }
        spin_for(1us);
        if (std::this_thread::get_id() == caller) mine.fetch_add(1);
        running.fetch_sub(1);
        done.fetch_add(1);
      });
      g.wait();
    }
    EXPECT_EQ(done.load(), 2000) << "round " << round;
    EXPECT_FALSE(pool.is_worker()) << "the caller is still seated after round " << round;
    on_caller += mine.load();
    most_at_once = std::max(most_at_once, peak.load());
    std::atomic<int> n{0};  // both workers are back
    for (int i = 0; i < 100; ++i) pool.post([&] { n.fetch_add(1); });
    pool.wait_idle();
    EXPECT_EQ(n.load(), 100) << "round " << round;
  }
  EXPECT_LE(most_at_once, 2) << "more than P threads ran the group's tasks at once";
  EXPECT_GT(on_caller, 0) << "the caller never computed: no wait took the seat";
  EXPECT_EQ(pool.stats().seated.tasks_run, static_cast<std::uint64_t>(on_caller));
}

// Tasks the seated caller leaves queued (posted by a loop body) run, and
// wait_idle() waits for them.
TEST(Seat, WhatTheSeatedCallerLeavesQueuedRuns) {
  weft::test::Watchdog dog("seat leftovers");
  weft::ThreadPool pool(parking(1));
  std::atomic<int> posted{0};
  for (int round = 0; round < 50; ++round) {
    until_all_parked(pool);
    weft::parallel_for(pool, 0, 4, [&](int) { pool.post([&] { posted.fetch_add(1); }); });
    pool.wait_idle();
    EXPECT_EQ(posted.load(), 4 * (round + 1)) << "round " << round;
  }
}

// Nested calls and a reduction from the seat give the serial answers; a
// second outside thread meanwhile hands off (one seat).
TEST(Seat, NestedCallsAndASecondCaller) {
  weft::test::Watchdog dog("seat nested");
  weft::ThreadPool pool(parking(2));
  std::vector<long> v(10'000);
  std::iota(v.begin(), v.end(), 1L);
  const long expected = 10'000L * 10'001L / 2;
  for (int round = 0; round < 20; ++round) {
    until_all_parked(pool);
    std::atomic<long> other{0};
    std::thread second([&] {
      other = weft::parallel_reduce(pool, v.begin(), v.end(), 0L, std::plus<>{});
    });
    std::vector<std::atomic<int>> hits(100);
    weft::parallel_for(pool, 0, 10, [&](int i) {
      weft::parallel_for(pool, 0, 10, [&](int j) { hits[static_cast<std::size_t>(i * 10 + j)].fetch_add(1); });
    });
    const long mine = weft::parallel_reduce(pool, v.begin(), v.end(), 0L, std::plus<>{});
    second.join();
    EXPECT_EQ(mine, expected);
    EXPECT_EQ(other.load(), expected);
    for (std::size_t k = 0; k < hits.size(); ++k) EXPECT_EQ(hits[k].load(), 1) << k;
  }
}

}  // namespace
