// Traces: the ring (wrap, drop count, packing), what a pool records and in
// what order, the Chrome JSON, and that a pool not asked to trace records nothing.
#include "weft/exec/trace.hpp"
#include "weft/detail/exec/trace_ring.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"
#include "watchdog.hpp"

using namespace std::chrono_literals;

namespace {

using weft::TraceKind;

weft::PoolOptions traced(int workers, std::size_t capacity, std::chrono::nanoseconds spin = weft::WaitOptions::default_spin()) {
  weft::PoolOptions o;
  o.workers = workers;
  o.trace_capacity = capacity;
  o.wait.spin = spin;
  o.wait.adaptive = false;
  return o;
}

std::size_t count(const weft::WorkerTrace& w, TraceKind k) {
  std::size_t n = 0;
  for (const weft::TraceEvent& e : w.events) n += e.kind == k;
  return n;
}

// Starts and ends nest like brackets: never an end without an open start.
void expect_balanced(const weft::WorkerTrace& w) {
  int open = 0;
  for (const weft::TraceEvent& e : w.events) {
    if (e.kind == TraceKind::task_start) ++open;
    if (e.kind == TraceKind::task_end) {
      ASSERT_GT(open, 0) << "worker " << w.index << ": a task ended that had not started";
      --open;
    }
  }
  EXPECT_EQ(open, 0) << "worker " << w.index << ": a task started that did not end";
}

TEST(TraceRing, KeepsEverythingUntilFull) {
  weft::detail::TraceRing ring(8);
  for (int i = 0; i < 5; ++i) ring.record(TraceKind::steal, 100 + i, i, weft::StealRing::l3);
  std::uint64_t dropped = 99;
  const std::vector<weft::TraceEvent> ev = ring.snapshot(dropped);
  EXPECT_EQ(dropped, 0U);
  ASSERT_EQ(ev.size(), 5U);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(ev[static_cast<std::size_t>(i)].ns, 100 + i);
    EXPECT_EQ(ev[static_cast<std::size_t>(i)].kind, TraceKind::steal);
    EXPECT_EQ(ev[static_cast<std::size_t>(i)].peer, i);
    EXPECT_EQ(ev[static_cast<std::size_t>(i)].ring, weft::StealRing::l3);
  }
}

TEST(TraceRing, WrapsOverTheOldestAndCountsThem) {
  weft::detail::TraceRing ring(5);  // rounded up to 8
  ASSERT_EQ(ring.capacity(), 8U);
  for (int i = 0; i < 20; ++i) ring.record(TraceKind::park, i);
  std::uint64_t dropped = 0;
  const std::vector<weft::TraceEvent> ev = ring.snapshot(dropped);
  EXPECT_EQ(dropped, 12U);
  ASSERT_EQ(ev.size(), 8U);
  for (std::size_t i = 0; i < ev.size(); ++i) EXPECT_EQ(ev[i].ns, static_cast<std::int64_t>(12 + i));
}

TEST(TraceRing, KeepsASubmittersPeerOfMinusOne) {
  weft::detail::TraceRing ring(2);
  ring.record(TraceKind::steal, 1);
  std::uint64_t dropped = 0;
  EXPECT_EQ(ring.snapshot(dropped).at(0).peer, -1);
}

TEST(PoolTrace, OffMeansNoEvents) {
  weft::test::Watchdog dog("trace off");
  weft::ThreadPool pool(traced(2, 0));
  for (int i = 0; i < 100; ++i) pool.post([] {});
  pool.wait_idle();
  const weft::PoolTrace t = pool.trace();
  EXPECT_EQ(t.capacity, 0U);
  EXPECT_TRUE(t.workers.empty());
  EXPECT_GE(t.pool, 1U);
}

TEST(PoolTrace, ACapacityBeyondTheLimitIsRefusedNamingIt) {
  try {
    weft::ThreadPool pool(traced(1, weft::kMaxTraceCapacity + 1));
    FAIL() << "built a pool with a trace ring beyond the limit";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(weft::kMaxTraceCapacity + 1)), std::string::npos) << e.what();
  }
}

TEST(PoolTrace, EveryTaskStartsAndEndsOnOneWorker) {
  weft::test::Watchdog dog("task pairs");
  weft::ThreadPool pool(traced(2, 1 << 12));
  constexpr int kTasks = 200;
  for (int i = 0; i < kTasks; ++i) pool.post([] {});
  pool.wait_idle();
  pool.shutdown();  // nothing records after this
  const weft::PoolTrace t = pool.trace();
  ASSERT_EQ(t.workers.size(), 2U);
  EXPECT_EQ(t.capacity, 1U << 12);
  std::size_t starts = 0;
  std::size_t from_submitter = 0;
  std::size_t from_worker = 0;
  for (const weft::WorkerTrace& w : t.workers) {
    EXPECT_EQ(w.dropped, 0U);
    expect_balanced(w);
    starts += count(w, TraceKind::task_start);
    for (std::size_t i = 1; i < w.events.size(); ++i)
      EXPECT_LE(w.events[i - 1].ns, w.events[i].ns) << "worker " << w.index << " event " << i;
    for (const weft::TraceEvent& e : w.events) {
      if (e.kind != TraceKind::steal) continue;
      if (e.peer == -1) {
        ++from_submitter;
      } else {
        EXPECT_EQ(e.peer, 1 - w.index) << "a steal names the other worker";
        ++from_worker;
      }
    }
  }
  EXPECT_EQ(starts, static_cast<std::size_t>(kTasks));
  // Every task came from this thread: each was taken from its deque once
  // (a steal event per task, alone or in a batch) or handed by its post to
  // the worker it woke (also a steal event from -1); a task a worker moved
  // to its own deque in a batch may then be stolen by the other worker.
  EXPECT_EQ(from_submitter, static_cast<std::size_t>(kTasks));
  EXPECT_LE(from_worker, static_cast<std::size_t>(kTasks));
}

TEST(PoolTrace, NestedTasksNestInTheTrace) {
  weft::test::Watchdog dog("nested tasks");
  weft::ThreadPool pool(traced(1, 1 << 10));
  pool.post([&] {
    weft::TaskGroup g(pool);
    for (int i = 0; i < 10; ++i) g.run([] {});
    g.wait();  // runs the children inside this task
  });
  pool.wait_idle();
  pool.shutdown();
  const weft::WorkerTrace w = pool.trace().workers.at(0);
  expect_balanced(w);
  EXPECT_EQ(count(w, TraceKind::task_start), 11U);
  int depth = 0;
  int deepest = 0;
  for (const weft::TraceEvent& e : w.events) {
    depth += e.kind == TraceKind::task_start ? 1 : e.kind == TraceKind::task_end ? -1 : 0;
    deepest = std::max(deepest, depth);
  }
  EXPECT_EQ(deepest, 2);
}

TEST(PoolTrace, StealsNameTheVictimAndParksPairWithWakes) {
  weft::test::Watchdog dog("steal victims");
  weft::ThreadPool pool(traced(2, 1 << 12, 0ns));
  constexpr int kChildren = 50;
  std::atomic<int> ran{0};
  std::atomic<int> parent{-1};
  pool.post([&] {
    parent = weft::ThreadPool::current_worker_index();
    for (int i = 0; i < kChildren; ++i) pool.post([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    // Busy without helping: only the other worker can run the children.
    while (ran.load(std::memory_order_relaxed) < kChildren) std::this_thread::yield();
  });
  pool.wait_idle();
  pool.shutdown();  // every sleeper wakes for the last time
  const weft::PoolTrace t = pool.trace();
  const int thief = 1 - parent.load();
  std::size_t from_parent = 0;
  for (const weft::TraceEvent& e : t.workers.at(static_cast<std::size_t>(thief)).events)
    from_parent += e.kind == TraceKind::steal && e.peer == parent.load();
  EXPECT_EQ(from_parent, static_cast<std::size_t>(kChildren));
  for (const weft::WorkerTrace& w : t.workers) {
    EXPECT_EQ(count(w, TraceKind::park), count(w, TraceKind::wake)) << "worker " << w.index;
    TraceKind last = TraceKind::wake;
    for (const weft::TraceEvent& e : w.events) {
      if (e.kind != TraceKind::park && e.kind != TraceKind::wake) continue;
      EXPECT_NE(e.kind, last) << "worker " << w.index << ": two parks or two wakes in a row";
      last = e.kind;
    }
  }
}

TEST(PoolTrace, ALongRunKeepsTheLastEventsOfEachWorker) {
  weft::test::Watchdog dog("ring wrap in a pool");
  weft::ThreadPool pool(traced(1, 16));
  for (int i = 0; i < 100; ++i) pool.post([] {});
  pool.wait_idle();
  pool.shutdown();
  const weft::WorkerTrace w = pool.trace().workers.at(0);
  EXPECT_EQ(w.events.size(), 16U);
  EXPECT_GE(w.dropped, 200U);  // a start, a steal and an end per task at least
}

TEST(ChromeTrace, HasAThreadPerWorkerAndACompleteEventPerTask) {
  weft::test::Watchdog dog("chrome json");
  weft::ThreadPool pool(traced(2, 1 << 10));
  for (int i = 0; i < 30; ++i) pool.post([] {});
  pool.wait_idle();
  pool.shutdown();
  std::ostringstream out;
  weft::write_chrome_trace(out, {pool.trace()});
  const std::string json = out.str();
  auto occurrences = [&json](const std::string& s) {
    std::size_t n = 0;
    for (std::size_t at = json.find(s); at != std::string::npos; at = json.find(s, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(json.rfind(R"({"displayTimeUnit":"ns")", 0), 0U);
  EXPECT_EQ(occurrences(R"("name":"thread_name")"), 2U);
  EXPECT_EQ(occurrences(R"("name":"worker 0")"), 1U);
  EXPECT_EQ(occurrences(R"("name":"worker 1")"), 1U);
  EXPECT_EQ(occurrences(R"({"ph":"X","name":"task")"), 30U);
  EXPECT_EQ(occurrences(R"("from":"a submitter")"), 30U);
  EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
}

TEST(ChromeTrace, AnUnwritablePathThrowsNamingIt) {
  weft::test::TempDir dir;
  const std::string path = dir.path() / "missing" / "trace.json";
  try {
    weft::write_chrome_trace(path, {});
    FAIL() << "wrote into a directory that does not exist";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
