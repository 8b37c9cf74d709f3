// Cancellation under seeded random interleavings: a cancel racing the
// workers' claims of a group's tasks, and stops racing sleepers in the
// queues and Event. Each seed perturbs every sched point differently; a
// failure names its seed. Counters are relaxed: read only after wait() or
// join (which synchronize).
#include <gtest/gtest.h>

#include <atomic>
#include <stop_token>
#include <thread>

#include "interleave.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/queue/mpmc_queue.hpp"
#include "weft/sync/event.hpp"

namespace {

struct Counted {
  std::atomic<int>* alive;
  std::atomic<int>* ran;
  Counted(std::atomic<int>* a, std::atomic<int>* r) : alive(a), ran(r) { alive->fetch_add(1, std::memory_order_relaxed); }
  Counted(const Counted& o) : alive(o.alive), ran(o.ran) { alive->fetch_add(1, std::memory_order_relaxed); }
  Counted& operator=(const Counted&) = delete;
  ~Counted() { alive->fetch_sub(1, std::memory_order_relaxed); }
  void operator()() const { ran->fetch_add(1, std::memory_order_relaxed); }
};

TEST(InterleaveCancel, CancelRacingClaims) {
  weft::test::for_each_interleaving("group cancel racing claims", 400, [&](std::uint64_t seed) {
    weft::PoolOptions o;
    o.workers = 1 + static_cast<int>(seed % 2);
    o.wait.spin = std::chrono::nanoseconds(seed % 3 == 0 ? 0 : 5000);
    weft::ThreadPool pool(o);
    std::atomic<int> alive{0};
    std::atomic<int> ran{0};
    constexpr int kTasks = 60;
    std::stop_source src;
    bool threw = false;
    {
      weft::TaskGroup g(pool, src.get_token());
      std::thread canceller([&] {
        if (seed % 2) {
          g.cancel();
        } else {
          src.request_stop();
        }
      });
      for (int i = 0; i < kTasks; ++i) g.run(Counted(&alive, &ran));
      canceller.join();
      try {
        g.wait();
      } catch (const weft::cancelled&) {
        threw = true;
      }
      ASSERT_TRUE(g.is_cancelled());
    }
    ASSERT_EQ(alive.load(), 0) << "a callable not destroyed, or destroyed twice";
    ASSERT_EQ(threw, ran.load() < kTasks) << "ran " << ran.load();
  });
}

TEST(InterleaveCancel, StopsRacingSleepers) {
  weft::test::for_each_interleaving("stops racing queue and Event sleepers", 400, [&](std::uint64_t seed) {
    const weft::WaitOptions opts{std::chrono::nanoseconds(seed % 2 ? 0 : 2000), false};
    weft::MpmcQueue<int> q(2);
    weft::Event e;
    std::stop_source src;
    std::atomic<int> popped{0};
    std::thread consumer([&] {
      while (auto v = q.pop(src.get_token(), opts)) popped.fetch_add(1, std::memory_order_relaxed);
    });
    std::thread waiter([&] { e.wait(src.get_token(), opts); });
    for (int i = 0; i < 20; ++i) q.push(i);
    if (seed % 3 == 0) e.set();
    src.request_stop();
    consumer.join();
    waiter.join();
    ASSERT_EQ(popped.load() + static_cast<int>(q.size()), 20) << "an item lost or duplicated";
  });
}

}  // namespace
