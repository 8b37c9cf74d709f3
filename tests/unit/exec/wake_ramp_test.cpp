// The wake ramp: k tasks arriving while k workers sleep bring k workers up
// at once, not one after another (docs/design/pool.md, "Wake ramp").
#include "weft/exec/thread_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "watchdog.hpp"
#include "weft/detail/sync/futex.hpp"

using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kWorkers = 32;
constexpr int kRounds = 7;

// Every worker is parked: its parks outnumber its wake-ups (park() counts
// the park before it sleeps and the wake-up after).
bool all_parked(const weft::ThreadPool& pool) {
  const weft::PoolStats s = pool.stats();
  return std::all_of(s.workers.begin(), s.workers.end(),
                     [](const weft::WorkerStats& w) { return w.parks > w.wakeups_received; });
}

struct Ramp {
  std::chrono::nanoseconds all_started;
  std::uint64_t most_woken_by_one;  // the most wake-ups one worker sent in the round
};

// Posts kWorkers tasks to a pool whose workers all sleep; each task waits
// (straight on a futex: no spinning or yielding, which on 2 CPUs would take
// time from the workers still waking) until every task has started.
Ramp ramp_once(weft::ThreadPool& pool) {
  while (!all_parked(pool)) std::this_thread::sleep_for(1ms);  // the watchdog bounds it
  const weft::PoolStats before = pool.stats();
  std::atomic<std::uint32_t> started{0};
  std::atomic<std::int64_t> last_start{0};
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint32_t i = 0; i < kWorkers; ++i) {
    pool.post([&] {
      if (started.fetch_add(1) + 1 == kWorkers) {
        last_start.store((std::chrono::steady_clock::now() - t0).count());
        weft::detail::futex_wake(started, weft::detail::kWakeAll);
        return;
      }
      for (std::uint32_t n; (n = started.load()) != kWorkers;) weft::detail::futex_wait(started, n);
    });
  }
  pool.wait_idle();
  const weft::PoolStats after = pool.stats();
  std::uint64_t most = 0;
  for (std::size_t w = 0; w < after.workers.size(); ++w)
    most = std::max(most, after.workers[w].wakeups_sent - before.workers[w].wakeups_sent);
  return {std::chrono::nanoseconds(last_start.load()), most};
}

// Time alone cannot tell a ramp from a chain here: on 2 CPUs both are
// bounded by the 32 context switches the tasks need, and a timed assertion
// would be a benchmark. The shape does: in a chain (the submitter wakes one
// worker, which wakes the next as it finds a task) no worker ever wakes two.
// The times are printed for a reader; `weft idle` and `weft scale` measure.
TEST(WakeRamp, ParkedWorkersAllStartTogether) {
  weft::test::Watchdog dog("wake ramp");
  weft::PoolOptions o;
  o.workers = static_cast<int>(kWorkers);
  o.wait.spin = 0ns;  // park at once: every round starts from a sleeping pool
  o.wait.adaptive = false;
  weft::ThreadPool pool(o);
  std::vector<std::chrono::nanoseconds> times;
  std::uint64_t most_woken_by_one = 0;
  for (int r = 0; r < kRounds; ++r) {
    const Ramp ramp = ramp_once(pool);
    times.push_back(ramp.all_started);
    most_woken_by_one = std::max(most_woken_by_one, ramp.most_woken_by_one);
  }
  std::sort(times.begin(), times.end());
  const auto median = times[times.size() / 2];
  std::printf("wake ramp of %u parked workers: median %.1f us (min %.1f, max %.1f)\n", kWorkers,
              static_cast<double>(median.count()) / 1e3, static_cast<double>(times.front().count()) / 1e3,
              static_cast<double>(times.back().count()) / 1e3);
  for (auto t : times) EXPECT_GT(t.count(), 0);
  // The shape: in a chain each worker wakes at most the next one; in the
  // ramp a worker that finds 31 tasks queued wakes several at once.
  EXPECT_GE(most_woken_by_one, 2U);
}

}  // namespace
