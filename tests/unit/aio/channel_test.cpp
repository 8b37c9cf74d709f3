// weft::Channel<T>: FIFO, hand-off to waiters, capacity 0, close, stops,
// and no value lost or duplicated.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <algorithm>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "aio_support.hpp"
#include "future_support.hpp"
#include "watchdog.hpp"
#include "weft/aio/channel.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using namespace std::chrono_literals;
using weft::Channel;
using weft::Task;
using weft::test::Eager;

TEST(Channel, BufferedValuesComeOutInOrderWithoutSuspending) {
  Channel<int> ch(4);
  auto task = [&]() -> Task<std::vector<int>> {
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(co_await ch.push(i));
    EXPECT_EQ(ch.size(), 4U);
    std::vector<int> out;
    for (int i = 0; i < 4; ++i) out.push_back(*co_await ch.pop());
    co_return out;
  };
  EXPECT_EQ(weft::sync_wait(task()), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ch.capacity(), 4U);
}

TEST(Channel, ManyProducersAndConsumersLoseNothingAndKeepEachProducersOrder) {
  weft::test::Watchdog dog("channel fan-in");
  weft::ThreadPool pool(weft::test::workers(2));
  constexpr int kProducers = 4, kConsumers = 3, kEach = 20000;
  Channel<std::pair<int, int>> ch(8);
  auto producer = [&](int id) -> Task<> {
    for (int i = 0; i < kEach; ++i) EXPECT_TRUE(co_await ch.push({id, i}));
  };
  auto consumer = [&]() -> Task<std::vector<std::pair<int, int>>> {
    std::vector<std::pair<int, int>> got;
    while (auto v = co_await ch.pop()) got.push_back(*v);
    co_return got;
  };
  std::vector<weft::Future<std::vector<std::pair<int, int>>>> consumers;
  for (int c = 0; c < kConsumers; ++c) consumers.push_back(pool.spawn(consumer()));
  std::vector<weft::Future<void>> producers;
  for (int p = 0; p < kProducers; ++p) producers.push_back(pool.spawn(producer(p)));
  for (auto& f : producers) f.get();
  ch.close();
  std::vector<int> seen(kProducers * kEach, 0);
  for (auto& f : consumers) {
    std::vector<int> last(kProducers, -1);
    for (auto [id, i] : f.get()) {
      ++seen[id * kEach + i];
      EXPECT_GT(i, last[id]) << "producer " << id << "'s values out of order at one consumer";
      last[id] = i;
    }
  }
  for (std::size_t k = 0; k < seen.size(); ++k) ASSERT_EQ(seen[k], 1) << "value " << k;
}

TEST(Channel, CapacityZeroIsARendezvous) {
  weft::test::Watchdog dog("rendezvous");
  weft::ThreadPool pool(weft::test::workers(2));
  Channel<int> ch(0);
  std::atomic<int> pushed{0};
  auto producer = [&]() -> Task<> {
    for (int i = 0; i < 1000; ++i) {
      EXPECT_TRUE(co_await ch.push(i));
      pushed.fetch_add(1);
    }
    ch.close();
  };
  auto consumer = [&]() -> Task<long> {
    long sum = 0;
    while (auto v = co_await ch.pop()) sum += *v;
    co_return sum;
  };
  EXPECT_FALSE(ch.try_push(1));  // nobody waits to take it
  auto c = pool.spawn(consumer());
  auto p = pool.spawn(producer());
  p.get();
  EXPECT_EQ(c.get(), 999L * 1000 / 2);
  EXPECT_EQ(ch.size(), 0U);
}

TEST(Channel, CloseWakesEveryWaiterAndAPushKeepsItsValue) {
  weft::test::Watchdog dog("close");
  Channel<std::unique_ptr<int>> full(1);
  Channel<std::unique_ptr<int>> empty(1);
  EXPECT_TRUE(full.try_push(std::make_unique<int>(1)));
  std::atomic<int> popped_nullopt{0}, push_refused{0}, kept{0};
  auto popper = [&]() -> Eager {
    if (!(co_await empty.pop()).has_value()) popped_nullopt.fetch_add(1);
  };
  auto pusher = [&]() -> Eager {
    auto v = std::make_unique<int>(2);
    if (!co_await full.push(std::move(v))) push_refused.fetch_add(1);
    if (v && *v == 2) kept.fetch_add(1);  // not moved from: still the caller's
  };
  for (int i = 0; i < 3; ++i) popper(), pusher();
  empty.close();
  full.close();
  while (popped_nullopt.load() + push_refused.load() != 6) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(kept.load(), 3);
  // What was in the channel before close still comes out; then nullopt.
  EXPECT_EQ(**full.try_pop(), 1);
  EXPECT_FALSE(full.try_pop().has_value());
  EXPECT_FALSE(full.try_push(std::make_unique<int>(3)));
  EXPECT_TRUE(full.closed());
}

TEST(Channel, AStoppedWaiterLeavesTheLineAndTheValueStaysWithTheCaller) {
  weft::test::Watchdog dog("stopped waiters");
  Channel<std::string> ch(0);
  std::stop_source stop_pop, stop_push;
  std::atomic<int> cancelled{0};
  std::string pushed_value = "kept";
  std::atomic<bool> push_done{false};
  auto popper = [&](std::stop_token t) -> Eager {
    try {
      co_await ch.pop(t);
    } catch (const weft::cancelled&) {
      cancelled.fetch_add(1);
    }
  };
  popper(stop_pop.get_token());
  stop_pop.request_stop();  // the popper leaves; a later push must not hand it a value
  while (cancelled.load() != 1) std::this_thread::sleep_for(1ms);
  EXPECT_FALSE(ch.try_push(std::string("nobody takes it")));

  auto pusher = [&](std::stop_token t) -> Eager {
    try {
      co_await ch.push(std::move(pushed_value), t);
    } catch (const weft::cancelled&) {
      cancelled.fetch_add(1);
    }
    push_done = true;
  };
  pusher(stop_push.get_token());
  stop_push.request_stop();
  while (!push_done.load()) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(cancelled.load(), 2);
  EXPECT_EQ(pushed_value, "kept");
  EXPECT_FALSE(ch.try_pop().has_value());  // the stopped push left nothing behind
}

TEST(Channel, ValuesStillInsideAreDestroyedWithIt) {
  auto probe = std::make_shared<int>(0);
  {
    Channel<std::shared_ptr<int>> ch(8);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(ch.try_push(probe));
    EXPECT_EQ(probe.use_count(), 6);
    ASSERT_TRUE(ch.try_pop().has_value());
    EXPECT_EQ(probe.use_count(), 5);
  }
  EXPECT_EQ(probe.use_count(), 1);
}

TEST(Channel, WaitersAreServedInArrivalOrder) {
  weft::test::Watchdog dog("arrival order");
  Channel<int> ch(0);
  std::vector<int> order;
  std::atomic<int> done{0};
  std::mutex m;
  auto popper = [&](int id) -> Eager {
    auto v = co_await ch.pop();
    {
      std::lock_guard lock(m);
      order.push_back(id * 100 + *v);
    }
    done.fetch_add(1);
  };
  for (int id = 0; id < 5; ++id) popper(id);  // each queues before the next starts
  for (int v = 0; v < 5; ++v) ASSERT_TRUE(ch.try_push(v));
  while (done.load() != 5) std::this_thread::sleep_for(1ms);
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, (std::vector<int>{0, 101, 202, 303, 404}));  // popper k got value k
}

TEST(Channel, AHandOffKeepsAPingPongOnOneWorker) {
  weft::test::Watchdog dog("ping-pong on one worker");
  weft::ThreadPool pool(weft::test::workers(2));
  Channel<int> ping(1), pong(1);
  std::atomic<int> moves{0};  // a side of the pair running on another thread than its last message
  auto side = [&](Channel<int>& in, Channel<int>& out, bool first) -> Task<> {
    std::thread::id last = std::this_thread::get_id();
    for (int i = 0; i < 10000; ++i) {
      if (first) co_await out.push(i);
      auto v = co_await in.pop();
      if (!first) co_await out.push(*v);
      if (std::this_thread::get_id() != last) moves.fetch_add(1);
      last = std::this_thread::get_id();
    }
  };
  auto both = [&]() -> Task<> { co_await weft::when_all(side(pong, ping, true), side(ping, pong, false)); };
  weft::sync_wait(pool, both());
  // The woken side runs next on the waking side's worker; a thief may take
  // it only between bursts of kMaxHandoffs hand-offs.
  EXPECT_LT(moves.load(), 2 * 10000 / 8) << "the pair kept changing threads";
}

TEST(Channel, AWaitInsideACoroutineDoesNotStrandTheCoroutineItWoke) {
  // One worker: the pusher wakes the popper into its hand-off slot, then
  // blocks in sync_wait() on a task that needs the popper to run. The wait
  // must queue the slot's coroutine, or nothing ever runs it.
  weft::test::Watchdog dog("a wait after a hand-off", std::chrono::seconds(60));
  weft::ThreadPool pool(weft::test::workers(1));
  Channel<int> a(0), b(0);
  auto popper = [&]() -> Task<> { co_await b.push(*co_await a.pop() + 1); };
  auto needs_popper = [&]() -> Task<int> { co_return *co_await b.pop(); };
  auto pusher = [&]() -> Task<int> {
    co_await a.push(41);                       // the popper is in the slot now
    co_return weft::sync_wait(needs_popper());  // a blocking wait on this worker
  };
  auto root = [&]() -> Task<int> {
    auto [ignored, v] = co_await weft::when_all(popper(), pusher());
    co_return v;
  };
  EXPECT_EQ(weft::sync_wait(pool, root()), 42);
}

}  // namespace
