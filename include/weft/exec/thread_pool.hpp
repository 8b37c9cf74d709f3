/// @file
/// weft/exec/thread_pool.hpp — a work-stealing thread pool.
///
///   weft::ThreadPool pool;                       // available_parallelism() workers
///   pool.post([] { ... });                       // fire and forget
///   weft::Future<int> f = pool.submit([] { return 42; });
///   int v = f.get();                             // rethrows the task's exception
///
/// Design (docs/design/pool.md): each worker owns a work-stealing deque
/// (it pushes and pops at the bottom, thieves steal from the top); each
/// thread outside the pool that submits gets an injection deque of its own
/// (it only pushes; workers steal), so submitting from outside is a store
/// and a fence, not a lock. Idle workers search for a bounded time
/// (WaitOptions; between looks that find nothing a searcher pauses longer
/// each time, up to 0.5 us, so its polling does not slow the threads that
/// push), then park; a submitter wakes at most one parked worker and
/// only when no worker is already searching, and a searcher that finds a
/// task wakes as many more sleepers as there are queued tasks nobody looks
/// for yet (a burst of k tasks brings up k workers in parallel). Thieves try victims in rings of
/// topology distance, nearest first (weft/detail/exec/victim_rings.hpp), so
/// a construction with Placement::none waits until every worker has started
/// and said where it runs.
///
/// Exceptions: a submit()ted task's exception goes to its Future. A post()ed
/// task's exception is kept by the pool (the first one; later ones are
/// counted) and rethrown by the next wait_idle(); one never rethrown goes
/// to weft's error handler at destruction (weft/error.hpp; by default a line
/// on stderr), never dropped silently.
///
/// Lifetime: the destructor (and shutdown()) stops accepting submissions
/// from threads outside the pool, runs every task already submitted —
/// including tasks those tasks submit — and joins the workers. Submitting
/// from outside to a pool that is shut down throws std::runtime_error.
/// Destroying a pool from one of its own workers is undefined (it would join
/// itself); debug builds assert.
///
/// wait_idle() returns when the pool has no queued and no running task: all
/// tasks submitted before the call (and anything they spawned) have finished.
/// While other threads keep submitting it waits for a quiet moment.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/detail/exec/task.hpp"
#include "weft/exec/future.hpp"
#include "weft/exec/pool_stats.hpp"
#include "weft/exec/trace.hpp"
#include "weft/sync/wait_options.hpp"
#include "weft/topo/placement.hpp"

namespace weft {

/// @cond internal
template <class T>
class Task;
namespace detail {
struct ScheduleAwaiter;
}
/// @endcond

/// How a ThreadPool is built: workers, placement, waiting, hooks, tracing.
struct PoolOptions {
  /// Number of workers; unset means available_parallelism(). 0 or less is an
  /// error (std::invalid_argument).
  std::optional<int> workers;
  /// Where workers run; none leaves them to the scheduler.
  Placement placement = Placement::none;
  /// How long an idle worker searches (spinning) before it parks.
  WaitOptions wait{};
  /// Run on each worker thread with its index: on_worker_start before the
  /// worker takes its first task, on_worker_stop after its last, as it exits
  /// (to name the thread, set its scheduling class, set up or tear down a
  /// thread-local arena). A pinned worker may still be moving to its CPU
  /// when on_worker_start runs; current_cpu() settles once the constructor
  /// has returned. In on_worker_stop the thread no longer counts as a worker
  /// (is_worker() is false, a submission throws: the pool is shut down).
  /// The hooks run concurrently on different workers. An exception from a
  /// hook goes to weft's error handler (weft/error.hpp) with the worker's
  /// index, and the worker carries on: the pool does not lose a worker, nor
  /// the constructor fail, over a thread name it could not set.
  std::function<void(int)> on_worker_start{};
  /// See on_worker_start.
  std::function<void(int)> on_worker_stop{};
  /// Events each worker keeps for trace() (weft/exec/trace.hpp); 0: no
  /// trace, unless WEFT_TRACE is set (then kDefaultTraceCapacity). More than
  /// kMaxTraceCapacity is an error (std::invalid_argument).
  std::size_t trace_capacity = 0;
  /// Bytes of stack for each worker thread; 0: the system's default (the
  /// stack limit, usually 8 MiB). Deep recursion — fork-join over a tree
  /// thousands of levels deep, where each level nests a wait — needs more.
  /// Rounded up to whole pages; below the system's minimum (PTHREAD_STACK_MIN)
  /// is an error (std::invalid_argument).
  std::size_t stack_size = 0;
};

namespace detail {
class PoolCore;

template <class F>
struct PostTask final : TaskNode {
  F fn;
  PoolCore* pool;
  template <class G>
  PostTask(G&& g, PoolCore* p) : fn(std::forward<G>(g)), pool(p) {
    execute = &execute_impl;
    discard = &discard_impl;
  }
  static void execute_impl(TaskNode* t) noexcept;
  static void discard_impl(TaskNode* t) noexcept { delete_task(static_cast<PostTask*>(t)); }
};

void record_post_exception(PoolCore* pool, std::exception_ptr e) noexcept;

template <class F>
void PostTask<F>::execute_impl(TaskNode* t) noexcept {
  auto* self = static_cast<PostTask*>(t);
  try {
    self->fn();
  } catch (...) {
    record_post_exception(self->pool, std::current_exception());
  }
  delete_task(self);
}
}  // namespace detail

/// A work-stealing thread pool: this file's opening comment has the design and contract.
class ThreadPool {
 public:
  /// available_parallelism() workers, unpinned.
  ThreadPool() : ThreadPool(PoolOptions{}) {}
  /// A pool as `options` say; throws std::invalid_argument for a bad count
  /// or trace capacity, std::runtime_error if a worker cannot start.
  explicit ThreadPool(PoolOptions options);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Queues f() to run on a worker. Throws std::runtime_error if the pool is
  /// shut down (when called from outside the pool).
  /// Cost to the caller: lock-free, no system call while a worker searches
  /// or none sleeps. When nobody searches and some worker sleeps, a call from
  /// a thread outside the pool may wait up to 1 us (polling) for an awake
  /// worker to come for the task before it wakes a sleeper, which costs it a
  /// futex call (docs/design/pool.md, "An outside submitter's grace"). When
  /// every worker sleeps, it wakes one at once and hands it the task,
  /// under the sleepers' lock ("A post into a sleeping pool").
  template <class F>
  void post(F&& f) {
    using Fn = std::decay_t<F>;
    push_posted(detail::new_task<detail::PostTask<Fn>>(std::forward<F>(f), core_.get()));
  }

  /// Queues f() and returns the future of its result.
  template <class F>
  [[nodiscard]] auto submit(F&& f) -> Future<std::invoke_result_t<std::decay_t<F>&>> {
    using Fn = std::decay_t<F>;
    using T = std::invoke_result_t<Fn&>;
    auto* task = detail::new_task<detail::FutureTask<T, Fn>>(std::forward<F>(f), core_.get());
    Future<T> fut(task);
    push(task);  // on failure push() dropped the queue's reference; `fut` drops the other
    return fut;
  }

  ///@{
  /// Coroutines (weft/exec/coro.hpp, which defines these): `co_await
  /// pool.schedule()` moves the awaiting task onto a worker; spawn() queues
  /// a task's start and returns the future of its result.
  [[nodiscard]] detail::ScheduleAwaiter schedule() noexcept;
  template <class T>
  [[nodiscard]] Future<T> spawn(Task<T> task);
  ///@}

  /// Waits until no task is queued or running; rethrows the first exception
  /// a post()ed task threw since the last call.
  void wait_idle();

  /// Stops accepting outside submissions, runs what was submitted, joins.
  /// Idempotent; the destructor calls it.
  void shutdown();

  /// The number of workers.
  [[nodiscard]] int size() const noexcept;
  /// The CPUs the workers are pinned to (empty for Placement::none).
  [[nodiscard]] const std::vector<int>& cpus() const noexcept;
  /// True on one of this pool's workers, and on an outside thread while it
  /// computes a blocking algorithm (parallel_for, reduce, scan, sort, find)
  /// as one of the pool's threads, in the pool's seat: then one parked
  /// worker sits out, so P threads compute (weft/detail/exec/seat.hpp).
  [[nodiscard]] bool is_worker() const noexcept;
  /// This thread's worker index in its pool, or -1 outside any pool. An
  /// outside thread in the pool's seat has the index of the worker sitting
  /// out for it, which runs nothing meanwhile: one thread per index.
  static int current_worker_index() noexcept;
  /// The pool whose worker is calling (or whose seat the caller holds);
  /// on a thread that is neither, the pool whose task the caller runs in
  /// place (get() or wait() of a task no worker has started); else nullptr.
  /// Recursive code finds its pool without passing it down, as oneTBB's and
  /// OpenMP's tasks find theirs. Not the same as is_worker(): a task run in
  /// place has a current pool but no worker index (-1). Its groups go to
  /// that pool, and its waits from this thread wait for the pool's workers
  /// (a worker's waits run other tasks; this thread runs only what its
  /// seat, if it gets one, gives it).
  [[nodiscard]] static ThreadPool* current() noexcept;
  /// How a worker's push is ordered against a worker going to sleep, for
  /// the process (decided once, when the first pool starts, or here):
  /// "membarrier" — a compiler barrier on the push and membarrier(2) on the
  /// sleeper's side, where the kernel allows it; "fences" — a seq_cst fence
  /// on both (no membarrier, or WEFT_ASYMMETRIC_FENCE=0). Fork-join's
  /// per-task cost differs between the two (docs/design/pool.md).
  [[nodiscard]] static const char* push_fences() noexcept;
  /// Workers idle right now (searching for a task or parked): when to offer
  /// a loop's work to the pool (weft::adaptive). One relaxed load, so a hint
  /// that may be stale by the time it returns.
  [[nodiscard]] int idle_worker_count() const noexcept;
  /// What each worker has done so far (weft/exec/pool_stats.hpp); any thread,
  /// any time. Costs the caller a read of each worker's counters; keeping
  /// them costs the workers a store per event whether or not anyone reads.
  [[nodiscard]] PoolStats stats() const;
  /// The last events of each worker (weft/exec/trace.hpp); any thread, any
  /// time. Empty (capacity 0) unless the pool traces.
  [[nodiscard]] PoolTrace trace() const;

 private:
  friend class TaskGroup;
  friend struct detail::ScheduleAwaiter;  // pushes itself
  friend detail::PoolCore& detail::core_of(ThreadPool& pool) noexcept;  // for continuations' pools
  void push(detail::TaskNode* t);
  void push_posted(detail::TaskNode* t);  // post()'s: a task nobody can take back
  // For TaskGroup::cancel(): empties the calling thread's own deque in this
  // pool (a worker's, or the injection deque it submits through) in one
  // step, offers each task to take(t, ctx), which destroys the ones it wants
  // and returns true for them, and puts the rest back. Returns how many it took.
  std::size_t take_back(bool (*take)(detail::TaskNode*, const void*) noexcept, const void* ctx) noexcept;
  std::unique_ptr<detail::PoolCore> core_;
};

}  // namespace weft
