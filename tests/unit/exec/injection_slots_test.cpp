// Injection slots (weft/detail/exec/injection_slots.hpp): the bits that lead
// thieves to the slots that may hold work, and slots given back by exiting
// threads and reused (docs/design/pool.md, "Injection slots").
#include "weft/detail/exec/injection_slots.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "watchdog.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using weft::detail::InjectionSlots;
using weft::detail::Source;
using weft::detail::Steal;
using weft::detail::TaskNode;

void no_op(TaskNode*) noexcept {}
TaskNode make_task() { return TaskNode{no_op, no_op}; }

// A steal of one task at most (max = 1), as a single-task thief would.
Steal steal_one(InjectionSlots& slots, std::uint64_t start, TaskNode*& out, bool& rearmed, bool clear) {
  std::int64_t taken = 0;
  const Steal r = slots.steal(start, &out, 1, taken, rearmed, clear);
  if (r == Steal::success) {
    EXPECT_EQ(taken, 1);
  }
  return r;
}

// The slots any_marked() visits.
std::vector<const Source*> marked(const InjectionSlots& slots) {
  std::vector<const Source*> seen;
  slots.any_marked([&](const Source& s) {
    seen.push_back(&s);
    return false;
  });
  return seen;
}

TEST(InjectionSlots, ReleasedSlotsAreReusedBeforeNewOnes) {
  InjectionSlots slots;
  EXPECT_EQ(slots.acquire(), 0);
  EXPECT_EQ(slots.acquire(), 1);
  EXPECT_EQ(slots.acquire(), 2);
  slots.release(1);
  EXPECT_EQ(slots.acquire(), 1);
  EXPECT_EQ(slots.acquire(), 3);
}

TEST(InjectionSlots, PushedCountsSurviveRelease) {
  InjectionSlots slots;
  const int a = slots.acquire();
  const int b = slots.acquire();
  slots.source(a).pushed.store(5, std::memory_order_relaxed);
  slots.source(b).pushed.store(7, std::memory_order_relaxed);
  slots.release(a);
  EXPECT_EQ(slots.pushed(), 12u);  // a released slot's pushes still count for wait_idle()
}

TEST(InjectionSlots, OnlyMarkedSlotsAreVisited) {
  InjectionSlots slots;
  std::vector<int> ids;
  for (int i = 0; i < 200; ++i) ids.push_back(slots.acquire());  // four groups
  EXPECT_TRUE(marked(slots).empty());
  TaskNode t = make_task();
  slots.source(ids[130]).deque.push(&t);
  EXPECT_TRUE(slots.mark(ids[130]));
  EXPECT_FALSE(slots.mark(ids[130]));  // already shown: nothing to set
  ASSERT_EQ(marked(slots), std::vector<const Source*>{&slots.source(ids[130])});

  TaskNode* out = nullptr;
  bool rearmed = false;
  EXPECT_EQ(steal_one(slots, 7, out, rearmed, true), Steal::success);
  EXPECT_EQ(out, &t);
  EXPECT_FALSE(rearmed);
  // Still marked: the thief has not seen the slot empty yet.
  EXPECT_EQ(marked(slots).size(), 1u);
  EXPECT_EQ(steal_one(slots, 7, out, rearmed, true), Steal::empty);
  EXPECT_FALSE(rearmed);
  EXPECT_TRUE(marked(slots).empty());  // found empty: the bit (and its group's) cleared
}

TEST(InjectionSlots, ALookThatDoesNotClearLeavesTheBits) {
  InjectionSlots slots;
  const int a = slots.acquire();
  TaskNode t = make_task();
  slots.source(a).deque.push(&t);
  slots.mark(a);
  TaskNode* out = nullptr;
  bool rearmed = false;
  EXPECT_EQ(steal_one(slots, 0, out, rearmed, false), Steal::success);
  EXPECT_EQ(steal_one(slots, 0, out, rearmed, false), Steal::empty);
  EXPECT_EQ(marked(slots).size(), 1u);  // stale, costs a look
  EXPECT_FALSE(slots.mark(a));          // the next push finds its bit set: one load
  EXPECT_EQ(steal_one(slots, 0, out, rearmed, true), Steal::empty);
  EXPECT_TRUE(marked(slots).empty());
  EXPECT_FALSE(rearmed);
}

TEST(InjectionSlots, EveryStartFindsEveryMarkedSlot) {
  InjectionSlots slots;
  std::vector<int> ids;
  for (int i = 0; i < 130; ++i) ids.push_back(slots.acquire());
  std::vector<TaskNode> tasks(3, make_task());
  const int picked[] = {0, 64, 129};
  for (int k = 0; k < 3; ++k) {
    slots.source(ids[static_cast<std::size_t>(picked[k])]).deque.push(&tasks[static_cast<std::size_t>(k)]);
    slots.mark(ids[static_cast<std::size_t>(picked[k])]);
  }
  for (std::uint64_t start : {0ull, 1ull, 63ull, 64ull * 5 + 3, 0x9e3779b97f4a7c15ull}) {
    std::vector<TaskNode*> got;
    TaskNode* out = nullptr;
    bool rearmed = false;
    while (steal_one(slots, start, out, rearmed, true) == Steal::success) got.push_back(out);
    ASSERT_EQ(got.size(), 3u) << "start " << start;
    for (int k = 0; k < 3; ++k) {
      const auto i = static_cast<std::size_t>(picked[k]);
      slots.source(ids[i]).deque.push(&tasks[static_cast<std::size_t>(k)]);
      slots.mark(ids[i]);
    }
  }
}

// A thief takes half of a slot's tasks, rounded up, at most what it asks
// for, oldest first; the slot keeps its bit while it holds any.
TEST(InjectionSlots, AThiefTakesABatchOfHalfTheSlot) {
  InjectionSlots slots;
  const int a = slots.acquire();
  std::vector<TaskNode> tasks(10, make_task());
  for (TaskNode& t : tasks) slots.source(a).deque.push(&t);
  slots.mark(a);
  std::array<TaskNode*, 16> out{};
  std::int64_t taken = 0;
  bool rearmed = false;
  ASSERT_EQ(slots.steal(0, out.data(), 16, taken, rearmed, true), Steal::success);
  ASSERT_EQ(taken, 5);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(out[i], &tasks[i]);
  ASSERT_EQ(slots.steal(0, out.data(), 2, taken, rearmed, true), Steal::success);
  ASSERT_EQ(taken, 2);
  EXPECT_EQ(out[0], &tasks[5]);
  EXPECT_EQ(marked(slots).size(), 1u);
  EXPECT_EQ(slots.source(a).deque.size(), 3);
}

TEST(InjectionSlots, TooManyHeldAtOnceIsAnErrorNamingTheLimit) {
  InjectionSlots slots;
  for (int i = 0; i < InjectionSlots::kMaxSlots; ++i) slots.acquire();
  try {
    slots.acquire();
    FAIL() << "acquire() past the limit returned";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("4096"), std::string::npos) << e.what();
  }
  slots.release(17);
  EXPECT_EQ(slots.acquire(), 17);
}

// More threads than a pool has slots, one after another: each gives its
// slot back when it exits, so none runs out.
TEST(InjectionSlots, ExitingThreadsGiveTheirSlotsBack) {
  weft::test::Watchdog dog("threads submitting one after another");
  weft::ThreadPool pool(weft::PoolOptions{.workers = 2});
  std::atomic<int> ran{0};
  constexpr int kThreads = InjectionSlots::kMaxSlots + 100;
  for (int i = 0; i < kThreads; i += 4) {
    std::vector<std::thread> group;
    for (int k = 0; k < 4; ++k)
      group.emplace_back([&] { pool.post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); }); });
    for (auto& t : group) t.join();
  }
  pool.wait_idle();
  EXPECT_EQ(ran.load(std::memory_order_relaxed), kThreads);  // relaxed: after wait_idle()
}

// A task still queued in a slot whose thread exited runs once, also after a
// new thread took the slot over.
TEST(InjectionSlots, TasksLeftInAReleasedSlotRunOnce) {
  weft::test::Watchdog dog("tasks left in released slots");
  weft::ThreadPool pool(weft::PoolOptions{.workers = 1});
  std::atomic<bool> open{false};
  pool.post([&open] { open.wait(false, std::memory_order_acquire); });  // acquire: a gate only
  std::atomic<int> left{0};
  std::atomic<int> later{0};
  std::thread([&] {
    for (int i = 0; i < 10; ++i) pool.post([&left] { left.fetch_add(1, std::memory_order_relaxed); });
  }).join();
  std::thread([&] {
    for (int i = 0; i < 10; ++i) pool.post([&later] { later.fetch_add(1, std::memory_order_relaxed); });
  }).join();
  open.store(true, std::memory_order_release);  // release: pairs with the gate's acquire
  open.notify_all();
  pool.wait_idle();
  EXPECT_EQ(left.load(std::memory_order_relaxed), 10);  // relaxed: after wait_idle()
  EXPECT_EQ(later.load(std::memory_order_relaxed), 10);
}

// Posts from a thread_local destructor that runs after the thread gave its
// slots back: the post borrows a slot for itself and gives it back at once.
struct PostAtExit {
  weft::ThreadPool* pool = nullptr;
  std::atomic<int>* ran = nullptr;
  ~PostAtExit() {
    if (pool != nullptr) pool->post([r = ran] { r->fetch_add(1, std::memory_order_relaxed); });
  }
};

TEST(InjectionSlots, PostFromALateThreadLocalDestructorRuns) {
  weft::test::Watchdog dog("a post from a thread_local destructor");
  weft::ThreadPool pool(weft::PoolOptions{.workers = 1});
  std::atomic<int> ran{0};
  std::thread([&] {
    // Built before the thread's first post builds its slot list, so
    // destroyed after it.
    thread_local PostAtExit at_exit;
    at_exit.pool = &pool;
    at_exit.ran = &ran;
    pool.post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
  }).join();
  pool.wait_idle();
  EXPECT_EQ(ran.load(std::memory_order_relaxed), 2);  // relaxed: after wait_idle()
}

// A thread that outlives the pool it submitted to gives its slot back to
// nothing: no dangling pointer (the sanitizer builds check).
TEST(InjectionSlots, ThreadOutlivingThePoolExitsCleanly) {
  std::atomic<int> ran{0};
  std::atomic<bool> pool_gone{false};
  auto pool = std::make_unique<weft::ThreadPool>(weft::PoolOptions{.workers = 1});
  std::atomic<bool> posted{false};
  std::thread t([&] {
    pool->post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
    posted.store(true, std::memory_order_release);  // release: pairs with the main thread's acquire
    posted.notify_one();
    pool_gone.wait(false, std::memory_order_acquire);  // acquire: the pool is destroyed
    // A second pool, after the first one's id: a fresh slot, not the stale cache.
    weft::ThreadPool other(weft::PoolOptions{.workers = 1});
    other.post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
    other.wait_idle();
  });
  posted.wait(false, std::memory_order_acquire);  // acquire: the post happened
  pool.reset();
  pool_gone.store(true, std::memory_order_release);  // release: pairs with the thread's acquire
  pool_gone.notify_one();
  t.join();
  EXPECT_EQ(ran.load(std::memory_order_relaxed), 2);  // relaxed: after the destruction and the join
}

// A wait from a thread whose last pool is gone: the future's task belongs
// to another pool, so the look for it in this thread's own slot must not
// touch the destroyed pool's memory (ASan reports it if it does).
TEST(InjectionSlots, WaitAfterTheLastPoolPushedToIsGone) {
  weft::test::Watchdog dog("wait after the last pool is gone");
  std::optional<weft::ThreadPool> first(std::in_place, weft::PoolOptions{.workers = 1});
  EXPECT_EQ(first->submit([] { return 1; }).get(), 1);  // this thread now holds a slot of `first`
  first.reset();
  weft::ThreadPool second(weft::PoolOptions{.workers = 1});
  std::atomic<bool> go{false};
  std::optional<weft::Future<int>> f;
  // Queued by another thread: not in this thread's slot, and still running
  // when get() looks for it.
  std::thread([&] {
    f.emplace(second.submit([&go] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();  // acquire: the setter's store
      return 7;
    }));
  }).join();
  std::thread release([&go] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    go.store(true, std::memory_order_release);  // release: seen by the task's acquire
  });
  EXPECT_EQ(f->get(), 7);
  release.join();
}

}  // namespace
