// The aio layer under load, with stops racing every hand-off: channel
// values conserved (each pushed value popped once or still inside, a
// stopped push's value back with its caller), semaphore units conserved,
// timers resuming exactly once, and file reads from many coroutines at
// once. Sized by weft::test::stress_count and run under ThreadSanitizer in CI.
// Counters are relaxed: only their totals are read, after the futures that
// bump them are waited for (which synchronizes).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "future_support.hpp"
#include "stress.hpp"
#include "temp_dir.hpp"
#include "watchdog.hpp"
#include "weft/aio/async_file.hpp"
#include "weft/aio/async_mutex.hpp"
#include "weft/aio/channel.hpp"
#include "weft/aio/sleep.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using namespace std::chrono_literals;
using weft::Task;
using weft::test::workers;

// Stops a fresh source every few microseconds, from its own thread, so that
// stops land at every point of the waiters' hand-shake.
class Chaos {
 public:
  explicit Chaos(int sources) : sources_(sources) {
    for (auto& s : sources_) s = std::make_shared<std::stop_source>();
    thread_ = std::thread([this] {
      std::mt19937 rng(11);
      while (!done_.load(std::memory_order_relaxed)) {
        const std::size_t i = rng() % sources_.size();
        std::shared_ptr<std::stop_source> old;
        {
          std::lock_guard lock(mu_);
          old = std::exchange(sources_[i], std::make_shared<std::stop_source>());
        }
        old->request_stop();
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 10));
      }
    });
  }
  ~Chaos() {
    done_ = true;
    thread_.join();
  }
  std::stop_token token(std::size_t i) {
    std::lock_guard lock(mu_);
    return sources_[i % sources_.size()]->get_token();
  }

 private:
  std::mutex mu_;
  std::vector<std::shared_ptr<std::stop_source>> sources_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST(AioStress, ChannelValuesAreConservedWhileStopsRaceEveryHandOff) {
  weft::test::Watchdog dog("channel under stops");
  const std::int64_t each = weft::test::stress_count(40'000, 2'000);
  constexpr int kProducers = 3, kConsumers = 3;
  weft::ThreadPool pool(workers(3));
  weft::Channel<std::int64_t> ch(4);
  Chaos chaos(4);
  std::atomic<std::int64_t> pushed_sum{0}, popped_sum{0}, pushed{0}, popped{0}, push_stopped{0}, pop_stopped{0};
  auto producer = [&](int id) -> Task<> {
    for (std::int64_t i = 0; i < each; ++i) {
      std::int64_t v = id * each + i + 1;
      try {
        if (co_await ch.push(std::move(v), chaos.token(id + i))) {
          pushed_sum.fetch_add(id * each + i + 1, std::memory_order_relaxed);
          pushed.fetch_add(1, std::memory_order_relaxed);
        }
      } catch (const weft::cancelled&) {
        EXPECT_EQ(v, id * each + i + 1);  // a stopped push leaves the value with its caller
        push_stopped.fetch_add(1, std::memory_order_relaxed);
      }
    }
  };
  auto consumer = [&](int id) -> Task<> {
    for (std::int64_t i = 0;; ++i) {
      try {
        auto v = co_await ch.pop(chaos.token(id + i));
        if (!v) co_return;
        popped_sum.fetch_add(*v, std::memory_order_relaxed);
        popped.fetch_add(1, std::memory_order_relaxed);
      } catch (const weft::cancelled&) {
        pop_stopped.fetch_add(1, std::memory_order_relaxed);
      }
    }
  };
  std::vector<weft::Future<void>> cs, ps;
  for (int c = 0; c < kConsumers; ++c) cs.push_back(pool.spawn(consumer(c)));
  for (int p = 0; p < kProducers; ++p) ps.push_back(pool.spawn(producer(p)));
  for (auto& f : ps) f.get();
  ch.close();
  for (auto& f : cs) f.get();
  while (auto v = ch.try_pop()) {  // what the consumers left when they ended
    popped_sum += *v;
    ++popped;
  }
  EXPECT_EQ(popped.load(), pushed.load());
  EXPECT_EQ(popped_sum.load(), pushed_sum.load());
  // The channel is open until every producer is done: each push is taken or
  // stopped, none refused.
  EXPECT_EQ(pushed.load() + push_stopped.load(), kProducers * each);
  RecordProperty("stopped_waits", static_cast<int>(push_stopped.load() + pop_stopped.load()));
}

TEST(AioStress, SemaphoreUnitsAreConservedWhileStopsRaceTheHandOff) {
  weft::test::Watchdog dog("semaphore under stops");
  const std::int64_t rounds = weft::test::stress_count(20'000, 1'000);
  weft::ThreadPool pool(workers(3));
  weft::AsyncSemaphore sem(2);
  weft::AsyncMutex mu;
  std::int64_t guarded = 0;  // only under mu
  Chaos chaos(3);
  std::atomic<int> inside{0};
  std::atomic<std::int64_t> entered{0};
  auto user = [&](int id) -> Task<> {
    for (std::int64_t i = 0; i < rounds; ++i) {
      try {
        co_await sem.acquire(chaos.token(id + i));
      } catch (const weft::cancelled&) {
        continue;  // holds nothing
      }
      EXPECT_LE(inside.fetch_add(1, std::memory_order_relaxed) + 1, 2);
      {
        auto lock = co_await mu.lock();
        ++guarded;
      }
      entered.fetch_add(1, std::memory_order_relaxed);
      inside.fetch_sub(1, std::memory_order_relaxed);
      sem.release();
    }
  };
  std::vector<weft::Future<void>> fs;
  for (int u = 0; u < 6; ++u) fs.push_back(pool.spawn(user(u)));
  for (auto& f : fs) f.get();
  EXPECT_EQ(sem.available(), 2);  // every unit came back
  EXPECT_EQ(guarded, entered.load());
}

TEST(AioStress, TimersRacingStopsResumeExactlyOnce) {
  weft::test::Watchdog dog("timers under stops");
  const std::int64_t n = weft::test::stress_count(20'000, 1'000);
  weft::ThreadPool pool(workers(2));
  Chaos chaos(8);
  std::atomic<std::int64_t> ends{0};
  auto sleeper = [&](std::int64_t i) -> Task<> {
    try {
      co_await weft::sleep_for(std::chrono::microseconds(i % 200), chaos.token(i));
    } catch (const weft::cancelled&) {
    }
    ends.fetch_add(1, std::memory_order_relaxed);
  };
  std::vector<weft::Future<void>> fs;
  fs.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) fs.push_back(pool.spawn(sleeper(i)));
  for (auto& f : fs) f.get();
  EXPECT_EQ(ends.load(), n);
}

// How many of `ts`, run together with when_all, returned true.
Task<int> count_true(std::vector<Task<bool>> ts) {
  int ok = 0;
  for (bool x : co_await weft::when_all(std::move(ts))) ok += x ? 1 : 0;
  co_return ok;
}

TEST(AioStress, ManyCoroutinesReadAndWriteOneFile) {
  weft::test::Watchdog dog("file reads and writes");
  weft::test::TempDir dir;
  const std::string path = (dir / "f.bin").string();
  constexpr int kBlocks = 256;
  const int rounds = static_cast<int>(weft::test::stress_count(8, 2));
  weft::ThreadPool pool(workers(2));
  auto file = weft::AsyncFile::open(path, weft::AsyncFile::read_write | weft::AsyncFile::create);
  auto block = [&](int b, int round) -> Task<bool> {
    std::vector<std::byte> out(4096, static_cast<std::byte>((b + round) & 0xff)), in(4096);
    co_await file.write_at(std::span<const std::byte>(out), static_cast<std::uint64_t>(b) * 4096);
    const std::size_t n = co_await file.read_at(std::span<std::byte>(in), static_cast<std::uint64_t>(b) * 4096);
    co_return n == 4096 && in == out;
  };
  for (int r = 0; r < rounds; ++r) {
    std::vector<Task<bool>> ts;
    for (int b = 0; b < kBlocks; ++b) ts.push_back(block(b, r));
    auto all = [&]() -> Task<int> {
      const int ok = co_await count_true(std::move(ts));
      co_await file.sync();
      co_return ok;
    };
    EXPECT_EQ(weft::sync_wait(pool, all()), kBlocks) << "round " << r;
  }
  EXPECT_EQ(file.size(), static_cast<std::uint64_t>(kBlocks) * 4096);
}

// Transfers of 64 KiB and more go into the ring at once, with whatever small
// ones the worker held back before them (async_file.cpp): regions of their
// own, written and read back by coroutines of both sizes at once.
TEST(AioStress, BigAndSmallTransfersMixOnOneFile) {
  weft::test::Watchdog dog("big and small file transfers");
  weft::test::TempDir dir;
  const std::string path = (dir / "mixed.bin").string();
  constexpr int kRegions = 64;
  constexpr std::size_t kRegion = 96 * 1024;  // a big transfer fills it; a small one its first 4 KiB
  const int rounds = static_cast<int>(weft::test::stress_count(6, 2));
  weft::ThreadPool pool(workers(2));
  auto file = weft::AsyncFile::open(path, weft::AsyncFile::read_write | weft::AsyncFile::create);
  auto region = [&](int r, int round) -> Task<bool> {
    const std::size_t len = r % 2 == 0 ? kRegion : 4096;
    std::vector<std::byte> out(len), in(len);
    for (std::size_t i = 0; i < len; ++i) out[i] = static_cast<std::byte>((i * 31 + static_cast<std::size_t>(r + round)) & 0xff);
    const auto at = static_cast<std::uint64_t>(r) * kRegion;
    co_await file.write_at(std::span<const std::byte>(out), at);
    const std::size_t n = co_await file.read_at(std::span<std::byte>(in), at);
    co_return n == len && in == out;
  };
  for (int round = 0; round < rounds; ++round) {
    std::vector<Task<bool>> ts;
    for (int r = 0; r < kRegions; ++r) ts.push_back(region(r, round));
    EXPECT_EQ(weft::sync_wait(pool, count_true(std::move(ts))), kRegions) << "round " << round;
  }
}

}  // namespace
