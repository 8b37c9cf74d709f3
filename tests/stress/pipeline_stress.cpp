// parallel_pipeline under load, sized by weft::test::stress_count and run
// under ThreadSanitizer: several threads run pipelines with every mix of
// stage modes and small token counts on one small pool at once, some nested
// inside tasks, some throwing. Each checks that every item went through
// every stage exactly once and that in-order stages saw sequence order;
// the serial stages' plain counters are data races TSan reports if a gate
// ever let two calls in at once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "stress.hpp"
#include "threads.hpp"
#include "watchdog.hpp"
#include "weft/exec/pipeline.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using weft::FlowControl;
using weft::StageMode;

constexpr StageMode kModes[] = {StageMode::serial_in_order, StageMode::serial_out_of_order, StageMode::parallel};

// One pipeline of n items: source, two middle stages of the given modes, an
// in-order sink. With `throw_at` >= 0 the second middle stage throws on
// that item and the call must rethrow it.
void one_pipeline(weft::ThreadPool& pool, std::mt19937_64& rng, long n, long throw_at) {
  const std::size_t tokens = 1 + static_cast<std::size_t>(rng() % 6);
  const StageMode m1 = kModes[rng() % 3];
  const StageMode m2 = kModes[rng() % 3];
  long next = 0;
  std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
  // Per middle stage, touched only by its calls when it is serial (plain
  // on purpose: TSan catches two calls at once).
  struct Seen {
    long calls = 0;
    long last = -1;
  };
  Seen seen1;
  Seen seen2;
  long sunk = 0;
  auto middle = [](StageMode m, Seen& seen) {
    return [m, &seen](long x) {
      if (m == StageMode::parallel) return x;
      ++seen.calls;
      if (m == StageMode::serial_in_order) {
        EXPECT_GT(x, seen.last);
        seen.last = x;
      }
      return x;
    };
  };
  auto run = [&] {
    weft::parallel_pipeline(
        pool, tokens,
        weft::stage<void, long>(StageMode::serial_in_order,
                                [&](FlowControl& fc) -> long {
                                  if (next == n) fc.stop();
                                  return next++;
                                }),
        weft::stage<long, long>(m1, middle(m1, seen1)),
        weft::stage<long, long>(m2,
                                [&, inner = middle(m2, seen2)](long x) {
                                  hits[static_cast<std::size_t>(x)].fetch_add(1, std::memory_order_relaxed);  // relaxed: a count
                                  if (x == throw_at) throw std::runtime_error("stress");
                                  return inner(x);
                                }),
        weft::stage<long, void>(StageMode::serial_in_order, [&](long x) {
          ASSERT_EQ(x, sunk);
          ++sunk;
        }));
  };
  if (throw_at >= 0 && throw_at < n) {
    EXPECT_THROW(run(), std::runtime_error);
    for (auto& h : hits) ASSERT_LE(h.load(), 1);
  } else {
    run();
    ASSERT_EQ(sunk, n);
    if (m1 != StageMode::parallel) {
      ASSERT_EQ(seen1.calls, n);
    }
    if (m2 != StageMode::parallel) {
      ASSERT_EQ(seen2.calls, n);
    }
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(PipelineStress, ConcurrentPipelinesOnOnePool) {
  constexpr int kCallers = 3;
  const std::int64_t rounds = weft::test::stress_count(2000, 40);
  weft::test::Watchdog dog("pipelines from 3 threads, nested and throwing");
  weft::PoolOptions o;
  o.workers = 3;
  weft::ThreadPool pool(o);
  weft::test::on_threads(kCallers, [&](int t) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(t) + 11);
    for (std::int64_t r = 0; r < rounds; ++r) {
      const long n = static_cast<long>(rng() % 2000);
      const long throw_at = r % 5 == 4 ? static_cast<long>(rng() % static_cast<std::uint64_t>(n + 1)) : -1;
      if (r % 3 == 0)  // nested: the pipeline's caller is a task
        pool.submit([&] { one_pipeline(pool, rng, n, throw_at); }).get();
      else
        one_pipeline(pool, rng, n, throw_at);
    }
  });
}

TEST(PipelineStress, OneWorkerNested) {
  weft::test::Watchdog dog("pipelines on one worker");
  weft::PoolOptions o;
  o.workers = 1;
  weft::ThreadPool pool(o);
  std::mt19937_64 rng(5);
  const std::int64_t rounds = weft::test::stress_count(1000, 40);
  for (std::int64_t r = 0; r < rounds; ++r) pool.submit([&] { one_pipeline(pool, rng, 500, -1); }).get();
}

}  // namespace
