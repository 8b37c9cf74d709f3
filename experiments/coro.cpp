#include "weft/xp/coro.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <future>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "kernels.hpp"
#include "peer_support.hpp"
#include "weft/detail/exec/on_workers.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/exec/when_all.hpp"
#include "weft/sync/event.hpp"
#include "weft/xp/fib.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

#ifdef WEFT_HAVE_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
// Asio's awaitables need the compiler's C++20 coroutines as Boost 1.74
// detects them (g++ >= 10 in C++20 mode; clang only with a library that has
// <experimental/coroutine>): without them the hop has no asio variant.
#ifdef BOOST_ASIO_HAS_CO_AWAIT
#define WEFT_XP_HAVE_ASIO_AWAIT 1
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#endif
#endif

namespace weft::xp {

namespace {

#ifdef WEFT_XP_HAVE_ASIO_AWAIT
constexpr bool kHaveAsioAwait = true;
#define WEFT_XP_IF_ASIO_AWAIT(runner) runner
#else
constexpr bool kHaveAsioAwait = false;
#define WEFT_XP_IF_ASIO_AWAIT(runner) nullptr
#endif
constexpr harness::Peer kAsioAwait{"libboost-dev (Boost.Asio with C++20 awaitables for this compiler)",
                                   kHaveAsioAwait};

// ---- where the work ran -----------------------------------------------------

// Which threads ran a variant's tasks: how many, and how many tasks ran on
// the thread that started the work. A peer that runs work inline on its
// caller does other work than one that hands all of it to its pool; each
// row's note says which it was. Only the warm-up run looks (a thread-id
// compare, a thread-local compare and a lock per thread, some 50
// instructions a task); the timed runs pay one predictable branch.
class Where {
 public:
  // Before the run: whether this one looks.
  void look(bool on) noexcept { on_ = on; }
  // On the thread that starts the work, before its first task exists (the
  // task's queueing publishes run_ and caller_ to the threads that run it).
  void start() {
    caller_ = std::this_thread::get_id();
    run_ = next_run_.fetch_add(1, std::memory_order_relaxed) + 1;  // relaxed: a unique id, nothing published
    threads_.clear();
  }
  // In each task.
  void ran() {
    if (!on_) return;
    const std::thread::id me = std::this_thread::get_id();
    // relaxed, a load and a store: only the caller writes it; it is read
    // after the run joined.
    if (me == caller_) on_caller_.store(on_caller_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (t_run_ != run_) {
      t_run_ = run_;
      const std::lock_guard<std::mutex> lock(m_);
      threads_.insert(me);
    }
  }
  // After the run joined: `tasks` ran in it.
  void finish(std::int64_t tasks) {
    if (!on_) return;
    tasks_ += tasks;
    on_caller_total_ += on_caller_.exchange(0, std::memory_order_relaxed);  // relaxed: the run has joined
    max_threads_ = std::max(max_threads_, threads_.size());
  }
  // Hops that resumed on another thread than the one before (hop only).
  void moved(std::int64_t n) noexcept {
    if (on_) moved_ += n;
  }

  // "ran on 2 threads; 48% on the starting thread".
  std::string text(const char* starter) const {
    if (tasks_ == 0) return {};
    const double pct = 100.0 * static_cast<double>(on_caller_total_) / static_cast<double>(tasks_);
    return "in the warm-up run: ran on " + std::to_string(max_threads_) + (max_threads_ == 1 ? " thread; " : " threads; ") +
           std::to_string(static_cast<int>(pct + 0.5)) + "% on " + starter;
  }
  std::string moved_text() const {
    return std::to_string(moved_) + " of " + std::to_string(tasks_) + " hops of the warm-up run resumed on another thread";
  }

 private:
  static inline std::atomic<std::uint64_t> next_run_{0};
  static inline thread_local std::uint64_t t_run_ = 0;
  bool on_ = false;
  std::thread::id caller_;
  std::uint64_t run_ = 0;
  std::atomic<std::int64_t> on_caller_{0};
  std::mutex m_;
  std::set<std::thread::id> threads_;
  std::int64_t tasks_ = 0;
  std::int64_t on_caller_total_ = 0;
  std::size_t max_threads_ = 0;
  std::int64_t moved_ = 0;
};

struct Run {
  const CoroParams* p = nullptr;
  int threads = 0;
  Where* where = nullptr;
};
// One sample: seconds for the whole workload.
using RunFn = double (*)(const Run&);

double since(std::int64_t t0) { return static_cast<double>(wall_ns() - t0) / 1e9; }

// Runs root(pool) on a worker of a fresh pool of `threads`, the workers up
// first, and returns what it returns (its seconds); the calling thread waits
// without taking the root (detail::on_workers, as weft's algorithms do).
template <class Root>
double on_worker(int threads, Root root) {
  ThreadPool pool(PoolOptions{.workers = threads});
  pool.post([] {});
  pool.wait_idle();
  return detail::on_workers(pool, [&] { return root(pool); });
}

[[noreturn]] void wrong(std::string_view what, std::string_view variant, const std::string& how) {
  throw std::runtime_error("coro: " + std::string(what) + ": " + std::string(variant) + " " + how);
}

void check_sum(std::string_view variant, std::int64_t n, std::int64_t sum) {
  if (sum != n * (n - 1) / 2)
    wrong("fan-in", variant, "summed " + std::to_string(sum) + ", not " + std::to_string(n * (n - 1) / 2));
}

// ---- fib(n), no cutoff ------------------------------------------------------

// fib(n) by iteration: the answer every variant is checked against.
std::int64_t fib_value(int n) {
  std::int64_t a = 0, b = 1;
  for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
  return a;
}

Task<std::int64_t> fib_task(int n, Where& w) {
  if (n < 2) co_return n;
  w.ran();
  auto [a, b] = co_await weft::when_all(fib_task(n - 1, w), fib_task(n - 2, w));
  co_return a + b;
}

// fork-join with a group (weft's TaskGroup or oneTBB's task_group, made by
// `make`): fib(n-1) is run() in the group, fib(n-2) here.
template <class Make>
std::int64_t fib_forked(const Make& make, int n, Where& w) {
  if (n < 2) return n;
  w.ran();
  std::int64_t a = 0;
  auto g = make();
  g.run([&] { a = fib_forked(make, n - 1, w); });
  const std::int64_t b = fib_forked(make, n - 2, w);
  g.wait();
  return a + b;
}

// One timed fib by `compute` on the thread that calls it, checked.
template <class Compute>
double timed_fib(const Run& r, std::string_view variant, Compute compute) {
  r.where->start();
  const std::int64_t t0 = wall_ns();
  const std::int64_t v = compute();
  const double s = since(t0);
  if (v != fib_value(r.p->fib_n))
    wrong("fib", variant, "gave " + std::to_string(v) + ", not " + std::to_string(fib_value(r.p->fib_n)));
  return s;
}

double fib_weft_task(const Run& r) {
  return on_worker(r.threads, [&](ThreadPool&) {
    // sync_wait on a worker: the root runs here, its wait runs queued tasks.
    return timed_fib(r, "weft-task", [&] { return sync_wait(fib_task(r.p->fib_n, *r.where)); });
  });
}

double fib_weft_taskgroup(const Run& r) {
  return on_worker(r.threads, [&](ThreadPool& pool) {
    return timed_fib(r, "weft-taskgroup",
                     [&] { return fib_forked([&pool] { return TaskGroup(pool); }, r.p->fib_n, *r.where); });
  });
}

#ifdef WEFT_HAVE_TBB
double fib_tbb_run(const Run& r) {
  return in_tbb_arena(r.threads, [&] {
    return timed_fib(r, "tbb",
                     [&] { return fib_forked([] { return oneapi::tbb::task_group(); }, r.p->fib_n, *r.where); });
  });
}
#endif

// ---- hop: onto the pool and back ------------------------------------------

struct Hops {
  double seconds = 0;
  std::int64_t moved = 0;
};

// Counts a hop loop from its first hop on: the hops that landed on
// another thread, and the seconds until done().
class HopCount {
 public:
  explicit HopCount(Where& w) : w_(w) {}
  void hopped() {
    w_.ran();
    const std::thread::id now = std::this_thread::get_id();
    h_.moved += now != at_;
    at_ = now;
  }
  Hops done() {
    h_.seconds = since(t0_);
    return h_;
  }

 private:
  Where& w_;
  std::thread::id at_ = std::this_thread::get_id();
  Hops h_;
  std::int64_t t0_ = wall_ns();
};

Task<Hops> hop_task(ThreadPool& pool, std::int64_t hops, Where& w) {
  co_await pool.schedule();  // onto a worker: the hops start there
  HopCount count(w);
  for (std::int64_t i = 0; i < hops; ++i) {
    co_await pool.schedule();
    count.hopped();
  }
  co_return count.done();
}

double hop_weft_task(const Run& r) {
  ThreadPool pool(PoolOptions{.workers = r.threads});
  pool.post([] {});
  pool.wait_idle();
  r.where->start();
  const Hops h = sync_wait(hop_task(pool, r.p->hops, *r.where));
  r.where->moved(h.moved);
  return h.seconds;
}

#ifdef WEFT_XP_HAVE_ASIO_AWAIT
namespace asio = boost::asio;

// As Asio's documentation writes a hop: co_await post(executor,
// use_awaitable) inside a coroutine that co_spawn started on the pool.
asio::awaitable<Hops> hop_asio_coroutine(asio::thread_pool& pool, std::int64_t hops, Where& w) {
  co_await asio::post(pool, asio::use_awaitable);  // as weft's first schedule()
  HopCount count(w);
  for (std::int64_t i = 0; i < hops; ++i) {
    co_await asio::post(pool, asio::use_awaitable);
    count.hopped();
  }
  co_return count.done();
}

double hop_asio(const Run& r) {
  asio::thread_pool pool(static_cast<std::size_t>(r.threads));
  r.where->start();
  std::future<Hops> f = asio::co_spawn(pool, hop_asio_coroutine(pool, r.p->hops, *r.where), asio::use_future);
  const Hops h = f.get();
  pool.join();
  r.where->moved(h.moved);
  return h.seconds;
}
#endif

// ---- fan-out / fan-in -------------------------------------------------------

// K fan-ins of n tasks by `one` (which returns the sum of 0..n-1), timed
// on the thread that starts them.
template <class One>
double fan_ins(const Run& r, std::string_view variant, One one) {
  r.where->start();
  const std::int64_t t0 = wall_ns();
  for (int k = 0; k < r.p->fan_ins; ++k) check_sum(variant, r.p->fan_in, one());
  return since(t0);
}

double fan_in_weft_future(const Run& r) {
  return on_worker(r.threads, [&](ThreadPool& pool) {
    return fan_ins(r, "weft-future", [&] {
      std::vector<Future<std::int64_t>> fs;
      fs.reserve(static_cast<std::size_t>(r.p->fan_in));
      for (std::int64_t i = 0; i < r.p->fan_in; ++i) fs.push_back(pool.submit([i, &r] {
        r.where->ran();
        return i;
      }));
      const std::vector<std::int64_t> v = weft::when_all(std::move(fs)).get();
      return std::accumulate(v.begin(), v.end(), std::int64_t{0});
    });
  });
}

Task<std::int64_t> tiny_task(std::int64_t i, Where& w) {
  w.ran();
  co_return i;
}

Task<std::int64_t> join_tiny(std::int64_t n, Where& w) {
  std::vector<Task<std::int64_t>> ts;
  ts.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) ts.push_back(tiny_task(i, w));
  const std::vector<std::int64_t> v = co_await weft::when_all(std::move(ts));
  co_return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}

double fan_in_weft_task(const Run& r) {
  return on_worker(r.threads, [&](ThreadPool&) {
    return fan_ins(r, "weft-task", [&] { return sync_wait(join_tiny(r.p->fan_in, *r.where)); });
  });
}

// run() + wait() of a group (weft's TaskGroup or oneTBB's task_group, made
// by `make`): each task writes its index into its slot.
template <class Make>
std::int64_t run_and_wait(std::vector<std::int64_t>& slots, Where& w, Make make) {
  auto g = make();
  for (std::size_t i = 0; i < slots.size(); ++i) g.run([i, &slots, &w] {
    w.ran();
    slots[i] = static_cast<std::int64_t>(i);
  });
  g.wait();
  return std::accumulate(slots.begin(), slots.end(), std::int64_t{0});
}

double fan_in_weft_taskgroup(const Run& r) {
  return on_worker(r.threads, [&](ThreadPool& pool) {
    std::vector<std::int64_t> slots(static_cast<std::size_t>(r.p->fan_in));
    return fan_ins(r, "weft-taskgroup", [&] {
      return run_and_wait(slots, *r.where, [&] { return TaskGroup(pool); });
    });
  });
}

// The group run() and wait()ed by the calling thread itself, outside the
// pool, as oneTBB's variant does from its arena slot: wait() takes the
// pool's seat when a worker is parked, so the caller is one of the P.
double fan_in_weft_taskgroup_caller(const Run& r) {
  ThreadPool pool(PoolOptions{.workers = r.threads});
  start_workers(pool);
  std::vector<std::int64_t> slots(static_cast<std::size_t>(r.p->fan_in));
  return fan_ins(r, "weft-taskgroup-caller", [&] {
    return run_and_wait(slots, *r.where, [&] { return TaskGroup(pool); });
  });
}

#ifdef WEFT_HAVE_TBB
double fan_in_tbb(const Run& r) {
  return in_tbb_arena(r.threads, [&] {
    std::vector<std::int64_t> slots(static_cast<std::size_t>(r.p->fan_in));
    return fan_ins(r, "tbb", [&] {
      return run_and_wait(slots, *r.where, [] { return oneapi::tbb::task_group(); });
    });
  });
}
#endif

#ifdef WEFT_HAVE_ASIO
// Boost 1.74 has no parallel_group: the fan-in is a count-down whose last
// handler sets a promise the calling thread waits on.
double fan_in_asio(const Run& r) {
  boost::asio::thread_pool pool(static_cast<std::size_t>(r.threads));
  std::vector<std::int64_t> slots(static_cast<std::size_t>(r.p->fan_in));
  const double s = fan_ins(r, "asio", [&] {
    std::atomic<std::size_t> left{slots.size()};
    std::promise<void> done;
    std::future<void> all = done.get_future();
    for (std::size_t i = 0; i < slots.size(); ++i) boost::asio::post(pool, [i, &slots, &left, &done, &r] {
      r.where->ran();
      slots[i] = static_cast<std::int64_t>(i);
      // acq_rel: release publishes this slot; the last one's acquire sees
      // every slot before it sets the promise (which the waiter acquires).
      if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) done.set_value();
    });
    all.wait();
    return std::accumulate(slots.begin(), slots.end(), std::int64_t{0});
  });
  pool.join();
  return s;
}
#endif

// ---- cancellation of queued tasks -------------------------------------------

// Every pool thread but the one that queues the group's tasks waits on the
// gate, so the tasks stay queued until cancel(); the gate opens right after.
struct Blockers {
  Event gate;
  std::atomic<int> blocked{0};
  void block() {
    blocked.fetch_add(1, std::memory_order_relaxed);  // relaxed: a count the starter polls
    gate.wait();
  }
  void until_blocked(int n) const {
    while (blocked.load(std::memory_order_relaxed) < n) std::this_thread::yield();  // relaxed: as block()
  }
};

void check_cancel(std::string_view variant, std::int64_t ran, bool said_cancelled) {
  if (ran != 0) wrong("cancel", variant, std::to_string(ran) + " tasks ran after all were queued and cancelled");
  if (!said_cancelled) wrong("cancel", variant, "wait() did not report the cancellation");
}

double cancel_weft_taskgroup(const Run& r) {
  ThreadPool pool(PoolOptions{.workers = r.threads});
  pool.post([] {});
  pool.wait_idle();
  Blockers b;
  for (int i = 1; i < r.threads; ++i) pool.post([&b] { b.block(); });
  b.until_blocked(r.threads - 1);
  const double seconds = detail::on_workers(pool, [&] {
    std::atomic<std::int64_t> ran{0};
    TaskGroup g{pool};
    // From a worker: the tasks go to its own deque, which no one can steal from.
    for (std::int64_t i = 0; i < r.p->cancel_tasks; ++i)
      g.run([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });  // relaxed: read after wait()
    const std::int64_t t0 = wall_ns();
    g.cancel();
    b.gate.set();
    bool said = false;
    try {
      g.wait();
    } catch (const cancelled&) {
      said = true;
    }
    const double s = since(t0);
    check_cancel("weft-taskgroup", ran.load(), said);
    return s;
  });
  // The blockers may still be on their way out of gate.wait(): they must be
  // gone before `b` is (the pool, declared first, outlives it).
  pool.wait_idle();
  return seconds;
}

#ifdef WEFT_HAVE_TBB
double cancel_tbb(const Run& r) {
  return in_tbb_arena(r.threads, [&] {
    Blockers b;
    oneapi::tbb::task_group held;
    // The arena's other slots are its workers: each takes one blocker.
    for (int i = 1; i < r.threads; ++i) held.run([&b] { b.block(); });
    b.until_blocked(r.threads - 1);
    std::atomic<std::int64_t> ran{0};
    oneapi::tbb::task_group g;
    for (std::int64_t i = 0; i < r.p->cancel_tasks; ++i)
      g.run([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });  // relaxed: read after wait()
    const std::int64_t t0 = wall_ns();
    g.cancel();
    b.gate.set();
    const bool said = g.wait() == oneapi::tbb::task_group_status::canceled;
    const double s = since(t0);
    held.wait();
    check_cancel("tbb", ran.load(), said);
    return s;
  });
}
#endif

// ---- the tables ---------------------------------------------------------------

// A variant of one workload, and what its row's note says of how it runs.
struct Entry {
  harness::Variant<RunFn> variant;
  std::string_view how;
};

const std::array<Entry, 3> kFib{{
    {{"weft-task", kBuiltIn, true, fib_weft_task},
     "Task: co_await when_all(fib(n-1), fib(n-2)), the first child in place, the second queued; the root is "
     "sync_wait()ed on a worker"},
    {{"weft-taskgroup", kBuiltIn, true, fib_weft_taskgroup},
     "TaskGroup: run(fib(n-1)), fib(n-2) in place, wait(); the root on a worker"},
    {{"tbb", kTbb, true, WEFT_XP_IF_TBB(fib_tbb_run)},
     "task_group: run(fib(n-1)), fib(n-2) in place, wait(); the root on the calling thread, one of the arena's "
     "slots"},
}};

const std::array<Entry, 2> kHop{{
    {{"weft-task", kBuiltIn, true, hop_weft_task},
     "a hop: co_await pool.schedule() on a worker, which pushes the awaiter (in the frame) on that worker's "
     "deque; the worker pops it, or the other steals it, and resumes the coroutine"},
    {{"asio", kAsioAwait, true, WEFT_XP_IF_ASIO_AWAIT(hop_asio)},
     "a hop: co_await asio::post(pool, use_awaitable) in an awaitable co_spawn()ed on an asio::thread_pool, "
     "which queues the resumption on the pool's queue for any of its threads"},
}};

const std::array<Entry, 6> kFanIn{{
    {{"weft-future", kBuiltIn, true, fan_in_weft_future},
     "pool.submit() of each from a worker, when_all(vector).get() there (get() runs queued tasks meanwhile)"},
    {{"weft-task", kBuiltIn, true, fan_in_weft_task},
     "co_await when_all(vector of Task) sync_wait()ed on a worker: the first child in place, the rest queued"},
    {{"weft-taskgroup", kBuiltIn, true, fan_in_weft_taskgroup},
     "TaskGroup run() of each from a worker, wait() there (it runs queued tasks)"},
    {{"weft-taskgroup-caller", kBuiltIn, true, fan_in_weft_taskgroup_caller},
     "TaskGroup run() of each from the calling thread (not a pool thread), wait() there: it takes the pool's "
     "seat when a worker is parked and runs queued tasks as one of the P"},
    {{"tbb", kTbb, true, WEFT_XP_IF_TBB(fan_in_tbb)},
     "task_group run() of each from the calling thread, one of the arena's slots, wait() there (it runs tasks)"},
    {{"asio", kAsio, true, WEFT_XP_IF_ASIO(fan_in_asio)},
     "asio::post() of each to an asio::thread_pool from the calling thread (not a pool thread); the last to "
     "count down sets a std::promise it waits on (Boost 1.74 has no parallel_group)"},
}};

const std::array<Entry, 2> kCancel{{
    {{"weft-taskgroup", kBuiltIn, true, cancel_weft_taskgroup},
     "run() from one worker into its own deque while every other worker waits on a gate, so all stay queued; "
     "cancel(), the gate opens, wait()"},
    {{"tbb", kTbb, true, WEFT_XP_IF_TBB(cancel_tbb)},
     "run() from the calling thread into its own task pool while the arena's workers wait on a gate, so all "
     "stay queued; cancel(), the gate opens, wait()"},
}};

// A workload: its variants, its metric, and how one sample's seconds
// become it (seconds * scale / per(p)).
struct Workload {
  std::string_view name;
  std::span<const Entry> entries;
  std::string_view metric;
  std::string_view unit;
  double scale;
  std::int64_t (*per)(const CoroParams& p);
  std::int64_t (*items)(const CoroParams& p);  // tasks, hops or spawns per sample (the row's items)
  const char* starter;                         // what "the starting thread" is, for the note
};

const std::array<Workload, 4> kWorkloads{{
    {"fib", kFib, "ns_per_spawn", "ns", 1e9, [](const CoroParams& p) { return fib_spawns(p.fib_n, 0); },
     [](const CoroParams& p) { return fib_spawns(p.fib_n, 0); }, "the root's thread"},
    {"hop", kHop, "ns_per_hop", "ns", 1e9, [](const CoroParams& p) { return p.hops; },
     [](const CoroParams& p) { return p.hops; }, "the thread that called sync_wait/co_spawn"},
    {"fan-in", kFanIn, "us_per_fan_in", "us", 1e6, [](const CoroParams& p) { return std::int64_t{p.fan_ins}; },
     [](const CoroParams& p) { return p.fan_in * p.fan_ins; }, "the thread that fanned out"},
    {"cancel", kCancel, "cancel_ms", "ms", 1e3, [](const CoroParams&) { return std::int64_t{1}; },
     [](const CoroParams& p) { return p.cancel_tasks; }, nullptr},
}};

// The row's note on its size; `items` is the workload's items(p).
std::string what_of(std::string_view workload, const CoroParams& p, std::int64_t items) {
  if (workload == "fib") return "fib(" + std::to_string(p.fib_n) + "), no cutoff: " + std::to_string(items) + " spawns";
  if (workload == "hop") return std::to_string(p.hops) + " hops from one coroutine";
  if (workload == "fan-in")
    return std::to_string(p.fan_in) + " tiny tasks per fan-in, " + std::to_string(p.fan_ins) + " fan-ins per sample";
  return std::to_string(p.cancel_tasks) + " queued tasks cancelled; none ran";
}

std::vector<harness::Variant<RunFn>> variants_of(const Workload& w) {
  std::vector<harness::Variant<RunFn>> out;
  for (const Entry& e : w.entries) out.push_back(e.variant);
  return out;
}

// ---- goals ------------------------------------------------------------------

nlohmann::json goal_ratios(const Result& r, const std::vector<int>& workers) {
  nlohmann::json goals = nlohmann::json::array();
  for (int t : workers) {
    const std::string at = " (" + std::to_string(t) + " workers)";
    const auto goal = [t](const char* g) { return goal_at(t, g); };
    const auto key = [t](const char* v, const char* m, const char* w) { return Key(v, m, t).workload(w); };
    add_ratio(goals, "fib: weft-task / weft-taskgroup ns per spawn" + at,
              ratio(r, key("weft-task", "ns_per_spawn", "fib"), key("weft-taskgroup", "ns_per_spawn", "fib")),
              goal("<= 1.5"));
    add_ratio(goals, "fib: weft-task / tbb ns per spawn" + at,
              ratio(r, key("weft-task", "ns_per_spawn", "fib"), key("tbb", "ns_per_spawn", "fib")), goal("<= 1.0"));
    add_ratio(goals, "hop: weft-task / asio ns per hop" + at,
              ratio(r, key("weft-task", "ns_per_hop", "hop"), key("asio", "ns_per_hop", "hop")), goal("<= 0.5"));
    add_ratio(goals, "fan-in: weft-future / tbb us per fan-in" + at,
              ratio(r, key("weft-future", "us_per_fan_in", "fan-in"), key("tbb", "us_per_fan_in", "fan-in")),
              goal("<= 1.0"));
    add_ratio(goals, "cancel: weft-taskgroup ms" + at, median(r, key("weft-taskgroup", "cancel_ms", "cancel")),
              goal("<= 20"));
    add_ratio(goals, "cancel: weft-taskgroup / tbb ms" + at,
              ratio(r, key("weft-taskgroup", "cancel_ms", "cancel"), key("tbb", "cancel_ms", "cancel")),
              goal("<= 1.0"));
  }
  return goals;
}

}  // namespace

const std::vector<std::string>& coro_variants() {
  static const std::vector<std::string> names{"weft-task", "weft-taskgroup", "weft-taskgroup-caller",
                                              "weft-future", "tbb", "asio"};
  return names;
}

const std::vector<std::string>& coro_workloads() { return harness::names_of<kWorkloads>(); }

Result run_coro(const CoroParams& p) {
  const harness::PlanOptions plan{p.reps, true};
  Result r;
  r.experiment = "coro";
  // One workload at a time, its variants interleaved.
  for (const Workload& w : kWorkloads) {
    if (std::find(p.workloads.begin(), p.workloads.end(), w.name) == p.workloads.end()) continue;
    const std::vector<harness::Variant<RunFn>> table = variants_of(w);
    std::vector<std::string> names;
    for (const std::string& v : p.variants)
      if (std::any_of(table.begin(), table.end(), [&](const auto& x) { return x.name == v; })) names.push_back(v);
    std::vector<harness::Unit> units = harness::plan_units(table, names, p.workers);
    // Once: fib's count is a recursion as long as the run's.
    const std::int64_t items = w.items(p);
    const std::int64_t per = w.per(p);
    std::vector<Where> where(units.size());
    std::vector<int> runs(units.size(), 0);
    harness::run_units(units, plan, [&](const harness::Unit& u, std::size_t i) {
      Where& wh = where[i];
      wh.look(runs[i]++ == 0);  // the warm-up run (the plan always has one)
      const double s = harness::variant(table, u.variant).run(Run{&p, u.threads, &wh});
      wh.finish(items);
      return s;
    });
    for (std::size_t i = 0; i < units.size(); ++i) {
      const harness::Unit& u = units[i];
      std::vector<double> value, ms;
      for (double s : u.samples) {
        value.push_back(s * w.scale / static_cast<double>(per));
        ms.push_back(s * 1e3);
      }
      Row row = make_row(u.variant, u.threads, std::string(w.metric), std::string(w.unit), std::move(value), u.why_not);
      row.labels.workload = std::string(w.name);
      row.labels.items = items;
      if (u.runs()) {
        const auto e = std::find_if(w.entries.begin(), w.entries.end(),
                                    [&](const Entry& x) { return x.variant.name == u.variant; });
        row.note = what_of(w.name, p, items) + "; " + std::string(e->how);
        if (w.starter != nullptr) row.note += "; " + where[i].text(w.starter);
        if (w.name == "hop") row.note += "; " + where[i].moved_text();
      }
      if (w.name == "fib") {
        row.labels.spawns = per;
        r.rows.push_back(with_metric(row, "ms", "ms", u.runs() ? ms : std::vector<double>{}));
      }
      r.rows.push_back(std::move(row));
    }
  }
  r.params = {{"weft_threads", "a pool of `workers` workers; fork-join roots run on a worker, the calling thread "
                               "waits without taking tasks"},
              {"tbb_threads", "task_arena of `workers` slots, the calling thread one of them"},
              {"asio_threads", "asio::thread_pool of `workers` threads"},
              {"timing", "on the thread that starts the work, from before its first task to after the last join "
                         "(cancel: from cancel() until wait() returns)"},
              {"warmup", harness::warmup_text(plan)}};
  r.extra["ratios"] = goal_ratios(r, p.workers);
  return r;
}

// The registration: `weft coro`, its sizes in the report, its figure.
namespace {

const Register<CoroParams> reg{{
    .name = "coro", .page = 110, .seconds = {3, 15, 30},
    .title = "Coroutines, futures and cancellation against oneTBB and Boost.Asio",
    .summary = "Coroutine fork-join, a hop onto the pool, fan-in and cancelling queued tasks: weft against oneTBB and "
               "Boost.Asio",
    // Each queued task of --cancel-tasks holds a pool block and a deque slot.
    .options = {integer("--fib-n", &CoroParams::fib_n, "fib(n) of the fork-join workload, no cutoff", 1, 40),
                integer("--hops", &CoroParams::hops, "Hops onto the pool per sample", 1, 100'000'000),
                integer("--fan-in", &CoroParams::fan_in, "Tiny tasks per fan-in", 1, 10'000'000),
                integer("--fan-ins", &CoroParams::fan_ins, "Fan-ins per sample", 1, 100'000),
                integer("--cancel-tasks", &CoroParams::cancel_tasks, "Queued tasks a group cancels", 1, 100'000'000),
                names("--workload", &CoroParams::workloads, "Workloads", "workload", coro_workloads),
                counts("--workers,-w", &CoroParams::workers, "Worker counts"),
                variants(&CoroParams::variants, coro_variants), reps(&CoroParams::reps)},
    .sizes = {[](CoroParams& p) {
                p.fib_n = 25;
                p.hops = 20'000;
                p.fan_ins = 5;
                p.cancel_tasks = 200'000;
                p.reps = 3;
              },
              nullptr, [](CoroParams& p) { p.reps = 9; }},
    .run = run_coro,
    .heading = "Coroutines and async composition: ns per spawn, ns per hop, us per fan-in, cancel ms",
    .print = [](const Result& r) { print_goals(r, 58); },
    .figures = {"coro_vs_peers"}, .headlines = {"ms", "ns_per_hop", "us_per_fan_in", "cancel_ms"},
}};

}  // namespace

}  // namespace weft::xp
