// weft::when_all and weft::when_any: values in order, the first failure,
// inputs already ready, and no input vector too small.
#include "weft/exec/when_all.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "future_support.hpp"
#include "throws.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/sync/event.hpp"

namespace {

using weft::test::Gate;
using weft::test::workers;

TEST(WhenAll, TupleOfValuesInOrderWithVoidAsMonostate) {
  weft::test::Watchdog dog("when_all tuple");
  weft::ThreadPool pool(workers(2));
  std::atomic<int> side{0};
  auto all = weft::when_all(pool.submit([] { return 1; }), pool.submit([] { return std::string("two"); }),
                            pool.submit([&] { side = 3; }));
  static_assert(std::is_same_v<decltype(all), weft::Future<std::tuple<int, std::string, std::monostate>>>);
  const auto [a, b, c] = all.get();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, "two");
  EXPECT_EQ(c, std::monostate{});
  EXPECT_EQ(side.load(), 3);
}

TEST(WhenAll, TupleRethrowsTheFirstFailureByPosition) {
  weft::test::Watchdog dog("when_all tuple failure");
  weft::ThreadPool pool(workers(2));
  weft::Event go;
  // The later input fails first in time; the earlier one's failure is the one that travels.
  auto late = pool.submit([&]() -> int {
    go.wait();
    throw std::runtime_error("first by position");
  });
  auto early = pool.submit([]() -> int { throw std::logic_error("first in time"); });
  early.wait();
  auto all = weft::when_all(std::move(late), std::move(early));
  go.set();
  EXPECT_TRUE(weft::test::throws_what<std::runtime_error>([&] { all.get(); }, "first by position"));
}

TEST(WhenAll, VectorOfValuesInOrder) {
  weft::test::Watchdog dog("when_all vector");
  weft::ThreadPool pool(workers(2));
  std::vector<weft::Future<int>> fs;
  for (int i = 0; i < 200; ++i) fs.push_back(pool.submit([i] { return i * i; }));
  auto all = weft::when_all(std::move(fs));
  const std::vector<int> v = all.get();
  ASSERT_EQ(v.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(v[static_cast<std::size_t>(i)], i * i);
}

TEST(WhenAll, VectorOfVoidAndItsFailure) {
  weft::test::Watchdog dog("when_all void vector");
  weft::ThreadPool pool(workers(2));
  std::atomic<int> n{0};
  std::vector<weft::Future<void>> fs;
  for (int i = 0; i < 50; ++i) fs.push_back(pool.submit([&] { n.fetch_add(1); }));
  weft::Future<void> all = weft::when_all(std::move(fs));
  all.get();
  EXPECT_EQ(n.load(), 50);

  std::vector<weft::Future<void>> bad;
  bad.push_back(pool.submit([] {}));
  bad.push_back(pool.submit([] { throw std::out_of_range("input 1"); }));
  bad.push_back(pool.submit([] { throw std::logic_error("input 2"); }));
  EXPECT_THROW(weft::when_all(std::move(bad)).get(), std::out_of_range);
}

TEST(WhenAll, EmptyVectorIsReadyAtOnce) {
  weft::ThreadPool pool(workers(1));
  auto all = weft::when_all(std::vector<weft::Future<int>>{});
  EXPECT_TRUE(all.ready());
  EXPECT_TRUE(all.get().empty());
  auto none = weft::when_all(std::vector<weft::Future<void>>{});
  EXPECT_TRUE(none.ready());
  none.get();
}

TEST(WhenAll, AlreadyReadyInputsMakeItReadyOnReturn) {
  weft::ThreadPool pool(workers(2));
  auto a = pool.submit([] { return 1; });
  auto b = pool.submit([] { return 2.5; });
  a.wait();
  b.wait();
  auto all = weft::when_all(std::move(a), std::move(b));
  EXPECT_TRUE(all.ready());
  EXPECT_EQ(all.get(), std::make_tuple(1, 2.5));
}

TEST(WhenAll, AnInvalidInputIsRejected) {
  weft::ThreadPool pool(workers(1));
  std::vector<weft::Future<int>> fs;
  fs.push_back(pool.submit([] { return 1; }));
  fs.emplace_back();
  EXPECT_TRUE(weft::test::throws_containing<std::invalid_argument>([&] { (void)weft::when_all(std::move(fs)); },
                                                                   {"future 1"}));
  weft::Future<int> ok = pool.submit([] { return 2; });
  weft::Future<int> empty;
  EXPECT_THROW((void)weft::when_all(std::move(ok), std::move(empty)), std::invalid_argument);
  EXPECT_TRUE(ok.valid());
  EXPECT_EQ(ok.get(), 2);
}

TEST(WhenAll, ThenOnTheCombinedFuture) {
  weft::test::Watchdog dog("when_all then");
  weft::ThreadPool pool(workers(2));
  auto sum = weft::when_all(pool.submit([] { return 20; }), pool.submit([] { return 22; }))
                 .then([](std::tuple<int, int> t) { return std::get<0>(t) + std::get<1>(t); });
  EXPECT_EQ(sum.get(), 42);
  auto empty = weft::when_all(std::vector<weft::Future<int>>{}).then([](std::vector<int> v) { return v.size(); });
  EXPECT_EQ(empty.get(), 0u);
}

TEST(WhenAll, OnAOneWorkerPoolFromItsWorker) {
  weft::test::Watchdog dog("when_all inside the only worker");
  weft::ThreadPool pool(workers(1));
  auto outer = pool.submit([&pool] {
    std::vector<weft::Future<int>> fs;
    for (int i = 1; i <= 10; ++i) fs.push_back(pool.submit([i] { return i; }));
    int total = 0;
    for (int x : weft::when_all(std::move(fs)).get()) total += x;
    return total;
  });
  EXPECT_EQ(outer.get(), 55);
}

TEST(WhenAll, CancelledWhileInputsRun) {
  weft::test::Watchdog dog("cancel when_all");
  weft::ThreadPool pool(workers(2));
  weft::Event go;
  std::atomic<int> ran{0};
  auto all = weft::when_all(pool.submit([&] {
    go.wait();
    ran.fetch_add(1);
  }),
                            pool.submit([] { return 1; }));
  EXPECT_TRUE(all.cancel());
  go.set();
  EXPECT_THROW(all.get(), weft::cancelled);
  pool.wait_idle();
  EXPECT_EQ(ran.load(), 1) << "the inputs of a cancelled when_all still run";
}

// when_any on a 2-worker pool of two inputs: input 0 held back for as long
// as this lives (so it is still running when the result is read), input 1
// `second`, bound to be the first one done.
struct FirstInputHeldBack {
  weft::ThreadPool pool{workers(2)};
  Gate gate;
  template <class F>
  weft::Future<std::size_t> when_any(F second) {
    std::vector<weft::Future<int>> fs;
    fs.push_back(pool.submit(gate.after_open(0)));
    fs.push_back(pool.submit(std::move(second)));
    return weft::when_any(std::move(fs));
  }
};

TEST(WhenAny, IndexOfTheFirstReady) {
  weft::test::Watchdog dog("when_any");
  FirstInputHeldBack inputs;
  EXPECT_EQ(inputs.when_any([] { return 1; }).get(), 1u);
}

TEST(WhenAny, AlreadyReadyInputWinsAtOnce) {
  weft::test::Watchdog dog("when_any ready");
  weft::ThreadPool pool(workers(1));
  Gate gate(pool, 1);
  std::vector<weft::Future<void>> fs;
  fs.push_back(pool.submit([] {}));
  fs.push_back(pool.submit([] {}));
  fs.back().wait();  // run in place by this thread: the only worker is held by the gate
  auto any = weft::when_any(std::move(fs));
  EXPECT_TRUE(any.ready());
  EXPECT_EQ(any.get(), 1u);
}

TEST(WhenAny, TheWinnersFailureTravels) {
  weft::test::Watchdog dog("when_any failure");
  FirstInputHeldBack inputs;
  EXPECT_THROW(inputs.when_any([]() -> int { throw std::runtime_error("winner failed"); }).get(),
               std::runtime_error);
}

TEST(WhenAny, EmptyVectorIsAnError) {
  EXPECT_TRUE(weft::test::throws_containing<std::invalid_argument>(
      [] { (void)weft::when_any(std::vector<weft::Future<int>>{}); }, {"when_any"}));
}

}  // namespace
