// One TaskGroup fed from every worker (run under ThreadSanitizer): its
// tasks counted in per-worker shards whose 0 <-> 1 transitions alone reach
// the root word (include/weft/exec/task_group.hpp). Tasks run() from tasks
// on every worker, nested two deep, plus run()s from an outside thread
// before wait(); with and without a cancel racing them (from a task, from
// another thread, or a stop). Every round checks the books: each task ran
// at most once (exactly once when nothing was cancelled), every callable
// built was destroyed, wait() saw every finished task's effects, and it
// threw cancelled exactly when a task was skipped. Sizes from stress_count().
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stop_token>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

// More workers than CPUs here, so that shards empty and refill while their
// owners are preempted mid-run() and mid-finish.
constexpr int kWorkers = 6;
constexpr int kSeeds = 2 * kWorkers;  // each run() by the main thread
constexpr int kLeaves = 48;           // run() by each seed, on its worker
constexpr int kOutside = 32;          // run() by an outside thread before wait()

// A round's tasks: seeds, their leaves, one child of every third leaf, and
// the outside thread's. Relaxed counters: read only after wait() returned,
// which orders every task's effects before it.
struct Books {
  std::vector<std::atomic<int>> runs;  // by task id
  std::atomic<long> submitted{0};      // run() calls
  std::atomic<long> ran{0};
  std::atomic<long> alive{0};  // callables built and not yet destroyed
  Books() : runs(kSeeds * kLeaves * 2 + kSeeds + kOutside) {}
};

int leaf_id(int seed, int leaf) { return kSeeds + seed * kLeaves + leaf; }
int child_id(int seed, int leaf) { return kSeeds + kSeeds * kLeaves + seed * kLeaves + leaf; }
int outside_id(int i) { return kSeeds + 2 * kSeeds * kLeaves + i; }

// A task body that books its construction, destruction and run.
template <class F>
struct Counted {
  Books* b;
  int id;
  F body;
  Counted(Books* books, int task, F f) : b(books), id(task), body(f) {
    b->alive.fetch_add(1, std::memory_order_relaxed);
  }
  Counted(const Counted& o) : b(o.b), id(o.id), body(o.body) { b->alive.fetch_add(1, std::memory_order_relaxed); }
  Counted& operator=(const Counted&) = delete;
  ~Counted() { b->alive.fetch_sub(1, std::memory_order_relaxed); }
  void operator()() const {
    body();
    b->runs[static_cast<std::size_t>(id)].fetch_add(1, std::memory_order_relaxed);
    b->ran.fetch_add(1, std::memory_order_relaxed);
  }
};

template <class F>
void spawn(weft::TaskGroup& g, Books& b, int id, F f) {
  b.submitted.fetch_add(1, std::memory_order_relaxed);
  g.run(Counted<F>(&b, id, f));
}

// Seeds from this thread, leaves from whichever worker runs each seed, a
// child from whichever worker runs a leaf. `on_leaf` runs in every leaf
// before its child is spawned (where a test cancels).
template <class OnLeaf>
void feed(weft::TaskGroup& g, Books& b, OnLeaf on_leaf) {
  for (int s = 0; s < kSeeds; ++s)
    spawn(g, b, s, [&g, &b, on_leaf, s] {
      for (int l = 0; l < kLeaves; ++l)
        spawn(g, b, leaf_id(s, l), [&g, &b, on_leaf, s, l] {
          on_leaf(s, l);
          if (l % 3 == 0) spawn(g, b, child_id(s, l), [] {});
        });
    });
}

void feed_from_outside(weft::TaskGroup& g, Books& b) {
  std::thread outside([&] {
    for (int i = 0; i < kOutside; ++i) spawn(g, b, outside_id(i), [] {});
  });
  outside.join();
}

TEST(GroupShardsStress, OneGroupFedFromEveryWorkerCountsEachTaskOnce) {
  const std::int64_t rounds = weft::test::stress_count(1000, 60);
  weft::test::Watchdog dog("one group fed from every worker");
  weft::ThreadPool pool(weft::PoolOptions{.workers = kWorkers});
  weft::TaskGroup g(pool);  // reused: the shards start each round at zero
  for (std::int64_t r = 0; r < rounds; ++r) {
    Books b;
    feed_from_outside(g, b);
    feed(g, b, [](int, int) {});
    g.wait();
    ASSERT_EQ(b.ran.load(std::memory_order_relaxed), b.submitted.load(std::memory_order_relaxed)) << "round " << r;
    ASSERT_EQ(b.alive.load(std::memory_order_relaxed), 0) << "round " << r;
    for (int s = 0; s < kSeeds; ++s) {
      ASSERT_EQ(b.runs[static_cast<std::size_t>(s)].load(std::memory_order_relaxed), 1) << "seed " << s;
      for (int l = 0; l < kLeaves; ++l) {
        ASSERT_EQ(b.runs[static_cast<std::size_t>(leaf_id(s, l))].load(std::memory_order_relaxed), 1);
        ASSERT_EQ(b.runs[static_cast<std::size_t>(child_id(s, l))].load(std::memory_order_relaxed), l % 3 == 0 ? 1 : 0);
      }
    }
    for (int i = 0; i < kOutside; ++i)
      ASSERT_EQ(b.runs[static_cast<std::size_t>(outside_id(i))].load(std::memory_order_relaxed), 1);
  }
}

// A fresh group each round, destroyed as soon as wait() returns: a finish
// that touched a shard or the root after the last unit went would be a
// use after free (ASan) or a race with the destructor (TSan).
TEST(GroupShardsStress, CancelRacingRunsFromEveryWorker) {
  const std::int64_t rounds = weft::test::stress_count(1000, 60);
  weft::test::Watchdog dog("cancel racing run() from every worker");
  weft::ThreadPool pool(weft::PoolOptions{.workers = kWorkers});
  for (std::int64_t r = 0; r < rounds; ++r) {
    Books b;
    bool threw = false;
    std::stop_source src;
    {
      weft::TaskGroup g(pool, src.get_token());
      const int how = static_cast<int>(r % 3);  // 0: from a task, 1: cancel(), 2: a stop, both from a thread
      const int at = static_cast<int>(r % kLeaves);
      std::thread canceller([&] {
        if (how == 0) return;
        for (int spin = 0; spin < static_cast<int>(r % 32) * 40; ++spin) std::this_thread::yield();
        if (how == 1)
          g.cancel();
        else
          src.request_stop();
      });
      feed_from_outside(g, b);
      feed(g, b, [&g, how, at](int s, int l) {
        if (how == 0 && s == at % kSeeds && l == at) g.cancel();
      });
      canceller.join();
      try {
        g.wait();
      } catch (const weft::cancelled&) {
        threw = true;
      }
    }
    ASSERT_EQ(b.alive.load(std::memory_order_relaxed), 0) << "round " << r;
    long ran = 0;
    for (const auto& n : b.runs) {
      ASSERT_LE(n.load(std::memory_order_relaxed), 1) << "round " << r;
      ran += n.load(std::memory_order_relaxed);
    }
    ASSERT_EQ(ran, b.ran.load(std::memory_order_relaxed));
    ASSERT_EQ(threw, ran != b.submitted.load(std::memory_order_relaxed)) << "round " << r;
  }
}

// The builder's local count (count_local()): a group built on a worker,
// its tasks run() under the building frame and taken back by its join or
// stolen, while a thread outside the pool waits on the same group — with
// the builder waiting too (odd rounds) or leaving the wait to that thread.
// Some tasks run() a child (counted on the root: inside a group task),
// some spin so that thieves take the rest. The outside wait must return
// only after every task ran; then the group is destroyed on the outside
// thread, so a finish or a wake that touched the group late is a race
// TSan reports.
TEST(GroupShardsStress, AWaiterOutsideRacesTheBuildersJoin) {
  const std::int64_t rounds = weft::test::stress_count(2000, 100);
  weft::test::Watchdog dog("an outside waiter racing the builder's join");
  weft::ThreadPool pool(weft::PoolOptions{.workers = kWorkers});
  constexpr int kTasks = 40;
  for (std::int64_t r = 0; r < rounds; ++r) {
    std::atomic<weft::TaskGroup*> shared{nullptr};
    std::atomic<bool> builder_done{false};
    std::atomic<long> submitted{0};
    std::atomic<long> ran{0};
    std::atomic<bool> outside_returned{false};
    const bool builder_waits = (r % 2) == 1;
    std::thread waiter([&] {
      weft::TaskGroup* group = nullptr;
      while ((group = shared.load(std::memory_order_acquire)) == nullptr) std::this_thread::yield();
      group->wait();
      // relaxed: wait() returned, which orders every task's effects first.
      EXPECT_EQ(ran.load(std::memory_order_relaxed), submitted.load(std::memory_order_relaxed)) << "round " << r;
      outside_returned.store(true, std::memory_order_release);
      while (!builder_done.load(std::memory_order_acquire)) std::this_thread::yield();
      delete group;  // destroyed here, outside the builder's thread
    });
    pool.post([&, r] {
      auto* group = new weft::TaskGroup(pool);  // built on this worker: its run()s count locally
      for (int i = 0; i < kTasks; ++i) {
        submitted.fetch_add(1, std::memory_order_relaxed);
        group->run([&, group, i, r] {
          if ((i + r) % 5 == 0) {
            submitted.fetch_add(1, std::memory_order_relaxed);
            group->run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
          }
          for (int spin = 0; spin < (i % 4) * 50; ++spin) std::this_thread::yield();
          ran.fetch_add(1, std::memory_order_relaxed);
        });
      }
      // release: the run()s above come before the outside wait(), as they must.
      shared.store(group, std::memory_order_release);
      if (builder_waits) group->wait();
      builder_done.store(true, std::memory_order_release);
    });
    waiter.join();
    ASSERT_TRUE(outside_returned.load(std::memory_order_relaxed)) << "round " << r;
  }
}

}  // namespace
