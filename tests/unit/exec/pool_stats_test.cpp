// ThreadPool::stats(): per-worker counts that add up.
#include "weft/exec/pool_stats.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "watchdog.hpp"

using namespace std::chrono_literals;

namespace {

weft::PoolOptions workers(int n, std::chrono::nanoseconds spin = weft::WaitOptions::default_spin()) {
  weft::PoolOptions o;
  o.workers = n;
  o.wait.spin = spin;
  o.wait.adaptive = false;
  return o;
}

template <class Pred>
void poll_until(Pred pred) {
  while (!pred()) std::this_thread::sleep_for(100us);  // the watchdog bounds it
}

TEST(PoolStats, TotalIsTheSumOfTheWorkers) {
  weft::test::Watchdog dog("stats total");
  weft::ThreadPool pool(workers(3));
  for (int i = 0; i < 3000; ++i) pool.post([] {});
  pool.wait_idle();
  pool.shutdown();  // quiet: the counts no longer move
  const weft::PoolStats s = pool.stats();
  ASSERT_EQ(s.workers.size(), 3U);
  weft::WorkerStats sum;
  for (std::size_t i = 0; i < s.workers.size(); ++i) {
    EXPECT_EQ(s.workers[i].index, static_cast<int>(i));
    sum += s.workers[i];
  }
  EXPECT_EQ(s.total.index, -1);
  EXPECT_EQ(s.seated.index, -1);
  EXPECT_EQ(s.seated.tasks_run, 0U);  // posts only: nobody took the seat
  sum += s.seated;
  EXPECT_EQ(sum.tasks_run, s.total.tasks_run);
  EXPECT_EQ(sum.steals_from_workers, s.total.steals_from_workers);
  EXPECT_EQ(sum.steals_from_submitters, s.total.steals_from_submitters);
  EXPECT_EQ(sum.handed_posts, s.total.handed_posts);
  EXPECT_EQ(sum.failed_steal_rounds, s.total.failed_steal_rounds);
  EXPECT_EQ(sum.parks, s.total.parks);
  EXPECT_EQ(sum.wakeups_sent, s.total.wakeups_sent);
  EXPECT_EQ(sum.wakeups_received, s.total.wakeups_received);
  EXPECT_EQ(sum.spins_found_work, s.total.spins_found_work);
  EXPECT_EQ(sum.busy, s.total.busy);
  EXPECT_EQ(sum.idle, s.total.idle);
}

TEST(PoolStats, TasksRunEqualsTasksSubmittedFromOutsideAndInside) {
  weft::test::Watchdog dog("tasks run");
  weft::ThreadPool pool(workers(2));
  constexpr int kOutside = 5000;
  for (int i = 0; i < kOutside; ++i) pool.post([&pool] { pool.post([] {}); });
  pool.wait_idle();
  // wait_idle() saw every completion: the snapshot counts them all.
  const weft::PoolStats s = pool.stats();
  EXPECT_EQ(s.total.tasks_run, 2U * kOutside);
  // Every outside task was taken from the submitter's deque once, alone or
  // in a batch, or handed to the worker its post woke; a task moved in a
  // batch may be stolen again from the worker that took it, so worker
  // steals are bounded by the tasks run, no more.
  EXPECT_EQ(s.total.steals_from_submitters + s.total.handed_posts, static_cast<std::uint64_t>(kOutside));
  EXPECT_LE(s.total.steals_from_workers, s.total.tasks_run);
}

TEST(PoolStats, OneWorkerTakesEveryOutsideTaskFromTheSubmittersDeque) {
  weft::test::Watchdog dog("injection steals");
  weft::ThreadPool pool(workers(1));
  for (int i = 0; i < 1000; ++i) pool.post([] {});
  pool.wait_idle();
  const weft::WorkerStats w = pool.stats().workers.at(0);
  EXPECT_EQ(w.tasks_run, 1000U);
  // Or handed to it by a post that found it asleep.
  EXPECT_EQ(w.steals_from_submitters + w.handed_posts, 1000U);
  EXPECT_EQ(w.steals_from_workers, 0U);  // nobody to steal from
}

TEST(PoolStats, ABlockedWorkersChildrenAreCountedAsStolen) {
  weft::test::Watchdog dog("worker steals");
  weft::ThreadPool pool(workers(2));
  constexpr int kChildren = 100;
  std::atomic<int> ran{0};
  pool.post([&] {
    for (int i = 0; i < kChildren; ++i) pool.post([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    // Busy here without helping: only the other worker can run the children.
    while (ran.load(std::memory_order_relaxed) < kChildren) std::this_thread::yield();
  });
  pool.wait_idle();
  const weft::PoolStats s = pool.stats();
  EXPECT_EQ(s.total.tasks_run, kChildren + 1U);
  EXPECT_EQ(s.total.steals_from_workers, static_cast<std::uint64_t>(kChildren));
  // The outside task: taken from this thread's deque, or handed to the
  // worker its post woke if both were asleep by then.
  EXPECT_EQ(s.total.steals_from_submitters + s.total.handed_posts, 1U);
  std::uint64_t by_ring = 0;
  for (std::uint64_t n : s.total.steals_by_ring) by_ring += n;
  EXPECT_EQ(by_ring, static_cast<std::uint64_t>(kChildren));
}

TEST(PoolStats, WorkersSayWhereTheyRun) {
  weft::test::Watchdog dog("worker cpus");
  const weft::CpuSet allowed = weft::process_allowed_cpus();
  {
    weft::ThreadPool pool(workers(2));  // unpinned: where each started
    for (const weft::WorkerStats& w : pool.stats().workers)
      EXPECT_TRUE(w.cpu == -1 || allowed.contains(w.cpu)) << "worker " << w.index << " on " << w.cpu;
  }
  weft::PoolOptions o = workers(2);
  o.placement = weft::Placement::compact;
  weft::ThreadPool pool(o);
  const weft::PoolStats s = pool.stats();
  for (std::size_t i = 0; i < s.workers.size(); ++i) EXPECT_EQ(s.workers[i].cpu, pool.cpus().at(i));
}

TEST(PoolStats, ParksAndWakeUpsPairUp) {
  weft::test::Watchdog dog("parks and wake-ups");
  weft::ThreadPool pool(workers(2, 0ns));  // no spin: idle workers park at once
  poll_until([&] { return pool.stats().total.parks >= 2; });
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 10; ++i) pool.post([] {});
    pool.wait_idle();
  }
  pool.shutdown();  // wakes every sleeper for the last time
  const weft::PoolStats s = pool.stats();
  EXPECT_GE(s.total.parks, 2U);
  for (const weft::WorkerStats& w : s.workers) {
    EXPECT_EQ(w.parks, w.wakeups_received) << "worker " << w.index;
    EXPECT_GT(w.busy.count(), 0) << "worker " << w.index;
  }
  EXPECT_GT(s.total.idle.count(), 0);
  // Workers woke some of those wake-ups; submitters and shutdown() the rest.
  EXPECT_LE(s.total.wakeups_sent, s.total.wakeups_received);
  EXPECT_EQ(s.total.tasks_run, 200U);
}

TEST(PoolStats, ASearchingWorkerThatFindsATaskCountsASpin) {
  weft::test::Watchdog dog("spins that found work");
  // Searching for a second at a time (a worker spinning does not look at
  // shutdown, so not longer): a post right after it started searching is
  // found by the spin, unless this thread was descheduled for that second;
  // then the next try.
  weft::ThreadPool pool(workers(1, std::chrono::duration_cast<std::chrono::nanoseconds>(1s)));
  weft::WorkerStats w;
  for (int attempt = 0; attempt < 10 && w.spins_found_work == 0; ++attempt) {
    poll_until([&] { return pool.idle_worker_count() == 1; });
    pool.post([] {});
    pool.wait_idle();
    w = pool.stats().workers.at(0);
  }
  EXPECT_GE(w.spins_found_work, 1U);
  EXPECT_GE(w.failed_steal_rounds, 1U);  // the spin polled before the post
}

// Who searches and who sleeps (docs/design/pool.md, "Sleep and wake"): at
// most half the workers search at once, and an outside submission that
// finds nobody searching still wakes a sleeper while the awake workers stay
// busy (the submitter's grace before the wake-up ends).
int parked_workers(const weft::ThreadPool& pool) {
  const weft::PoolStats s = pool.stats();
  return static_cast<int>(std::count_if(s.workers.begin(), s.workers.end(),
                                        [](const weft::WorkerStats& w) { return w.parks > w.wakeups_received; }));
}

TEST(SearchBound, HalfTheWorkersSleepWhileTheOthersSearch) {
  weft::test::Watchdog dog("half the workers parked");
  // A search budget far longer than the test: a worker that parks did not
  // search (a searcher does not look at shutdown, so the pool's destructor
  // waits out the budget; 2 s keeps that bearable).
  weft::ThreadPool pool(workers(4, 2s));
  poll_until([&] { return parked_workers(pool) >= 2; });
  const weft::PoolStats s = pool.stats();
  int searched = 0;
  for (const weft::WorkerStats& w : s.workers) searched += w.parks == 0 ? 1 : 0;
  EXPECT_EQ(searched, 2) << "at start every worker searches or sleeps: two of four may search";
}

TEST(SearchBound, AnOutsidePostWakesASleeperWhileTheAwakeWorkerIsBusy) {
  weft::test::Watchdog dog("a post behind a busy worker");
  weft::ThreadPool pool(workers(2, 0ns));  // no spin: idle workers park at once
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  pool.post([&] {
    started.store(true);
    while (!release.load()) std::this_thread::sleep_for(100us);
  });
  poll_until([&] { return started.load() && parked_workers(pool) == 1; });
  // Nobody searches, one worker sleeps, one runs a task that ends only
  // after ours has run: ours must reach the sleeper.
  const weft::PoolStats before = pool.stats();
  std::atomic<bool> ran{false};
  pool.post([&] { ran.store(true); });
  poll_until([&] { return ran.load(); });
  release.store(true);
  pool.wait_idle();
  EXPECT_TRUE(ran.load());
  const weft::PoolStats after = pool.stats();
  EXPECT_GE(after.total.wakeups_received, 1U);
  // Queued as ever, not handed over (a worker is awake: the submitter's
  // grace lets it come first), and taken from the submitter's deque.
  EXPECT_EQ(after.total.handed_posts, before.total.handed_posts);
  EXPECT_EQ(after.total.steals_from_submitters - before.total.steals_from_submitters, 1U);
}

// A post into a pool whose workers all sleep goes straight to the worker
// it wakes (IdleWorkers::hand_off()): not through the injection deque.
TEST(HandOff, APostIntoAnAllAsleepPoolIsHandedToTheWorkerItWakes) {
  weft::test::Watchdog dog("a post into a sleeping pool");
  weft::ThreadPool pool(workers(2, 0ns));  // no spin: idle workers park at once
  for (int round = 0; round < 20; ++round) {
    poll_until([&] { return parked_workers(pool) == 2; });
    const weft::PoolStats before = pool.stats();
    std::atomic<bool> ran{false};
    pool.post([&] { ran.store(true); });
    pool.wait_idle();
    EXPECT_TRUE(ran.load());
    const weft::PoolStats after = pool.stats();
    EXPECT_EQ(after.total.handed_posts - before.total.handed_posts, 1U) << "round " << round;
    EXPECT_EQ(after.total.steals_from_submitters, before.total.steals_from_submitters) << "round " << round;
    EXPECT_EQ(after.total.tasks_run - before.total.tasks_run, 1U) << "round " << round;
  }
}


}  // namespace
