// Who searches and who sleeps (docs/design/pool.md, "Sleep and wake"): at
// most half the workers search at once, and an outside submission that
// finds nobody searching still wakes a sleeper when the awake workers stay
// busy (the submitter's grace before the wake-up ends).
#include "weft/exec/thread_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "watchdog.hpp"

using namespace std::chrono_literals;

namespace {

weft::PoolOptions spinning_workers(int n, std::chrono::nanoseconds spin) {
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
  weft::ThreadPool pool(spinning_workers(4, 2s));
  poll_until([&] { return parked_workers(pool) >= 2; });
  const weft::PoolStats s = pool.stats();
  int searched = 0;
  for (const weft::WorkerStats& w : s.workers) searched += w.parks == 0 ? 1 : 0;
  EXPECT_EQ(searched, 2) << "at start every worker searches or sleeps: two of four may search";
}

TEST(SearchBound, AnOutsidePostWakesASleeperWhileTheAwakeWorkerIsBusy) {
  weft::test::Watchdog dog("a post behind a busy worker");
  weft::ThreadPool pool(spinning_workers(2, 0ns));  // no spin: idle workers park at once
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  pool.post([&] {
    started.store(true);
    while (!release.load()) std::this_thread::sleep_for(100us);
  });
  poll_until([&] { return started.load() && parked_workers(pool) == 1; });
  // Nobody searches, one worker sleeps, one runs a task that ends only
  // after ours has run: ours must reach the sleeper.
  std::atomic<bool> ran{false};
  pool.post([&] { ran.store(true); });
  poll_until([&] { return ran.load(); });
  release.store(true);
  pool.wait_idle();
  EXPECT_TRUE(ran.load());
  EXPECT_GE(pool.stats().total.wakeups_received, 1U);
}

}  // namespace
