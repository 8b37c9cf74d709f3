// Cancellation under load (run under ThreadSanitizer): groups cancelled or
// stopped while their tasks run and spawn more, stops racing the groups'
// destruction, and stops racing sleeping queue producers/consumers and Event
// waiters. Every round checks the books: callables constructed ==
// destroyed, items pushed == popped + left, and wait() throws cancelled
// exactly when a task was skipped. Sizes come from stress_count().
#include <gtest/gtest.h>

#include <atomic>
#include <stop_token>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/queue/mpmc_queue.hpp"
#include "weft/queue/spsc_queue.hpp"
#include "weft/sync/event.hpp"

namespace {

// Relaxed counters: read only after wait()/join, which synchronize.
struct Books {
  std::atomic<long> alive{0};
  std::atomic<long> ran{0};
  std::atomic<long> submitted{0};
};

struct Counted {
  Books* b;
  explicit Counted(Books* books) : b(books) { b->alive.fetch_add(1, std::memory_order_relaxed); }
  Counted(const Counted& o) : b(o.b) { b->alive.fetch_add(1, std::memory_order_relaxed); }
  Counted& operator=(const Counted&) = delete;
  ~Counted() { b->alive.fetch_sub(1, std::memory_order_relaxed); }
  void operator()() const { b->ran.fetch_add(1, std::memory_order_relaxed); }
};

weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

TEST(CancelStress, GroupsCancelledWhileTheirTasksRunAndSpawn) {
  const std::int64_t rounds = weft::test::stress_count(400, 40);
  weft::test::Watchdog dog("groups cancelled while running");
  weft::ThreadPool pool(workers(3));
  for (std::int64_t r = 0; r < rounds; ++r) {
    Books b;
    bool threw = false;
    std::stop_source src;
    {
      weft::TaskGroup g(pool, src.get_token());
      std::thread canceller([&] {
        for (int spin = 0; spin < static_cast<int>(r % 64) * 50; ++spin) std::this_thread::yield();
        if (r % 2) {
          g.cancel();
        } else {
          src.request_stop();
        }
      });
      for (int i = 0; i < 200; ++i) {
        b.submitted.fetch_add(1, std::memory_order_relaxed);
        g.run([&] {
          // Tasks spawn into their own group, cancelled or not.
          for (int k = 0; k < 4; ++k) {
            b.submitted.fetch_add(1, std::memory_order_relaxed);
            g.run(Counted(&b));
          }
          b.ran.fetch_add(1, std::memory_order_relaxed);
        });
      }
      canceller.join();
      try {
        g.wait();
      } catch (const weft::cancelled&) {
        threw = true;
      }
    }
    ASSERT_EQ(b.alive.load(), 0) << "round " << r;
    ASSERT_EQ(threw, b.ran.load() < b.submitted.load()) << "round " << r;
  }
  // The pool still runs everything afterwards.
  Books b;
  weft::TaskGroup g(pool);
  for (int i = 0; i < 1000; ++i) g.run(Counted(&b));
  g.wait();
  EXPECT_EQ(b.ran.load(), 1000);
}

TEST(CancelStress, StopsRacingGroupDestruction) {
  const std::int64_t rounds = weft::test::stress_count(2000, 200);
  weft::test::Watchdog dog("stops racing group destruction");
  weft::ThreadPool pool(workers(2));
  for (std::int64_t r = 0; r < rounds; ++r) {
    std::stop_source src;
    std::thread requester([&] { src.request_stop(); });
    {
      weft::TaskGroup g(pool, src.get_token());
      g.run([] {});
      try {
        g.wait();
      } catch (const weft::cancelled&) {
      }
    }
    requester.join();
  }
}

template <class Q, int kProducers, int kConsumers>
void stops_racing_queue_sleepers(std::int64_t rounds) {
  const weft::WaitOptions opts{std::chrono::nanoseconds(0), false};
  for (std::int64_t r = 0; r < rounds; ++r) {
    Q q(2);
    std::stop_source src;
    std::atomic<long> pushed{0};
    std::atomic<long> popped{0};
    std::vector<std::thread> ts;
    for (int p = 0; p < kProducers; ++p)
      ts.emplace_back([&] {
        for (long i = 0; q.push(i, src.get_token(), opts); ++i) pushed.fetch_add(1, std::memory_order_relaxed);
      });
    for (int c = 0; c < kConsumers; ++c)
      ts.emplace_back([&] {
        while (q.pop(src.get_token(), opts)) popped.fetch_add(1, std::memory_order_relaxed);
      });
    for (int spin = 0; spin < static_cast<int>(r % 32) * 20; ++spin) std::this_thread::yield();
    src.request_stop();
    for (auto& t : ts) t.join();
    ASSERT_EQ(pushed.load(), popped.load() + static_cast<long>(q.size())) << "round " << r;
  }
}

TEST(CancelStress, StopsRacingQueueSleepers) {
  const std::int64_t rounds = weft::test::stress_count(400, 40);
  weft::test::Watchdog dog("stops racing queue sleepers");
  stops_racing_queue_sleepers<weft::SpscQueue<long>, 1, 1>(rounds);
  stops_racing_queue_sleepers<weft::MpmcQueue<long>, 2, 2>(rounds);
}

TEST(CancelStress, StopsAndSetsRacingEventWaiters) {
  const std::int64_t rounds = weft::test::stress_count(2000, 200);
  weft::test::Watchdog dog("stops racing Event waiters");
  const weft::WaitOptions opts{std::chrono::nanoseconds(0), false};
  for (std::int64_t r = 0; r < rounds; ++r) {
    weft::Event e;
    std::stop_source mine;
    std::stop_source theirs;
    std::atomic<int> stopped_early{0};
    std::thread a([&] {
      if (!e.wait(mine.get_token(), opts)) stopped_early.fetch_add(1, std::memory_order_relaxed);
    });
    std::thread b([&] { EXPECT_TRUE(e.wait(theirs.get_token(), opts)); });
    std::thread c([&] { e.wait(opts); });
    if (r % 2) mine.request_stop();
    if (r % 3 == 0) e.reset();
    e.set();
    if (r % 2 == 0) mine.request_stop();
    a.join();
    b.join();
    c.join();
    ASSERT_LE(stopped_early.load(), 1);
  }
}

}  // namespace
