// The pool and its deque under load, sized by weft::test::stress_count and
// run under ThreadSanitizer in CI. More threads than CPUs on purpose.
// Counters in this file are relaxed: only their totals are read, after the
// threads that bump them are joined or waited for (which synchronizes).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <numeric>
#include <string>
#include <stdexcept>
#include <thread>
#include <vector>

#include "deque_race.hpp"
#include "fork_join.hpp"
#include "stress.hpp"
#include "threads.hpp"
#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

// Counts constructions and destructions of every copy, so a task object that
// is destroyed twice or never shows up.
struct Counted {
  static inline std::atomic<long> live{0};
  std::atomic<std::uint8_t>* hit;
  explicit Counted(std::atomic<std::uint8_t>* h) : hit(h) { live.fetch_add(1, std::memory_order_relaxed); }
  Counted(const Counted& o) : hit(o.hit) { live.fetch_add(1, std::memory_order_relaxed); }
  Counted(Counted&& o) noexcept : hit(o.hit) { live.fetch_add(1, std::memory_order_relaxed); }
  ~Counted() { live.fetch_sub(1, std::memory_order_relaxed); }
  void operator()() const { hit->fetch_add(1, std::memory_order_relaxed); }
};

TEST(PoolStress, EveryPostedTaskRunsExactlyOnce) {
  constexpr int kThreads = 8;
  const std::int64_t per = weft::test::stress_count(1'000'000) / kThreads;
  weft::test::Watchdog dog("1e6 posts from 8 threads");
  auto hits = std::make_unique<std::atomic<std::uint8_t>[]>(static_cast<std::size_t>(per * kThreads));
  {
    weft::PoolOptions o;
    o.workers = 4;
    weft::ThreadPool pool(o);
    weft::test::on_threads(kThreads, [&](int t) {
      for (std::int64_t i = 0; i < per; ++i) pool.post(Counted(&hits[static_cast<std::size_t>(t * per + i)]));
    });
    pool.wait_idle();
    for (std::int64_t i = 0; i < per * kThreads; ++i)
      ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << "task " << i;
  }
  EXPECT_EQ(Counted::live.load(), 0) << "task objects leaked or destroyed twice";
}

// Every worker parked (parks counted past wake-ups): the state a post
// hands its task over in (IdleWorkers::hand_off()).
bool all_parked(const weft::ThreadPool& pool) {
  const weft::PoolStats s = pool.stats();
  for (const weft::WorkerStats& w : s.workers)
    if (w.parks <= w.wakeups_received) return false;
  return true;
}

// Posts into a pool whose workers all sleep, from several threads at once:
// the first to find every worker asleep hands its task to the one it wakes,
// the others queue theirs, and a shutdown() races the last rounds' posts.
// Every post that returned has its task run exactly once; one that threw
// has not.
TEST(PoolStress, PostsIntoASleepingPoolAreHandedOrQueuedAndNoneIsLost) {
  constexpr int kThreads = 3;
  const std::int64_t rounds = weft::test::stress_count(2000, 200);
  weft::test::Watchdog dog("posts into a sleeping pool");
  std::uint64_t handed = 0;
  for (std::int64_t r = 0; r < rounds; ++r) {
    weft::PoolOptions o;
    o.workers = 1 + static_cast<int>(r % 3);
    o.wait.spin = std::chrono::nanoseconds(0);  // park at once
    o.wait.adaptive = false;
    std::atomic<long> ran{0};
    std::atomic<long> accepted{0};
    {
      weft::ThreadPool pool(o);
      while (!all_parked(pool)) std::this_thread::yield();  // the watchdog bounds it
      const bool race_shutdown = r % 4 == 3;
      std::thread stopper;
      if (race_shutdown) stopper = std::thread([&] { pool.shutdown(); });
      weft::test::on_threads(kThreads, [&](int) {
        for (int i = 0; i < 2; ++i) {
          try {
            pool.post([&] { ran.fetch_add(1, std::memory_order_relaxed); });
            accepted.fetch_add(1, std::memory_order_relaxed);
          } catch (const std::runtime_error&) {
            // shut down: this task is not run
          }
        }
      });
      if (stopper.joinable()) stopper.join();
      pool.wait_idle();
      handed += pool.stats().total.handed_posts;
    }
    ASSERT_EQ(ran.load(), accepted.load()) << "round " << r;
  }
  // The rounds without a shutdown each began with every worker asleep.
  EXPECT_GE(handed, static_cast<std::uint64_t>(rounds - (rounds + 1) / 4));
}

TEST(PoolStress, SubmitGetRoundTripsFromManyThreads) {
  const std::int64_t per = weft::test::stress_count(50'000);
  weft::test::Watchdog dog("submit+get from many threads");
  weft::PoolOptions o;
  o.workers = 3;
  weft::ThreadPool pool(o);
  std::atomic<std::int64_t> sum{0};
  weft::test::on_threads(4, [&](int t) {
    for (std::int64_t i = 0; i < per; ++i) {
      auto f = pool.submit([i] { return i; });
      sum.fetch_add((t % 2 ? weft::detail::get_remote(f) : f.get()), std::memory_order_relaxed);
    }
  });
  EXPECT_EQ(sum.load(), 4 * (per * (per - 1) / 2));
}

using weft::test::fib;

TEST(PoolStress, ForkJoinAcrossWorkerCounts) {
  weft::test::Watchdog dog("fork-join stress");
  const int n = weft::test::kSanitizerScale < 1.0 ? 18 : 24;
  const long expect = n == 18 ? 2584 : 46368;
  for (int w : {1, 2, 3, 8}) {
    weft::PoolOptions o;
    o.workers = w;
    weft::ThreadPool pool(o);
    auto f = pool.submit([&] { return fib(pool, n); });
    EXPECT_EQ(weft::detail::get_remote(f), expect) << w << " workers";
    std::atomic<long> s{0};
    weft::parallel_for(pool, 0L, 100'000L, [&](long i) { s.fetch_add(i, std::memory_order_relaxed); });
    EXPECT_EQ(s.load(), 99'999L * 100'000L / 2);
  }
}

TEST(PoolStress, ManyShortLivedPools) {
  weft::test::Watchdog dog("pool create/destroy churn");
  const std::int64_t rounds = weft::test::stress_count(200, 20);
  std::atomic<long> n{0};
  for (std::int64_t r = 0; r < rounds; ++r) {
    weft::PoolOptions o;
    o.workers = 1 + static_cast<int>(r % 4);
    weft::ThreadPool pool(o);
    for (int i = 0; i < 100; ++i) pool.post([&] { n.fetch_add(1, std::memory_order_relaxed); });
  }
  EXPECT_EQ(n.load(), rounds * 100);
}

// A worker's stop hook runs after everything the thread that destroys the
// pool did before: here a plain write after the pool went idle, which every
// stop hook reads. A worker that leaves on seeing the stop must read it with
// acquire (ThreadSanitizer reported this race when one read it relaxed).
TEST(PoolStress, StopHooksSeeWhatTheStoppingThreadWroteBefore) {
  weft::test::Watchdog dog("stop hooks after the stopper");
  const std::int64_t rounds = weft::test::stress_count(400, 100);
  for (std::int64_t r = 0; r < rounds; ++r) {
    const int workers = 1 + static_cast<int>(r % 4);
    std::int64_t written = -1;  // plain: ordered only by the pool's stop
    std::vector<std::int64_t> seen(static_cast<std::size_t>(workers), -2);
    {
      weft::PoolOptions o;
      o.workers = workers;
      o.on_worker_stop = [&](int i) { seen[static_cast<std::size_t>(i)] = written; };
      weft::ThreadPool pool(o);
      pool.post([] {});
      pool.wait_idle();  // the workers search or sleep: they leave from either path
      written = r;
    }
    for (int i = 0; i < workers; ++i)
      ASSERT_EQ(seen[static_cast<std::size_t>(i)], r) << "worker " << i << ", round " << r;
  }
}

// stats() read over and over while 8 workers (more than the CPUs: they
// steal, park and wake) run fork-join trees: counts never go down, and
// add up once the pool is idle.
// A running worker pushes a child and then waits for it without helping (a
// user's spin on a flag the child sets), so only another worker can run it,
// while the others keep going to sleep around it: the race a sleeper that
// defers its heavy fence leaves open for its window (announce_sleep(),
// tests/model/asym_fence.pml -DDEFER). A child never run hangs the test
// (the watchdog names it); each must run on another worker.
TEST(PoolStress, AChildOnlyAnotherWorkerCanRunIsRun) {
  weft::test::Watchdog dog("a child only another worker can run");
  const std::int64_t rounds = weft::test::stress_count(4000, 200);
  weft::ThreadPool pool(weft::PoolOptions{.workers = 4});
  std::atomic<long> on_other_worker{0};
  for (std::int64_t r = 0; r < rounds; ++r) {
    std::atomic<bool> parent_done{false};
    pool.post([&] {
      const int parent = weft::ThreadPool::current_worker_index();
      std::atomic<int> child_ran_on{-2};
      // release: pairs with the waiters' acquire below.
      pool.post([&] { child_ran_on.store(weft::ThreadPool::current_worker_index(), std::memory_order_release); });
      // acquire: the child's store, and everything it did, before ours.
      int ran_on = -2;
      while ((ran_on = child_ran_on.load(std::memory_order_acquire)) == -2) std::this_thread::yield();
      // relaxed: a count, read after wait_idle(), which orders it.
      if (ran_on != parent) on_other_worker.fetch_add(1, std::memory_order_relaxed);
      parent_done.store(true, std::memory_order_release);
    });
    // Back to back, so that the idle workers announce their sleep while
    // the parent runs; release/acquire: the parent's frame outlives its use.
    while (!parent_done.load(std::memory_order_acquire)) std::this_thread::yield();
  }
  pool.wait_idle();
  EXPECT_EQ(on_other_worker.load(), rounds);
}

// The finder's hand-off (IdleWorkers::found()): a worker pushes a child and
// waits for it without helping, while the searcher it may have counted on
// finds another task that also waits for the child. Only the two workers
// left can run the child; one of them is woken for it by the pusher, by
// the finder's ramp, or by its hand-off (tests/model/found_handoff.pml).
TEST(PoolStress, AChildIsRunWhileItsParentAndTheWorkerThatFoundAnotherTaskWait) {
  weft::test::Watchdog dog("a child while its parent and another finder wait");
  const std::int64_t rounds = weft::test::stress_count(4000, 200);
  weft::ThreadPool pool(weft::PoolOptions{.workers = 4});
  const std::uint64_t run_before = pool.stats().total.tasks_run;
  for (std::int64_t r = 0; r < rounds; ++r) {
    std::atomic<int> child_ran_on{-2};
    std::atomic<int> waiters_done{0};
    // acquire: the child's store, and everything it did, before ours.
    auto wait_child = [&] {
      while (child_ran_on.load(std::memory_order_acquire) == -2) std::this_thread::yield();
    };
    pool.post([&] {
      // release: pairs with wait_child()'s acquire.
      pool.post([&] { child_ran_on.store(weft::ThreadPool::current_worker_index(), std::memory_order_release); });
      wait_child();
      waiters_done.fetch_add(1, std::memory_order_acq_rel);  // acq_rel: the frame outlives both waiters
    });
    pool.post([&] {
      wait_child();
      waiters_done.fetch_add(1, std::memory_order_acq_rel);  // acq_rel: as above
    });
    while (waiters_done.load(std::memory_order_acquire) != 2) std::this_thread::yield();  // acquire: as above
  }
  // A stranded child is a hang (the watchdog fails the test); and each
  // round ran its three tasks once, none lost or run twice.
  pool.wait_idle();
  EXPECT_EQ(pool.stats().total.tasks_run - run_before, static_cast<std::uint64_t>(3 * rounds));
}

TEST(PoolStress, StatsReadWhileWorkersRun) {
  weft::test::Watchdog dog("stats while running");
  const std::int64_t rounds = weft::test::stress_count(2000, 100);
  weft::PoolOptions o;
  o.workers = 8;
  weft::ThreadPool pool(o);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    std::vector<std::uint64_t> last(8, 0);
    while (!done.load(std::memory_order_relaxed)) {
      const weft::PoolStats s = pool.stats();
      for (std::size_t i = 0; i < last.size(); ++i) {
        ASSERT_GE(s.workers[i].tasks_run, last[i]) << "worker " << i;
        last[i] = s.workers[i].tasks_run;
      }
    }
  });
  std::atomic<long> n{0};
  for (std::int64_t r = 0; r < rounds; ++r) {
    for (int i = 0; i < 8; ++i)
      pool.post([&] {
        for (int k = 0; k < 8; ++k) pool.post([&] { n.fetch_add(1, std::memory_order_relaxed); });
      });
    pool.wait_idle();
  }
  done.store(true, std::memory_order_relaxed);
  reader.join();
  const weft::PoolStats s = pool.stats();
  EXPECT_EQ(n.load(), rounds * 64);
  EXPECT_EQ(s.total.tasks_run, static_cast<std::uint64_t>(rounds * 72));
  // Each outside task is taken from its submitter's deque exactly once (in a
  // batch or alone), or handed to the worker its post woke from an
  // all-asleep pool; a task a worker moved to its own deque in a batch may
  // be stolen from there again, so only the worker steals are bounded by
  // the tasks run.
  EXPECT_EQ(s.total.steals_from_submitters + s.total.handed_posts, static_cast<std::uint64_t>(rounds * 8));
  EXPECT_LE(s.total.steals_from_workers, s.total.tasks_run);
}

// The deque alone: one owner pushing and popping, three thieves; every
// item is taken exactly once, whichever way the owner takes and the
// thieves steal (deque_race.hpp):
// - pop: pop() against steal();
// - batched: the injection deques' protocol, thieves taking batches
//   (steal_batch) and the owner popping with pop_batched(), both of its
//   paths: the uncontested take far from the top and the claim through
//   top_ near it;
// - claim_if: the owner takes back through claim_bottom_if(), whose test
//   reads the task, while every thief writes to each task it takes: under
//   ThreadSanitizer, a test that read a task before claiming it is a race.
// - take_n: forks of 2 to 9 tasks taken back a group at a time with
//   take_newest_n(), or one at a time where a thief reached the group.
class DequeStress : public ::testing::TestWithParam<weft::test::OwnerTakes> {};

TEST_P(DequeStress, EachItemIsTakenOnce) {
  const std::int64_t items = weft::test::stress_count(1'000'000);
  weft::test::Watchdog dog("deque owner vs thieves");
  const std::vector<int> taken = weft::test::deque_race(items, 8, 3, 3, GetParam());
  EXPECT_EQ(std::accumulate(taken.begin(), taken.end(), std::int64_t{0}), items);
  for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], 1) << i;
}

INSTANTIATE_TEST_SUITE_P(OwnerTakes, DequeStress,
                         ::testing::Values(weft::test::OwnerTakes::pop, weft::test::OwnerTakes::batched,
                                           weft::test::OwnerTakes::claim_if, weft::test::OwnerTakes::take_n),
                         [](const ::testing::TestParamInfo<weft::test::OwnerTakes>& mode) {
                           switch (mode.param) {
                             case weft::test::OwnerTakes::pop: return std::string("pop");
                             case weft::test::OwnerTakes::batched: return std::string("batched");
                             case weft::test::OwnerTakes::claim_if: return std::string("claim_if");
                             case weft::test::OwnerTakes::take_n: return std::string("take_n");
                           }
                           return std::string("unknown");
                         });

}  // namespace
