// weft::parallel_pipeline: stage modes, the in-flight bound, sizes, pools
// of 1..3 workers, nesting, exceptions from every stage kind.
#include "weft/exec/pipeline.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "algo_support.hpp"
#include "throws.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using weft::FlowControl;
using weft::StageMode;
using weft::test::workers;

// Raises `peak` to `now` if it is higher (relaxed: only the values matter).
void raise_to(std::atomic<long>& peak, long now) {
  long p = peak.load(std::memory_order_relaxed);
  while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
  }
}

// A short, item-dependent busy delay, so items overtake each other in a
// parallel stage.
void jitter(long i) {
  const auto us = std::chrono::microseconds((i * 7919) % 23);
  const auto until = std::chrono::steady_clock::now() + us;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// The three-stage pipeline every mode test uses: source 0..n-1, a parallel
// (or given-mode) middle stage, a serial_in_order sink that records what it
// saw. Returns the sink's sequence.
std::vector<long> run_three(weft::ThreadPool& pool, long n, std::size_t in_flight, StageMode middle) {
  long next = 0;
  std::vector<long> seen;
  weft::parallel_pipeline(pool, in_flight,
                          weft::stage<void, long>(StageMode::serial_in_order,
                                                  [&](FlowControl& fc) -> long {
                                                    if (next == n) fc.stop();
                                                    return next++;
                                                  }),
                          weft::stage<long, long>(middle,
                                                  [](long x) {
                                                    jitter(x);
                                                    return x * 2;
                                                  }),
                          weft::stage<long, void>(StageMode::serial_in_order, [&](long y) { seen.push_back(y); }));
  return seen;
}

std::vector<long> doubled(long n) {
  std::vector<long> v(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = 2 * i;
  return v;
}

TEST(Pipeline, InOrderStageSeesItemsInOrder) {
  for (int w = 1; w <= 3; ++w) {
    weft::ThreadPool pool(workers(w));
    for (long n : {0L, 1L, 2L, 1000L}) {
      EXPECT_EQ(run_three(pool, n, 8, StageMode::parallel), doubled(n)) << w << " workers, " << n << " items";
    }
  }
}

TEST(Pipeline, HundredThousandItems) {
  weft::ThreadPool pool(workers(2));
  long next = 0;
  std::vector<long> seen;
  weft::parallel_pipeline(pool, 16,
                          weft::stage<void, long>(StageMode::serial_in_order,
                                                  [&](FlowControl& fc) -> long {
                                                    if (next == 100'000) fc.stop();
                                                    return next++;
                                                  }),
                          weft::stage<long, long>(StageMode::parallel, [](long x) { return x + 1; }),
                          weft::stage<long, void>(StageMode::serial_in_order, [&](long y) { seen.push_back(y - 1); }));
  ASSERT_EQ(seen.size(), 100'000u);
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], static_cast<long>(i));
}

TEST(Pipeline, OneTokenOneWorkerStillFinishes) {
  weft::ThreadPool pool(workers(1));
  EXPECT_EQ(run_three(pool, 500, 1, StageMode::parallel), doubled(500));
  EXPECT_EQ(run_three(pool, 500, 1, StageMode::serial_out_of_order), doubled(500));
  EXPECT_EQ(run_three(pool, 500, 1, StageMode::serial_in_order), doubled(500));
}

TEST(Pipeline, OutOfOrderStageNeverRunsTwoAtOnce) {
  weft::ThreadPool pool(workers(3));
  const long n = 3000;
  long next = 0;
  std::atomic<int> inside{0};
  std::atomic<long> peak{0};
  std::vector<char> got(static_cast<std::size_t>(n), 0);
  long unguarded = 0;  // a data race, and TSan would say so, if two ran at once
  weft::parallel_pipeline(
      pool, 12,
      weft::stage<void, long>(StageMode::serial_in_order,
                              [&](FlowControl& fc) -> long {
                                if (next == n) fc.stop();
                                return next++;
                              }),
      weft::stage<long, long>(StageMode::parallel,
                              [](long x) {
                                jitter(x);
                                return x;
                              }),
      weft::stage<long, void>(StageMode::serial_out_of_order, [&](long x) {
        raise_to(peak, inside.fetch_add(1, std::memory_order_relaxed) + 1);  // relaxed: a count
        ++unguarded;
        got[static_cast<std::size_t>(x)] += 1;
        jitter(x);
        inside.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a count
      }));
  EXPECT_EQ(peak.load(), 1);
  EXPECT_EQ(unguarded, n);
  for (long i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], 1) << "item " << i;
}

TEST(Pipeline, InFlightLimitHolds) {
  for (std::size_t limit : {std::size_t{1}, std::size_t{3}, std::size_t{7}}) {
    weft::ThreadPool pool(workers(3));
    long next = 0;
    std::atomic<long> alive{0};
    std::atomic<long> peak{0};
    weft::parallel_pipeline(
        pool, limit,
        weft::stage<void, long>(StageMode::serial_in_order,
                                [&](FlowControl& fc) -> long {
                                  if (next == 2000) {
                                    fc.stop();
                                    return -1;
                                  }
                                  raise_to(peak, alive.fetch_add(1, std::memory_order_relaxed) + 1);  // relaxed: a count
                                  return next++;
                                }),
        weft::stage<long, long>(StageMode::parallel,
                                [](long x) {
                                  jitter(x);
                                  return x;
                                }),
        weft::stage<long, long>(StageMode::serial_out_of_order, [](long x) { return x; }),
        weft::stage<long, void>(StageMode::parallel, [&](long) {
          alive.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a count
        }));
    EXPECT_LE(peak.load(), static_cast<long>(limit));
    EXPECT_GE(peak.load(), 1);
    EXPECT_EQ(alive.load(), 0);
  }
}

TEST(Pipeline, ZeroInFlightIsRejected) {
  weft::ThreadPool pool(workers(1));
  bool called = false;
  EXPECT_TRUE(weft::test::throws_containing<std::invalid_argument>(
      [&] {
        weft::parallel_pipeline(pool, 0, weft::stage<void, void>(StageMode::serial_in_order, [&](FlowControl& fc) {
                                  called = true;
                                  fc.stop();
                                }));
      },
      {"max_in_flight"}));
  EXPECT_FALSE(called);
}

TEST(Pipeline, SingleStageRunsUntilStopped) {
  weft::ThreadPool pool(workers(2));
  int calls = 0;
  weft::parallel_pipeline(pool, 4, weft::stage<void, void>(StageMode::parallel, [&](FlowControl& fc) {
                            if (++calls == 10) fc.stop();
                          }));
  EXPECT_EQ(calls, 10);
}

TEST(Pipeline, MoveOnlyItemsAndTypeChanges) {
  weft::ThreadPool pool(workers(2));
  int next = 0;
  std::string out;
  weft::parallel_pipeline(
      pool, 4,
      weft::stage<void, std::unique_ptr<int>>(StageMode::serial_in_order,
                                              [&](FlowControl& fc) {
                                                if (next == 5) fc.stop();
                                                return std::make_unique<int>(next++);
                                              }),
      weft::stage<std::unique_ptr<int>, std::string>(StageMode::parallel,
                                                     [](std::unique_ptr<int> p) { return std::to_string(*p); }),
      weft::stage<std::string, void>(StageMode::serial_in_order, [&](std::string s) { out += s; }));
  EXPECT_EQ(out, "01234");
}

TEST(Pipeline, NestedInsideAPoolTask) {
  for (int w = 1; w <= 2; ++w) {
    weft::ThreadPool pool(workers(w));
    std::vector<long> a;
    std::vector<long> b;
    weft::TaskGroup g(pool);
    g.run([&] { a = run_three(pool, 300, 4, StageMode::parallel); });
    g.run([&] { b = run_three(pool, 300, 2, StageMode::serial_out_of_order); });
    g.wait();
    EXPECT_EQ(a, doubled(300)) << w << " workers";
    EXPECT_EQ(b, doubled(300)) << w << " workers";
  }
}

TEST(Pipeline, DefaultPoolForm) {
  long next = 0;
  long sum = 0;
  weft::parallel_pipeline(8,
                          weft::stage<void, long>(StageMode::serial_in_order,
                                                  [&](FlowControl& fc) -> long {
                                                    if (next == 100) fc.stop();
                                                    return next++;
                                                  }),
                          weft::stage<long, void>(StageMode::serial_out_of_order, [&](long x) { sum += x; }));
  EXPECT_EQ(sum, 99 * 100 / 2);
}

// Throws from stage `where` (0 the source, 1 the middle, 2 the sink) on
// item 37; the pool must stay usable, no item may run a stage twice, and
// the sink must have seen a prefix of the items in order.
void throw_from(int where, StageMode middle) {
  weft::ThreadPool pool(workers(2));
  const long n = 1000;
  long next = 0;
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
  std::vector<long> seen;
  auto boom = [](int stage, long x, int at) {
    if (stage == at && x == 37) throw std::runtime_error("boom " + std::to_string(stage));
  };
  try {
    weft::parallel_pipeline(pool, 6,
                            weft::stage<void, long>(StageMode::serial_in_order,
                                                    [&](FlowControl& fc) -> long {
                                                      if (next == n) fc.stop();
                                                      boom(0, next, where);
                                                      return next++;
                                                    }),
                            weft::stage<long, long>(middle,
                                                    [&](long x) {
                                                      runs[static_cast<std::size_t>(x)].fetch_add(1);
                                                      jitter(x);
                                                      boom(1, x, where);
                                                      return x;
                                                    }),
                            weft::stage<long, void>(StageMode::serial_in_order, [&](long x) {
                              boom(2, x, where);
                              seen.push_back(x);
                            }));
    FAIL() << "no exception from stage " << where;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "boom " + std::to_string(where));
  }
  for (auto& r : runs) ASSERT_LE(r.load(), 1);
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], static_cast<long>(i));
  EXPECT_LE(seen.size(), 37u);
  std::atomic<int> after{0};
  pool.post([&] { after.fetch_add(1); });
  pool.wait_idle();
  EXPECT_EQ(after.load(), 1);
  EXPECT_EQ(run_three(pool, 50, 4, StageMode::parallel), doubled(50));
}

TEST(Pipeline, ExceptionFromTheFirstStage) { throw_from(0, StageMode::parallel); }
TEST(Pipeline, ExceptionFromAParallelStage) { throw_from(1, StageMode::parallel); }
TEST(Pipeline, ExceptionFromAnOutOfOrderStage) { throw_from(1, StageMode::serial_out_of_order); }
TEST(Pipeline, ExceptionFromAnInOrderStage) { throw_from(2, StageMode::parallel); }

TEST(Pipeline, ManyThrowersOneExceptionReachesTheCaller) {
  weft::ThreadPool pool(workers(3));
  long next = 0;
  EXPECT_THROW(weft::parallel_pipeline(pool, 8,
                                       weft::stage<void, long>(StageMode::serial_in_order,
                                                               [&](FlowControl& fc) -> long {
                                                                 if (next == 200) fc.stop();
                                                                 return next++;
                                                               }),
                                       weft::stage<long, void>(StageMode::parallel,
                                                               [](long x) {
                                                                 if (x % 3 == 0) throw std::runtime_error("each third");
                                                               })),
               std::runtime_error);
  EXPECT_EQ(run_three(pool, 20, 2, StageMode::parallel), doubled(20));
}

}  // namespace
