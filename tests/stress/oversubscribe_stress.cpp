// Oversubscription (issue 13): a pool of 64 workers on however few CPUs the
// machine has (2 on the reference VM) still computes right, runs every task
// exactly once, covers every index once, and goes back to ~0 CPU when idle.
// Sizes come from weft::test::stress_count (a quarter under the sanitizers);
// each test takes about a second in release on 2 CPUs.
// Counters are relaxed: only their totals are read, after the pool was
// waited for (wait_idle / a future / parallel_for's return synchronize).
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "fork_join.hpp"
#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

constexpr int kWorkers = 64;

weft::ThreadPool make_pool() { return weft::ThreadPool(weft::PoolOptions{.workers = kWorkers}); }

// A byte per index, bumped by whoever runs it; all ones afterwards means
// every index ran exactly once.
class Hits {
 public:
  explicit Hits(std::int64_t n)
      : n_(n), hits_(std::make_unique<std::atomic<std::uint8_t>[]>(static_cast<std::size_t>(n))) {}
  // relaxed: a count, read only after the pool was waited for.
  void hit(std::int64_t i) noexcept { hits_[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed); }
  // The first index not hit exactly once, or -1 (relaxed: called after the wait).
  std::int64_t first_wrong() const noexcept {
    for (std::int64_t i = 0; i < n_; ++i)
      if (hits_[static_cast<std::size_t>(i)].load(std::memory_order_relaxed) != 1) return i;
    return -1;
  }
  int at(std::int64_t i) const noexcept {  // relaxed: as first_wrong()
    return hits_[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
  }

 private:
  std::int64_t n_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> hits_;
};

std::int64_t process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

TEST(Oversubscribed, SixtyFourWorkersComputeFib) {
  // fib(25) spawns ~243,000 tasks; fib(22) ~57,000, the quarter that
  // stress_count gives the other tests under the sanitizers.
  const int n = weft::test::kSanitizerScale < 1.0 ? 22 : 25;
  const long expect = n == 22 ? 17711 : 75025;
  weft::test::Watchdog dog("fib with 64 workers");
  auto pool = make_pool();
  auto f = pool.submit([&] { return weft::test::fib(pool, n); });
  EXPECT_EQ(weft::detail::get_remote(f), expect);
}

// Half of the posts come from this thread (the injection path), half from
// tasks on the workers (their own deques), all while 64 workers on a few
// CPUs steal, park and wake.
TEST(Oversubscribed, AMillionPostsRunExactlyOnce) {
  const std::int64_t n = weft::test::stress_count(1'000'000);
  weft::test::Watchdog dog("1e6 posts on 64 workers");
  Hits hits(n);
  {
    auto pool = make_pool();
    const std::int64_t outside = n / 2;
    const std::int64_t per_feeder = (n - outside + kWorkers - 1) / kWorkers;
    for (int feeder = 0; feeder < kWorkers; ++feeder) {
      pool.post([&pool, &hits, outside, per_feeder, n, feeder] {
        const std::int64_t lo = outside + feeder * per_feeder;
        for (std::int64_t i = lo; i < std::min(n, lo + per_feeder); ++i) pool.post([&hits, i] { hits.hit(i); });
      });
    }
    for (std::int64_t i = 0; i < outside; ++i) pool.post([&hits, i] { hits.hit(i); });
    pool.wait_idle();
  }
  const std::int64_t wrong = hits.first_wrong();
  EXPECT_EQ(wrong, -1) << "task " << wrong << " ran " << (wrong < 0 ? 0 : hits.at(wrong)) << " times";
}

TEST(Oversubscribed, ParallelForCoversEachIndexOnce) {
  const std::int64_t n = weft::test::stress_count(10'000'000);
  weft::test::Watchdog dog("1e7 parallel_for on 64 workers");
  Hits hits(n);
  auto pool = make_pool();
  weft::parallel_for(pool, std::int64_t{0}, n, [&](std::int64_t i) { hits.hit(i); });
  const std::int64_t wrong = hits.first_wrong();
  EXPECT_EQ(wrong, -1) << "index " << wrong << " ran " << (wrong < 0 ? 0 : hits.at(wrong)) << " times";
}

// Behaviour, not speed: once the work is done the 64 workers search for
// their spin budget (microseconds) and park, so over an idle half second
// the process burns next to no CPU. One worker still spinning would burn
// the whole interval; the bound, 5% of one CPU, is 20x below that.
TEST(Oversubscribed, AnIdlePoolGoesBackToNearlyNoCpu) {
  using namespace std::chrono_literals;
  weft::test::Watchdog dog("idle 64-worker pool");
  auto pool = make_pool();
  std::atomic<std::int64_t> sum{0};
  // Wake every worker: more small tasks than workers, then quiet.
  weft::parallel_for(pool, std::int64_t{0}, std::int64_t{100'000}, [&](std::int64_t i) {
    sum.fetch_add(i, std::memory_order_relaxed);  // relaxed: a total, read after the loop
  });
  pool.wait_idle();
  ASSERT_EQ(sum.load(std::memory_order_relaxed), std::int64_t{99'999} * 100'000 / 2);  // relaxed: the loop returned
  std::this_thread::sleep_for(100ms);  // the spin budget runs out, every worker parks
  constexpr auto kIdle = 500ms;
  const std::int64_t cpu0 = process_cpu_ns();
  std::this_thread::sleep_for(kIdle);
  const std::int64_t burnt = process_cpu_ns() - cpu0;
  const std::int64_t bound = std::chrono::nanoseconds(kIdle).count() / 20;
  EXPECT_LT(burnt, bound) << "an idle pool of " << kWorkers << " workers burnt " << burnt / 1000 << " us of CPU in "
                          << std::chrono::milliseconds(kIdle).count() << " ms";
}

}  // namespace
