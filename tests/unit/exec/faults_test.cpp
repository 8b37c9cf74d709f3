// Failures on purpose: threads that cannot be created, allocations that
// fail inside tasks. Every one must reach the caller as an exception, leak
// nothing (the ASan build checks), and leave the pool usable.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "sanitizers.hpp"
#include "throws.hpp"
#include "watchdog.hpp"
#include "weft/detail/exec/fault_injection.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "future_support.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/task_graph.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

std::atomic<int> g_fail_at{-1};

void fail_at_hook(int index) {
  if (index == g_fail_at.load()) throw std::system_error(EAGAIN, std::generic_category(), "pthread_create");
}

TEST(PoolFaults, ThreadCreationFailureIsAClearErrorAndLeaksNothing) {
  weft::test::Watchdog dog("thread creation failure");
  for (int at : {0, 1, 3}) {
    g_fail_at = at;
    weft::detail::g_worker_start_hook = &fail_at_hook;
    const std::string which = "could not start worker " + std::to_string(at + 1) + " of 4";
    EXPECT_TRUE(weft::test::throws_containing<std::runtime_error>([] { weft::ThreadPool pool(workers(4)); },
                                                                  {which, "pthread_create"}))
        << "a pool of 4 whose worker " << at + 1 << " cannot start";
    weft::detail::g_worker_start_hook = nullptr;
  }
  // Nothing was left half-built: a normal pool works afterwards.
  weft::ThreadPool pool(workers(2));
  auto f = pool.submit([] { return 7; });
  EXPECT_EQ(f.get(), 7);
}

// The real thing: a child process that may not create threads. As root the
// limit is not enforced, so the child first becomes an unprivileged user.
TEST(PoolFaults, RlimitNprocMakesPoolConstructionFailCleanly) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    if (getuid() == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);  // nobody
    }
    const rlimit lim{1, 1};
    if (setrlimit(RLIMIT_NPROC, &lim) != 0) _exit(4);
    try {
      weft::ThreadPool pool(workers(4));
      _exit(1);  // it should not have started
    } catch (const std::runtime_error& e) {
      _exit(std::string(e.what()).find("could not start worker 1 of 4") != std::string::npos ? 0 : 2);
    } catch (...) {
      _exit(5);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "cannot switch to user nobody to make RLIMIT_NPROC bite";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the pool started; 2: wrong message; 4: setrlimit failed; 5: wrong exception type";
}

TEST(PoolFaults, BadAllocInsideTasksReachesTheWaiter) {
  weft::test::Watchdog dog("bad_alloc in tasks");
  weft::ThreadPool pool(workers(2));
  auto f = pool.submit([]() -> int { throw std::bad_alloc(); });
  EXPECT_THROW(f.get(), std::bad_alloc);
  auto g = pool.submit([]() -> int { throw std::bad_alloc(); });
  EXPECT_THROW(weft::detail::get_remote(g), std::bad_alloc);

  weft::TaskGroup group(pool);
  for (int i = 0; i < 10; ++i)
    group.run([i] {
      if (i == 4) throw std::bad_alloc();
    });
  EXPECT_THROW(group.wait(), std::bad_alloc);

  EXPECT_THROW(weft::parallel_for(pool, 0, 1000,
                                  [](int i) {
                                    if (i == 777) throw std::bad_alloc();
                                  }),
               std::bad_alloc);

  pool.post([] { throw std::bad_alloc(); });
  EXPECT_THROW(pool.wait_idle(), std::bad_alloc);

  // Still usable.
  std::atomic<int> n{0};
  weft::parallel_for(pool, 0, 100, [&](int) { n.fetch_add(1); });
  EXPECT_EQ(n.load(), 100);
  EXPECT_EQ(pool.submit([] { return 1; }).get(), 1);
}

// A worker's fork that cannot grow its deque (out of memory): it queues
// none of its tasks (the deque grows before it pushes), runs none of its
// functions, the error reaches the caller, and the pool stays usable (its
// count of pushed tasks is right again: wait_idle() returns).
TEST(PoolFaults, AForkWhoseDequeCannotGrowRunsNothingAndThrows) {
  weft::test::Watchdog dog("deque growth failure");
  // One worker: no thief takes a task meanwhile, so the deque's 256 slots
  // cannot hold the fork's tasks and it must grow.
  weft::ThreadPool pool(workers(1));
  // More than a fresh deque's 256 slots, and more than the frame holds.
  constexpr std::size_t kN = 600;
  static_assert(kN > weft::kParallelInvokeInFrame + 1);
  std::vector<std::atomic<int>> ran(kN);
  // seq_cst (the default) on the hook: set before the submit whose task
  // reads it and cleared after that task's failure came back; any order
  // would do, the submit and get order them.
  struct Hook {
    Hook() { weft::detail::g_deque_grow_hook.store(&fail); }
    ~Hook() { weft::detail::g_deque_grow_hook.store(nullptr); }
    static void fail() { throw std::bad_alloc(); }
  };
  {
    const Hook hook;
    auto fork = pool.submit([&] { weft::parallel_invoke_n(pool, kN, [&](std::size_t i) { ran[i].fetch_add(1); }); });
    // get_remote(): the worker runs it (get() could run it here, off the pool).
    EXPECT_THROW(weft::detail::get_remote(fork), std::bad_alloc);
  }
  pool.wait_idle();
  for (std::size_t i = 0; i < kN; ++i) EXPECT_EQ(ran[i].load(), 0) << "index " << i;

  std::atomic<int> n{0};
  auto again = pool.submit([&] { weft::parallel_invoke_n(pool, kN, [&](std::size_t) { n.fetch_add(1); }); });
  weft::detail::get_remote(again);
  EXPECT_EQ(n.load(), static_cast<int>(kN));
  pool.wait_idle();
}

// An outside thread that cannot set up its injection deque (out of memory,
// a failed mutex): each kind of push discards its task exactly once — a
// second discard would release a future's block twice (ASan in CI reports
// it) or end a graph's run twice — and says so to whoever waits.
TEST(PoolFaults, AnOutsidePushThatCannotGetItsDequeDiscardsItsTaskOnce) {
  weft::test::Watchdog dog("injector failure");
  weft::ThreadPool pool(workers(1));
  struct Hook {
    Hook() {
      weft::detail::g_injector_hook.store([] { throw std::bad_alloc(); });
    }
    ~Hook() { weft::detail::g_injector_hook.store(nullptr); }
  };
  const long live = weft::test::Counted::live.load();
  std::atomic<int> runs{0};
  std::atomic<int> n{0};
  weft::TaskGraph graph;
  graph.emplace([&] { n.fetch_add(1); });
  weft::Future<int> ready = pool.submit([] { return 1; });
  ready.wait();  // done: then() below pushes its continuation from this thread
  {
    const Hook hook;
    EXPECT_THROW((void)pool.submit(weft::test::Counted(&runs)), std::bad_alloc);
    EXPECT_EQ(weft::test::Counted::live.load(), live) << "the task's callable destroyed once";
    // A continuation queued by this thread: cancelled, as a refused one is.
    EXPECT_THROW(std::move(ready).then([](int x) { return x + 1; }).get(), weft::cancelled);
    // A graph run started by this thread: the run fails, once, saying why.
    EXPECT_TRUE(weft::test::throws_containing<std::runtime_error>([&] { graph.run(pool).get(); },
                                                                  {"could not be queued"}));
  }
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(n.load(), 0);
  graph.run(pool).get();  // the hook gone, all works again
  EXPECT_EQ(n.load(), 1);
  EXPECT_EQ(pool.submit([] { return 2; }).get(), 2);
}

// A real allocation failure inside a task: a request far beyond the address
// space makes operator new throw; the task's caller sees it.
TEST(PoolFaults, RealAllocationFailureInATask) {
  if (weft::test::kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reports an impossible allocation instead of throwing bad_alloc";
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([] {
    // A direct call to operator new, which (unlike a new-expression) the
    // compiler may not elide.
    void* volatile p = ::operator new(std::size_t{1} << 62);
    ::operator delete(p);
    return 0;
  });
  EXPECT_THROW(weft::detail::get_remote(f), std::bad_alloc);
}

}  // namespace
