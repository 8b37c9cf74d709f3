// Future<T>::then(f): runs f on the pool with the value once it is ready;
// failures skip f and travel to the continued future.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "future_support.hpp"
#include "throws.hpp"
#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/sync/event.hpp"

namespace {

using weft::test::workers;

TEST(FutureThen, OnAReadyFutureRunsOnThePool) {
  weft::test::Watchdog dog("then on ready");
  weft::ThreadPool pool(workers(2));
  auto f = pool.submit([] { return 20; });
  f.wait();
  ASSERT_TRUE(f.ready());
  auto g = std::move(f).then([&pool](int x) { return std::make_pair(x + 1, pool.is_worker()); });
  EXPECT_FALSE(f.valid());
  // get() could take the queued continuation back and run it here, as it
  // does any submitted task; get_remote() leaves it to the pool.
  const auto [value, on_worker] = weft::detail::get_remote(g);
  EXPECT_EQ(value, 21);
  EXPECT_TRUE(on_worker);
}

TEST(FutureThen, OnAnUnreadyFutureWaitsForIt) {
  weft::test::Watchdog dog("then on unready");
  weft::ThreadPool pool(workers(2));
  weft::Event go;
  std::atomic<bool> called{false};
  auto f = pool.submit([&] {
    go.wait();
    return std::string("we");
  });
  auto g = std::move(f).then([&](std::string s) {
    called = true;
    return s + "ft";
  });
  EXPECT_FALSE(g.ready());
  EXPECT_FALSE(called.load());
  go.set();
  EXPECT_EQ(g.get(), "weft");
  EXPECT_TRUE(called.load());
}

TEST(FutureThen, AFailureSkipsTheContinuationAndTravels) {
  weft::test::Watchdog dog("then on failed");
  weft::ThreadPool pool(workers(2));
  std::atomic<int> calls{0};
  auto g = pool.submit([]() -> int { throw std::runtime_error("antecedent failed"); })
               .then([&](int x) {
                 calls.fetch_add(1);
                 return x;
               })
               .then([&](int x) {
                 calls.fetch_add(1);
                 return x;
               });
  EXPECT_TRUE(weft::test::throws_what<std::runtime_error>([&] { g.get(); }, "antecedent failed"));
  EXPECT_EQ(calls.load(), 0);
}

TEST(FutureThen, AContinuationThatThrowsFailsItsOwnFuture) {
  weft::ThreadPool pool(workers(2));
  auto g = pool.submit([] { return 1; }).then([](int) -> int { throw std::logic_error("in f"); });
  EXPECT_THROW(g.get(), std::logic_error);
}

TEST(FutureThen, LongChainsRunInOrder) {
  weft::test::Watchdog dog("a chain of 1000");
  weft::ThreadPool pool(workers(2));
  weft::Future<int> f = pool.submit([] { return 0; });
  for (int i = 0; i < 1000; ++i) f = std::move(f).then([i](int x) { return x == i ? x + 1 : -1000000; });
  EXPECT_EQ(f.get(), 1000);
}

TEST(FutureThen, VoidOnEitherSide) {
  weft::test::Watchdog dog("void then");
  weft::ThreadPool pool(workers(2));
  std::atomic<int> side{0};
  auto a = pool.submit([&] { side = 1; }).then([&] { return side.load() + 1; });
  EXPECT_EQ(a.get(), 2);
  auto b = pool.submit([] { return 3; }).then([&](int x) { side = x; });
  b.get();
  EXPECT_EQ(side.load(), 3);
  auto c = pool.submit([] {}).then([&] { side = 9; });
  c.get();
  EXPECT_EQ(side.load(), 9);
}

TEST(FutureThen, MoveOnlyValuesPassThrough) {
  weft::ThreadPool pool(workers(2));
  auto g = pool.submit([] { return std::make_unique<int>(4); }).then([](std::unique_ptr<int> p) {
    *p *= 2;
    return p;
  });
  EXPECT_EQ(*g.get(), 8);
}

TEST(FutureThen, AnInvalidFutureThrowsNoState) {
  weft::Future<int> f;
  EXPECT_THROW(std::move(f).then([](int x) { return x; }), std::future_error);
}

TEST(FutureThen, DroppingTheContinuedFutureStillRunsTheContinuation) {
  weft::test::Watchdog dog("drop a pending continuation");
  weft::ThreadPool pool(workers(2));
  weft::Event go;
  std::atomic<int> ran{0};
  {
    auto f = pool.submit([&] {
      go.wait();
      return 1;
    });
    auto g = std::move(f).then([&](int x) { ran.fetch_add(x); });
  }  // both futures dropped before the antecedent is done
  go.set();
  pool.wait_idle();
  EXPECT_EQ(ran.load(), 1);
}

TEST(FutureThen, WaitingOnAOneWorkerPoolFromItsWorkerDoesNotDeadlock) {
  weft::test::Watchdog dog("then + get on the only worker");
  weft::ThreadPool pool(workers(1));
  auto outer = pool.submit([&pool] {
    auto inner = pool.submit([] { return 6; }).then([](int x) { return x * 7; });
    return inner.get();
  });
  EXPECT_EQ(outer.get(), 42);
}

TEST(FutureThen, ManyContinuationsFromManyThreads) {
  weft::test::Watchdog dog("then from 4 threads");
  weft::ThreadPool pool(workers(2));
  std::atomic<long> sum{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) sum += pool.submit([=] { return t * 1000 + i; }).then([](int x) { return x + 1; }).get();
    });
  for (auto& t : ts) t.join();
  long expect = 0;
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 500; ++i) expect += t * 1000 + i + 1;
  EXPECT_EQ(sum.load(), expect);
}

}  // namespace
