// The seat (weft/detail/exec/seat.hpp): an outside thread that calls a
// blocking algorithm, or waits for a TaskGroup, computes as one of the
// pool's P threads while a parked worker sits out, under that worker's
// index; at most P threads compute; the seat is given back however the
// call ends. sync_wait(pool, task) from outside starts its root in the seat. Also: a task that get() runs in place on an outside thread
// stays its pool's, across a seat taken meanwhile.
#include "weft/aio/channel.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/pool_stats.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <optional>
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

// The seated caller's first wake-up of a call keeps the woken worker off
// the caller's CPU until that worker runs (PoolCore::steer_off()); by the
// time it runs a task its CPU mask is whole again. A worker left with the
// narrowed mask fails this.
TEST(Seat, AWorkerTheSeatedCallerWokeRunsWithItsWholeCpuMask) {
  cpu_set_t whole;
  ASSERT_EQ(sched_getaffinity(0, sizeof whole, &whole), 0);
  if (CPU_COUNT(&whole) < 2) GTEST_SKIP() << "one CPU allowed: nothing to steer off";
  weft::test::Watchdog dog("steered wake-ups");
  weft::ThreadPool pool(parking(3));  // the seat leases one; the caller's push wakes another
  const std::thread::id me = std::this_thread::get_id();
  std::atomic<int> worker_tasks{0};
  std::atomic<int> narrowed{0};
  for (int round = 0; round < 20; ++round) {
    until_all_parked(pool);
    weft::parallel_for(pool, 0, 32, [&](int) {
      spin_for(50us);
      if (std::this_thread::get_id() == me) return;
      cpu_set_t now;
      if (pthread_getaffinity_np(pthread_self(), sizeof now, &now) != 0 || !CPU_EQUAL(&now, &whole))
        narrowed.fetch_add(1);
      worker_tasks.fetch_add(1);
    });
  }
  EXPECT_GT(worker_tasks.load(), 0) << "no worker ran a task: nothing was woken";
  EXPECT_EQ(narrowed.load(), 0) << "a worker ran a task with the mask its waker narrowed";
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
// threads run them, and the worker that sat out works again afterwards.
// Whether a worker is still parked when wait() is called is up to the
// kernel: the pushes before it wake workers, and a round whose pushes woke
// every worker has no seat (the caller then runs nothing). On a host with
// fast wake-ups a burst of 2000 pushes always woke both (a CI run saw no
// seat in 20 rounds), so rounds alternate with two long tasks: the first
// push wakes one worker, which searches for the wake latency (several us)
// while the second push finds it searching and wakes nobody. Rounds go on
// until one took the seat (the watchdog and the round bound end a run that
// never does, which fails).
TEST(Seat, TaskGroupWaitFromOutsideComputesAsOneOfThePAndGivesTheSeatBack) {
  weft::test::Watchdog dog("task group wait seat");
  weft::ThreadPool pool(parking(2));
  const std::thread::id caller = std::this_thread::get_id();
  int on_caller = 0;
  int most_at_once = 0;
  int rounds = 0;
  for (; rounds < 20 || (on_caller == 0 && rounds < 1000); ++rounds) {
    until_all_parked(pool);
    const bool burst = rounds % 2 == 0;
    const int tasks = burst ? 2000 : 2;
    const auto each = burst ? 1us : 200us;
    std::atomic<int> mine{0};
    std::atomic<int> done{0};
    std::atomic<int> running{0};
    std::atomic<int> peak{0};
    {
      weft::TaskGroup g(pool);
      for (int i = 0; i < tasks; ++i) g.run([&] {
        const int now = running.fetch_add(1) + 1;
        for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
        }
        spin_for(each);
        if (std::this_thread::get_id() == caller) mine.fetch_add(1);
        running.fetch_sub(1);
        done.fetch_add(1);
      });
      g.wait();
    }
    EXPECT_EQ(done.load(), tasks) << "round " << rounds;
    EXPECT_FALSE(pool.is_worker()) << "the caller is still seated after round " << rounds;
    on_caller += mine.load();
    most_at_once = std::max(most_at_once, peak.load());
    std::atomic<int> n{0};  // both workers are back
    for (int i = 0; i < 100; ++i) pool.post([&] { n.fetch_add(1); });
    pool.wait_idle();
    EXPECT_EQ(n.load(), 100) << "round " << rounds;
  }
  EXPECT_LE(most_at_once, 2) << "more than P threads ran the group's tasks at once";
  EXPECT_GT(on_caller, 0) << "the caller never computed in " << rounds << " rounds: no wait took the seat";
  EXPECT_EQ(pool.stats().seated.tasks_run, static_cast<std::uint64_t>(on_caller));
}

// Two posted tasks that can only finish together: both workers run at
// once, so neither is still leased to a seat (a hang trips the watchdog).
void both_workers_run(weft::ThreadPool& pool) {
  std::atomic<int> arrived{0};
  for (int i = 0; i < 2; ++i) pool.post([&] {
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
  });
  pool.wait_idle();
}

// sync_wait(pool, task) from an outside thread, with a worker parked: the
// root starts on the caller, seated (a worker of the pool), counted as one
// of the seat's tasks; its children run on at most P threads; the caller is
// an outside thread again once it returns, with both workers back. (A
// round may find a worker still searching after the last one, and hand the
// root off instead: then it starts on a worker.)
TEST(Seat, SyncWaitFromOutsideStartsTheRootInTheSeat) {
  weft::test::Watchdog dog("sync_wait seat");
  weft::ThreadPool pool(parking(2));
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> running{0};
  std::atomic<int> peak{0};
  auto child = [&](int i) -> weft::Task<int> {
    const int now = running.fetch_add(1) + 1;
    for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
    }
    spin_for(50us);
    running.fetch_sub(1);
    co_return i;
  };
  struct Start {
    bool on_caller;
    bool seated;
  };
  auto root = [&](Start& start) -> weft::Task<long> {
    start = {std::this_thread::get_id() == caller, pool.is_worker()};
    std::vector<weft::Task<int>> kids;
    for (int i = 0; i < 64; ++i) kids.push_back(child(i));
    const std::vector<int> got = co_await weft::when_all(std::move(kids));
    co_return std::accumulate(got.begin(), got.end(), 0L);
  };
  int seated_starts = 0;
  int rounds = 0;
  for (; rounds < 20 || (seated_starts == 0 && rounds < 1000); ++rounds) {
    until_all_parked(pool);
    Start start{false, false};
    EXPECT_EQ(weft::sync_wait(pool, root(start)), 64L * 63 / 2) << "round " << rounds;
    EXPECT_FALSE(pool.is_worker()) << "the caller is still seated after round " << rounds;
    if (start.on_caller) {
      EXPECT_TRUE(start.seated) << "round " << rounds << ": the root ran on the caller, not as a worker of the pool";
      ++seated_starts;
    }
    both_workers_run(pool);
    // A root with no children, started seated, is the seat's one task run:
    // counted (wait_idle() sees it pending while it runs).
    until_all_parked(pool);
    const std::uint64_t before = pool.stats().seated.tasks_run;
    Start lone{false, false};
    auto leaf = [&]() -> weft::Task<int> {
      lone = {std::this_thread::get_id() == caller, pool.is_worker()};
      co_return 1;
    };
    EXPECT_EQ(weft::sync_wait(pool, leaf()), 1);
    if (lone.on_caller) {
      EXPECT_EQ(pool.stats().seated.tasks_run - before, 1u) << "round " << rounds << ": the root was not counted";
    }
  }
  EXPECT_GT(seated_starts, 0) << "in " << rounds << " rounds no root started in the seat";
  EXPECT_LE(peak.load(), 2) << "more than P threads ran the children at once";
}

// A root that suspends with nothing else to run: the caller gives the seat
// back before it sleeps, so the pool's one worker (the one that sat out)
// resumes it. The value it waits for is sent only once the seat is back
// (the worker counted idle again); kept, the seat would hang the test.
TEST(Seat, SyncWaitGivesTheSeatBackBeforeItSleeps) {
  weft::test::Watchdog dog("sync_wait seat give-back");
  weft::ThreadPool pool(parking(1));
  const std::thread::id caller = std::this_thread::get_id();
  int seated_rounds = 0;
  for (int round = 0; round < 200 && seated_rounds < 5; ++round) {
    until_all_parked(pool);
    weft::Channel<int> ch(1);
    std::atomic<int> started{-1};  // 1: the root started seated on the caller; 0: elsewhere
    auto root = [&]() -> weft::Task<bool> {
      const bool seated = std::this_thread::get_id() == caller && pool.is_worker();
      started.store(seated ? 1 : 0);
      const std::optional<int> v = co_await ch.pop();
      co_return v.has_value() && std::this_thread::get_id() != caller;
    };
    std::thread sender([&] {
      while (started.load() < 0) std::this_thread::yield();
      // Seated, the pool's one worker is leased: counted neither asleep nor
      // searching until the seat is given back.
      if (started.load() == 1)
        while (pool.idle_worker_count() == 0) std::this_thread::yield();
      EXPECT_TRUE(ch.try_push(7));
    });
    const bool resumed_on_the_worker = weft::sync_wait(pool, root());
    sender.join();
    EXPECT_FALSE(pool.is_worker());
    if (started.load() == 1) {
      EXPECT_TRUE(resumed_on_the_worker) << "round " << round;
      ++seated_rounds;
    }
  }
  EXPECT_EQ(seated_rounds, 5) << "too few rounds started in the seat";
}

// Seated inside a coroutine's resumption on an outside thread (an algorithm
// called by a sync_wait(task) root), a coroutine the seated work wakes goes
// to its pool, not to the outer resumption's hand-off slot, where it would
// run on this thread once the outer coroutine suspends. (A round whose
// consumer had not suspended yet, or that found no worker parked, does not
// exercise this and is not counted.)
TEST(Seat, ACoroutineWokenInTheSeatResumesOnItsPool) {
  weft::test::Watchdog dog("seat under an outer coroutine");
  weft::ThreadPool pool(parking(1));
  const std::thread::id caller = std::this_thread::get_id();
  int exercised = 0;
  for (int round = 0; round < 200 && exercised < 10; ++round) {
    weft::Channel<int> ch(1);
    std::atomic<bool> waiting{false};
    std::thread::id resumed_on;
    auto consumer = [&]() -> weft::Task<> {
      waiting.store(true);
      (void)co_await ch.pop();
      resumed_on = std::this_thread::get_id();
    };
    weft::Future<void> done = pool.spawn(consumer());
    while (!waiting.load()) std::this_thread::yield();
    until_all_parked(pool);  // the consumer suspended, its worker parked
    bool seated = false;
    auto outer = [&]() -> weft::Task<> {
      weft::parallel_for(pool, 0, 1, [&](int) {
        // On the caller and a worker: seated (a hand-off runs the body on
        // the worker, which proves nothing here).
        seated = pool.is_worker() && std::this_thread::get_id() == caller;
        EXPECT_TRUE(ch.try_push(1));
      });
      co_await done;  // the outer suspends: a hand-off slot would run here
    };
    weft::sync_wait(outer());
    if (seated) {
      EXPECT_NE(resumed_on, caller) << "round " << round << ": the woken coroutine ran on the seated caller's thread";
      ++exercised;
    }
  }
  EXPECT_GT(exercised, 0) << "no round woke the consumer from the seat";
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

// ---- tasks run in place by an outside get() ---------------------------------

// A pool of one worker, held by a task until release (or destruction), so
// that the next task submitted stays queued and get() runs it in place.
struct HeldPool {
  std::atomic<bool> release{false};
  std::atomic<bool> holding{false};
  weft::ThreadPool pool{parking(1)};

  HeldPool() {
    pool.post([this] {
      holding.store(true);
      while (!release.load()) std::this_thread::yield();
    });
    while (!holding.load()) std::this_thread::yield();
  }
  ~HeldPool() { release.store(true); }  // before `pool` joins its worker
};

// The task is still the pool's: current() names it there (with no worker
// index), and a default group made in it runs on it, not on
// weft::default_pool().
TEST(InPlace, ATaskGetRunsHereStillFindsItsPool) {
  weft::test::Watchdog dog("a task run in place by get()");
  HeldPool held;
  weft::ThreadPool& pool = held.pool;
  const std::thread::id here = std::this_thread::get_id();
  std::atomic<int> children_on_pool{0};
  struct Seen {
    bool in_place;
    const weft::ThreadPool* current;
    int index;
  };
  auto f = pool.submit([&] {
    const Seen s{std::this_thread::get_id() == here, weft::ThreadPool::current(),
                 weft::ThreadPool::current_worker_index()};
    weft::TaskGroup g;  // no pool named: the current one
    for (int i = 0; i < 8; ++i)
      g.run([&] {
        if (weft::ThreadPool::current() == &pool) children_on_pool.fetch_add(1);
      });
    held.release.store(true);  // the worker may go on: the group's tasks wait for it
    g.wait();
    return s;
  });
  const Seen s = f.get();  // the one worker is held: get() runs the task here
  pool.wait_idle();
  EXPECT_TRUE(s.in_place);
  EXPECT_EQ(s.current, &pool);
  EXPECT_EQ(s.index, -1);
  EXPECT_EQ(children_on_pool.load(), 8);
  EXPECT_EQ(weft::ThreadPool::current(), nullptr);  // only while the task runs
}

// Run in place inside a task run in place: each sees its own pool, and the
// outer one's is current again once the inner get() returns.
TEST(InPlace, NestedRunsInPlaceSeeTheirOwnPools) {
  weft::test::Watchdog dog("nested tasks run in place");
  HeldPool a;
  HeldPool b;
  const std::thread::id here = std::this_thread::get_id();
  struct Seen {
    bool outer_here = false, inner_here = false;
    const weft::ThreadPool *outer = nullptr, *inner = nullptr, *outer_after = nullptr;
  };
  auto f = a.pool.submit([&] {
    Seen s;
    s.outer_here = std::this_thread::get_id() == here;
    s.outer = weft::ThreadPool::current();
    auto g = b.pool.submit([&] {
      s.inner_here = std::this_thread::get_id() == here;
      s.inner = weft::ThreadPool::current();
    });
    g.get();
    s.outer_after = weft::ThreadPool::current();
    return s;
  });
  const Seen s = f.get();
  EXPECT_TRUE(s.outer_here);
  EXPECT_TRUE(s.inner_here);
  EXPECT_EQ(s.outer, &a.pool);
  EXPECT_EQ(s.inner, &b.pool);
  EXPECT_EQ(s.outer_after, &a.pool);
  EXPECT_EQ(weft::ThreadPool::current(), nullptr);
}

// Such a task takes another pool's seat for a loop: inside the loop that
// pool is current, and once the seat is given back the task's own pool is
// again (the seat must not wipe it).
TEST(InPlace, ATaskRunHereKeepsItsPoolAcrossAnotherPoolsSeat) {
  weft::test::Watchdog dog("a task run in place, seated in another pool");
  HeldPool home;
  const std::thread::id here = std::this_thread::get_id();
  struct Seen {
    bool in_place = false;
    bool seated = false;        // this thread ran a body in other's seat
    bool body_on_other = true;  // every body saw `other` as current
    const weft::ThreadPool* after = nullptr;
  };
  // Whether this thread runs a body itself in other's seat is the
  // scheduler's call (the worker it wakes may steal every piece first, about
  // one try in twenty-five on 2 CPUs): try until it does, checking the
  // pools on every try.
  bool seated_once = false;
  for (int attempt = 0; attempt < 50 && !seated_once; ++attempt) {
    weft::ThreadPool other(parking(2));
    until_all_parked(other);
    auto f = home.pool.submit([&] {
      Seen s;
      s.in_place = std::this_thread::get_id() == here;
      // Default (seq_cst) stores and loads, for want of a reason to pick
      // one: the loads come after parallel_for() returns, which joins every
      // body, so any order would do.
      std::atomic<bool> ok{true};
      std::atomic<bool> mine_seated{false};
      weft::parallel_for(other, 0, 256, [&](int) {
        if (weft::ThreadPool::current() != &other) ok.store(false);
        if (std::this_thread::get_id() == here && other.is_worker()) mine_seated.store(true);
      });
      s.seated = mine_seated.load();
      s.body_on_other = ok.load();
      s.after = weft::ThreadPool::current();
      return s;
    });
    const Seen s = f.get();
    EXPECT_TRUE(s.in_place);
    EXPECT_TRUE(s.body_on_other);
    EXPECT_EQ(s.after, &home.pool);
    seated_once = s.seated;
  }
  EXPECT_TRUE(seated_once) << "in 50 tries this thread never ran a body in other's seat: the checks did not cover it";
}

}  // namespace
