// weft::Task<T>: lazy coroutines on the pool — schedule(), awaiting
// futures and child tasks, when_all, spawn, sync_wait, stop tokens, and
// frames freed whatever way a task ends.
#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

#include "future_support.hpp"
#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/mem/pool_resource.hpp"

namespace {

using weft::Task;
using weft::test::Counted;
using weft::test::workers;

Task<int> value(int v) { co_return v; }
Task<> nothing() { co_return; }
Task<int> throws_runtime() {
  throw std::runtime_error("task failed");
  co_return 0;
}

Task<int> add_one(Task<int> t) { co_return co_await std::move(t) + 1; }

TEST(Coro, SyncWaitReturnsTheValue) {
  EXPECT_EQ(weft::sync_wait(value(7)), 7);
  EXPECT_EQ(weft::sync_wait(add_one(value(7))), 8);
  weft::sync_wait(nothing());
}

TEST(Coro, ExceptionsPropagateToTheAwaiter) {
  auto catcher = []() -> Task<std::string> {
    try {
      co_await add_one(throws_runtime());
    } catch (const std::runtime_error& e) {
      co_return e.what();
    }
    co_return "no exception";
  };
  EXPECT_EQ(weft::sync_wait(catcher()), "task failed");
  EXPECT_THROW(weft::sync_wait(add_one(throws_runtime())), std::runtime_error);
  EXPECT_THROW(weft::sync_wait(add_one(Task<int>{})), std::invalid_argument);
  EXPECT_THROW(weft::sync_wait(Task<int>{}), std::invalid_argument);
  Task<int> none;
  EXPECT_THROW(none.set_stop_token({}), std::invalid_argument);
}

TEST(Coro, ATaskIsLazyAndDestroyingItUnstartedFreesItsFrame) {
  std::atomic<int> ran{0};
  auto body = [](Counted c) -> Task<int> { co_return c(); };
  {
    Task<int> t = body(Counted(&ran));
    EXPECT_TRUE(t.valid());
    EXPECT_EQ(Counted::live.load(), 1);  // the parameter, in the frame
  }
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(Counted::live.load(), 0);
}

TEST(Coro, FramesComeFromThePoolResourceAndGoBack) {
  auto& res = weft::default_pool_resource();
  const std::int64_t before = res.live_blocks();
  {
    Task<int> t = add_one(value(1));
    EXPECT_GT(res.live_blocks(), before);
    EXPECT_EQ(weft::sync_wait(std::move(t)), 2);
  }
  EXPECT_EQ(res.live_blocks(), before);
}

TEST(Coro, ScheduleMovesTheTaskOntoAWorker) {
  weft::test::Watchdog dog("schedule");
  weft::ThreadPool pool(workers(2));
  auto hop = [](weft::ThreadPool& p) -> Task<std::pair<bool, bool>> {
    const bool before = p.is_worker();
    co_await p.schedule();
    co_return std::make_pair(before, p.is_worker());
  };
  const auto [before, after] = weft::sync_wait(hop(pool));
  EXPECT_FALSE(before);
  EXPECT_TRUE(after);
}

TEST(Coro, ScheduleOnAShutDownPoolThrowsInTheTask) {
  weft::ThreadPool pool(workers(1));
  pool.shutdown();
  auto hop = [](weft::ThreadPool& p) -> Task<int> {
    co_await p.schedule();
    co_return 1;
  };
  EXPECT_THROW(weft::sync_wait(hop(pool)), std::runtime_error);
}

TEST(Coro, AwaitingAFutureSuspendsWithoutBlocking) {
  weft::test::Watchdog dog("await future");
  weft::ThreadPool here(workers(1));
  weft::ThreadPool there(workers(1));
  weft::test::Gate gate;
  auto fut = there.submit(gate.after_open(41));
  auto waiter = [](weft::ThreadPool& p, weft::ThreadPool& q, weft::Future<int>& f) -> Task<std::pair<int, bool>> {
    co_await p.schedule();
    const int v = co_await f;
    co_return std::make_pair(v + 1, p.is_worker() && !q.is_worker());
  };
  auto result = here.spawn(waiter(here, there, fut));
  // The waiter holds `here`'s only worker until it suspends; a task queued
  // behind it runs only if the await freed the worker.
  auto probe = here.submit([] { return 1; });
  EXPECT_EQ(weft::detail::get_remote(probe), 1);
  EXPECT_FALSE(result.ready());
  gate.release();
  const auto [v, on_own_pool] = result.get();
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(on_own_pool);  // resumed on the task's pool, not the future's
  EXPECT_FALSE(fut.valid());     // co_await consumed it
}

TEST(Coro, AwaitingReadyFailedAndCancelledFutures) {
  weft::test::Watchdog dog("await future outcomes");
  weft::ThreadPool pool(workers(1));
  auto ready = pool.submit([] { return 5; });
  ready.wait();
  auto get = [](weft::Future<int> f) -> Task<int> { co_return co_await f; };
  EXPECT_EQ(weft::sync_wait(get(std::move(ready))), 5);
  EXPECT_THROW(weft::sync_wait(get(pool.submit([]() -> int { throw std::logic_error("x"); }))), std::logic_error);
  weft::test::Gate gate(pool, 1);
  auto queued = pool.submit([] { return 1; });
  ASSERT_TRUE(queued.cancel());
  EXPECT_THROW(weft::sync_wait(get(std::move(queued))), weft::cancelled);
}

Task<std::int64_t> chain(std::int64_t n, std::uintptr_t* deepest) {
  if (n == 0) {
    *deepest = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    co_return 0;
  }
  co_return co_await chain(n - 1, deepest) + 1;
}

// Far below the 8 MiB of a default stack: the chain below would need
// hundreds of MiB if each await took a stack frame.
constexpr std::uintptr_t kStackSlack = 64 * 1024;

std::uintptr_t distance(std::uintptr_t a, std::uintptr_t b) { return a > b ? a - b : b - a; }

TEST(Coro, AMillionNestedAwaitsDoNotGrowTheStack) {
  std::uintptr_t deepest = 0;
  const auto top = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  EXPECT_EQ(weft::sync_wait(chain(1'000'000, &deepest)), 1'000'000);
  EXPECT_LT(distance(top, deepest), kStackSlack);
}

TEST(Coro, AMillionAwaitsOfFinishedChildrenInALoopDoNotGrowTheStack) {
  auto loop = []() -> Task<std::int64_t> {
    std::int64_t sum = 0;
    for (int i = 0; i < 1'000'000; ++i) sum += co_await value(1);
    co_return sum;
  };
  EXPECT_EQ(weft::sync_wait(loop()), 1'000'000);
}

TEST(Coro, SyncWaitFromTheOnlyWorkerHelpsInsteadOfDeadlocking) {
  weft::test::Watchdog dog("sync_wait on a 1-worker pool");
  weft::ThreadPool pool(workers(1));
  auto hop = [](weft::ThreadPool& p) -> Task<int> {
    co_await p.schedule();  // queued behind the worker that waits for it
    auto inner = co_await weft::when_all(value(1), value(2));
    co_return std::get<0>(inner) + std::get<1>(inner);
  };
  auto f = pool.submit([&pool, &hop] { return weft::sync_wait(hop(pool)); });
  EXPECT_EQ(f.get(), 3);
}

TEST(Coro, SpawnRunsOnThePoolAndCancelDestroysAnUnstartedFrame) {
  weft::test::Watchdog dog("spawn");
  weft::ThreadPool pool(workers(1));
  auto where = [](weft::ThreadPool& p) -> Task<bool> { co_return p.is_worker(); };
  auto on_pool = pool.spawn(where(pool));
  // get() could take the queued start back and run it here, as it does any
  // submitted task; get_remote() leaves it to the pool.
  EXPECT_TRUE(weft::detail::get_remote(on_pool));

  std::atomic<int> ran{0};
  auto body = [](Counted c) -> Task<int> { co_return c(); };
  {
    weft::test::Gate gate(pool, 1);
    auto f = pool.spawn(body(Counted(&ran)));
    EXPECT_EQ(Counted::live.load(), 1);
    ASSERT_TRUE(f.cancel());
    EXPECT_EQ(Counted::live.load(), 0);
    EXPECT_THROW(f.get(), weft::cancelled);
  }
  pool.wait_idle();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_THROW((void)pool.spawn(Task<int>{}), std::invalid_argument);
}

TEST(Coro, ADroppedSpawnedFutureStillRunsTheTaskAndFreesItsFrame) {
  weft::ThreadPool pool(workers(2));
  std::atomic<int> ran{0};
  auto body = [](weft::ThreadPool& p, Counted c) -> Task<> {
    co_await p.schedule();
    c();
  };
  for (int i = 0; i < 100; ++i) (void)pool.spawn(body(pool, Counted(&ran)));
  pool.wait_idle();
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(Counted::live.load(), 0);
}

Task<std::int64_t> fib(int n) {
  if (n < 2) co_return n;
  auto [a, b] = co_await weft::when_all(fib(n - 1), fib(n - 2));
  co_return a + b;
}

TEST(Coro, WhenAllRunsChildrenInParallelOnThePool) {
  weft::test::Watchdog dog("when_all");
  weft::ThreadPool pool(workers(2));
  auto root = [](weft::ThreadPool& p) -> Task<std::int64_t> {
    co_await p.schedule();
    co_return co_await fib(20);
  };
  EXPECT_EQ(pool.spawn(root(pool)).get(), 6765);

  // Both children must be running at once for either to finish.
  std::atomic<int> arrived{0};
  auto meet = [](weft::ThreadPool& p, std::atomic<int>* n) -> Task<int> {
    co_await p.schedule();
    n->fetch_add(1);
    while (n->load() < 2) std::this_thread::yield();
    co_return 1;
  };
  auto both = [&]() -> Task<int> {
    co_await pool.schedule();
    auto [a, b] = co_await weft::when_all(meet(pool, &arrived), meet(pool, &arrived));
    co_return a + b;
  };
  EXPECT_EQ(weft::sync_wait(both()), 2);
}

// A tree of when_all children counts the calls that ran on a worker of
// the pool the root was started on; every call must.
Task<std::int64_t> counted_fib(int n, weft::ThreadPool* pool, std::atomic<std::int64_t>* off) {
  if (weft::ThreadPool::current() != pool) off->fetch_add(1, std::memory_order_relaxed);
  if (n < 2) co_return n;
  auto [a, b] = co_await weft::when_all(counted_fib(n - 1, pool, off), counted_fib(n - 2, pool, off));
  co_return a + b;
}

TEST(Coro, EveryCallOfASpawnedTreeRunsOnItsPool) {
  weft::test::Watchdog dog("where a spawned tree runs");
  weft::ThreadPool pool(workers(2));
  std::atomic<std::int64_t> off{0};
  EXPECT_EQ(pool.spawn(counted_fib(18, &pool, &off)).get(), 2584);
  EXPECT_EQ(off.load(), 0) << "calls of pool.spawn(task) ran off the pool";
  EXPECT_EQ(weft::sync_wait(pool, counted_fib(18, &pool, &off)), 2584);
  EXPECT_EQ(off.load(), 0) << "calls of sync_wait(pool, task) ran off the pool";
  // Moved by schedule() onto a second pool: the children follow it there.
  weft::ThreadPool other(workers(2));
  auto hop = [](weft::ThreadPool& to, std::atomic<std::int64_t>* o) -> Task<std::int64_t> {
    co_await to.schedule();
    auto [a, b] = co_await weft::when_all(counted_fib(12, &to, o), counted_fib(11, &to, o));
    co_return a + b;
  };
  EXPECT_EQ(pool.spawn(hop(other, &off)).get(), 233);
  EXPECT_EQ(off.load(), 0) << "children of a task scheduled onto another pool ran elsewhere";
  // Awaiting another pool's future comes back to the task's own pool.
  auto away = [](weft::ThreadPool& home, weft::ThreadPool& elsewhere,
                 std::atomic<std::int64_t>* o) -> Task<std::int64_t> {
    const int n = co_await elsewhere.submit([] { return 12; });
    if (weft::ThreadPool::current() != &home) o->fetch_add(1);
    auto [a, b] = co_await weft::when_all(counted_fib(n, &home, o), counted_fib(n - 1, &home, o));
    co_return a + b;
  };
  EXPECT_EQ(pool.spawn(away(pool, other, &off)).get(), 233);
  EXPECT_EQ(off.load(), 0) << "a task that awaited another pool's future went on there";
}

// An awaiter that resumes the coroutine on a thread of its own and waits
// for that thread before await_suspend returns: by the time the thread
// that suspended the coroutine sees it suspended, it has finished.
struct FinishElsewhereFirst {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) const { std::thread([h] { h.resume(); }).join(); }
  void await_resume() const noexcept {}
};

Task<int> finished_elsewhere(int v) {
  co_await FinishElsewhereFirst{};
  co_return v;
}

// The owner's chain (weft/detail/exec/promise.hpp, Join): on one worker,
// child 0 finishes in place and the worker takes child 1 back off its
// deque and runs it in the same loop; child 1 suspends, and has finished
// on another thread — the last of the join — before the loop sees the
// suspension. The loop must then resume the parent itself.
TEST(Coro, WhenAllResumesTheParentWhenAChildInTheChainFinishedElsewhereFirst) {
  weft::test::Watchdog dog("a join whose last child finished while its owner's loop looked away");
  weft::ThreadPool pool(workers(1));
  auto root = [](weft::ThreadPool& p) -> Task<int> {
    co_await p.schedule();
    auto [a, b] = co_await weft::when_all(value(1), finished_elsewhere(2));
    auto [c, d, e] = co_await weft::when_all(finished_elsewhere(4), value(8), finished_elsewhere(16));
    // Nested: the inner join's children in the outer's chain.
    auto inner = [](int k) -> Task<int> {
      auto [x, y] = co_await weft::when_all(value(k), finished_elsewhere(k));
      co_return x + y;
    };
    auto [f, g] = co_await weft::when_all(inner(32), inner(64));
    co_return a + b + c + d + e + f + g;
  };
  EXPECT_EQ(pool.spawn(root(pool)).get(), 1 + 2 + 4 + 8 + 16 + 64 + 128);
  EXPECT_EQ(weft::sync_wait(pool, root(pool)), 1 + 2 + 4 + 8 + 16 + 64 + 128);
}

TEST(Coro, WhenAllGivesMonostateForVoidAndVectorsInOrder) {
  weft::ThreadPool pool(workers(2));
  auto mixed = []() -> Task<int> {
    auto [x, none] = co_await weft::when_all(value(3), nothing());
    static_assert(std::is_same_v<decltype(none), std::monostate>);
    co_return x;
  };
  EXPECT_EQ(weft::sync_wait(mixed()), 3);

  auto many = []() -> Task<std::vector<int>> {
    std::vector<Task<int>> ts;
    for (int i = 0; i < 100; ++i) ts.push_back(value(i));
    co_return co_await weft::when_all(std::move(ts));
  };
  const std::vector<int> got = weft::sync_wait(many());
  ASSERT_EQ(got.size(), 100U);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i);

  auto voids = []() -> Task<int> {
    std::vector<Task<>> ts;
    ts.push_back(nothing());
    ts.push_back(nothing());
    co_await weft::when_all(std::move(ts));
    co_await weft::when_all(std::vector<Task<>>{});
    co_return 1;
  };
  EXPECT_EQ(weft::sync_wait(voids()), 1);
}

TEST(Coro, WhenAllRethrowsTheFirstFailureAfterEveryChildEnds) {
  weft::ThreadPool pool(workers(2));
  std::atomic<int> finished{0};
  auto slow_ok = [](weft::ThreadPool& p, std::atomic<int>* n) -> Task<int> {
    co_await p.schedule();
    n->fetch_add(1);
    co_return 1;
  };
  auto fail = [](const char* what) -> Task<int> {
    throw std::runtime_error(what);
    co_return 0;
  };
  auto root = [&]() -> Task<std::string> {
    try {
      co_await weft::when_all(slow_ok(pool, &finished), fail("first"), fail("second"));
    } catch (const std::runtime_error& e) {
      co_return e.what();
    }
    co_return "none";
  };
  EXPECT_EQ(weft::sync_wait(root()), "first");
  EXPECT_EQ(finished.load(), 1);
  EXPECT_THROW((void)weft::when_all(value(1), Task<int>{}), std::invalid_argument);
}

TEST(Coro, ATaskReadsTheStopTokenItWasGivenAndChildrenInheritIt) {
  auto child = []() -> Task<bool> { co_return (co_await weft::current_stop_token()).stop_requested(); };
  auto parent = [&child]() -> Task<std::tuple<bool, bool, bool>> {
    const bool own = (co_await weft::current_stop_token()).stop_requested();
    const bool awaited = co_await child();
    auto [joined] = co_await weft::when_all(child());
    co_return std::make_tuple(own, awaited, joined);
  };
  std::stop_source src;
  src.request_stop();
  Task<std::tuple<bool, bool, bool>> t = parent();
  t.set_stop_token(src.get_token());
  EXPECT_EQ(weft::sync_wait(std::move(t)), std::make_tuple(true, true, true));

  EXPECT_FALSE(weft::sync_wait(child()));  // none given: a token that never stops
}

}  // namespace
