// Traces read while they are written: the ring's copy never returns a torn
// or overwritten event, and a pool's trace() taken while its workers steal,
// park and wake is always a clean suffix of what each worker recorded.
#include "weft/detail/exec/trace_ring.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/exec/trace.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "fork_join.hpp"
#include "stress.hpp"
#include "watchdog.hpp"

namespace {

using weft::TraceKind;

// Event k carries k in every field, so a copy that mixes two writes of a
// slot, or keeps one the owner overwrote meanwhile, shows.
TEST(TraceStress, ACopyIsAlwaysARunOfWholeConsecutiveEvents) {
  weft::test::Watchdog dog("trace ring copy");
  const std::int64_t events = weft::test::stress_count(4'000'000, 100'000);
  weft::detail::TraceRing ring(64);  // small: the owner laps the reader all the time
  std::atomic<bool> done{false};
  std::thread owner([&] {
    for (std::int64_t k = 0; k < events; ++k)
      ring.record(k % 2 == 0 ? TraceKind::task_start : TraceKind::task_end, k, static_cast<std::int32_t>(k));
    done.store(true, std::memory_order_release);
  });
  std::uint64_t last_end = 0;
  std::uint64_t copies = 0;
  for (bool last = false; !last;) {
    last = done.load(std::memory_order_acquire);  // one more copy after the owner stopped
    std::uint64_t dropped = 0;
    const std::vector<weft::TraceEvent> ev = ring.snapshot(dropped);
    ++copies;
    ASSERT_LE(ev.size(), ring.capacity());
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const auto k = static_cast<std::int64_t>(dropped + i);
      ASSERT_EQ(ev[i].ns, k) << "copy " << copies << " event " << i;
      ASSERT_EQ(ev[i].peer, static_cast<std::int32_t>(k));
      ASSERT_EQ(ev[i].kind, k % 2 == 0 ? TraceKind::task_start : TraceKind::task_end);
    }
    ASSERT_GE(dropped + ev.size(), last_end) << "a later copy ended before an earlier one";
    last_end = dropped + ev.size();
  }
  owner.join();
  EXPECT_EQ(last_end, static_cast<std::uint64_t>(events));
}

// 8 workers (more than the CPUs: they steal, park between rounds and wake)
// run fork-join trees with rings small enough to wrap, while another
// thread takes traces.
TEST(TraceStress, PoolTraceReadWhileWorkersStealAndPark) {
  weft::test::Watchdog dog("trace while running");
  const std::int64_t rounds = weft::test::stress_count(400, 40);
  weft::PoolOptions o;
  o.workers = 8;
  o.trace_capacity = 256;
  weft::ThreadPool pool(o);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> traces{0};
  std::thread reader([&] {
    std::vector<std::uint64_t> seen(8, 0);  // events each worker had recorded at the last copy
    while (!done.load(std::memory_order_relaxed)) {
      const weft::PoolTrace t = pool.trace();
      ASSERT_EQ(t.workers.size(), 8U);
      for (const weft::WorkerTrace& w : t.workers) {
        const auto i = static_cast<std::size_t>(w.index);
        ASSERT_LE(w.events.size(), t.capacity);
        ASSERT_GE(w.dropped + w.events.size(), seen[i]) << "worker " << i << " went back in time";
        seen[i] = w.dropped + w.events.size();
        for (std::size_t k = 1; k < w.events.size(); ++k)
          ASSERT_LE(w.events[k - 1].ns, w.events[k].ns) << "worker " << i << " event " << k;
        for (const weft::TraceEvent& e : w.events) {
          if (e.kind == TraceKind::steal) {
            ASSERT_LT(e.peer, 8);
          }
        }
      }
      traces.fetch_add(1, std::memory_order_relaxed);
    }
  });
  for (std::int64_t r = 0; r < rounds; ++r) {
    long result = 0;
    pool.post([&] { result = weft::test::fib(pool, 14); });  // on a worker: its children are stolen
    pool.wait_idle();
    ASSERT_EQ(result, 377);
  }
  done.store(true, std::memory_order_relaxed);
  reader.join();
  pool.shutdown();
  EXPECT_GT(traces.load(), 0U);
  std::uint64_t recorded = 0;
  for (const weft::WorkerTrace& w : pool.trace().workers) recorded += w.dropped + w.events.size();
  EXPECT_GE(recorded, 2 * pool.stats().total.tasks_run) << "a start and an end per task at least";
}

}  // namespace
