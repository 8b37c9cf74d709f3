/// @file
/// weft/exec/task_group.hpp — fork-join: run tasks, then wait for all of them.
///
///   weft::TaskGroup g{pool};
///   g.run([&] { left = fib(n - 1); });
///   right = fib(n - 2);
///   g.wait();                 // rethrows the first exception a task threw
///
/// wait() on a worker runs queued tasks (its own first) while it waits, so
/// groups nest to any depth and recursive fork-join needs no extra threads.
/// (A worker of another pool helps its own pool the same way.) wait() on a
/// thread that is no pool's worker takes the pool's seat when a worker is
/// parked (as the blocking algorithms do): that worker sits out and the
/// caller runs queued tasks in its place — any of the pool's, not only the
/// group's, so the caller should not hold a lock such a task may take — so
/// P threads compute, the caller one of them. It gives the seat back once
/// it finds nothing to run, and then, or without a seat (another outside
/// thread holds it, or every worker is busy), waits without computing: it
/// spins briefly, then sleeps. (Future::get() and sync_wait() on such a
/// thread always wait without computing: a future or a task may involve
/// several pools, or none.)
/// Every task of the group runs, even after one has thrown; wait() rethrows
/// the first exception and drops the rest. run() may be called from any
/// thread, including from the group's own tasks, until wait() returns; the
/// group can be reused after wait().
///
/// wait() called from one of the group's own tasks (directly, or from a task
/// of another group that a wait nested inside the group's task ran) would
/// wait for itself: it throws std::logic_error instead.
///
/// Destruction waits for the group's tasks; an exception nobody wait()ed for
/// goes to weft's error handler (weft/error.hpp; by default a line on
/// stderr), since a destructor must not throw; it is never lost silently.
///
/// Cancellation (docs/guide/cancellation.md). cancel(), or a stop requested
/// on the token the group was built with, cancels the group for good: a task
/// not yet started never runs (its callable is destroyed unrun: by the worker
/// that takes it from the queue, or at once by a run() after the cancel);
/// a task already running runs to its end. wait() still waits for the running
/// ones, then throws weft::cancelled if a task was skipped since the last
/// wait() — unless a task threw, whose exception takes precedence (it says
/// more than "something did not run"). cancel() may be called from any
/// thread, the group's own tasks included, any number of times.
///
///   group      run(f)                  a worker takes a task    cancel()/stop    wait()
///   ---------  ----------------------  -----------------------  ---------------  ------------------------------
///   active     queues f (pending + 1)  runs it (pending - 1)    -> cancelled     waits for pending == 0;
///                                                                                rethrows a task's exception
///   cancelled  destroys f, skipped     destroys it unrun,       stays            waits for pending == 0; a task's
///                                      skipped (pending - 1)                     exception, else cancelled if skipped
///
/// Each task is claimed once, by the one thread that took it from the queue:
/// it reads the cancelled flag and either runs or skips; nothing else touches
/// it, so no task is both run and skipped (tests/model/group_cancel.pml).
/// cancel() and a wait() on a cancelled group first take back, in one step
/// (ThreadPool::take_back: one CAS against the thieves), the group's tasks
/// still in the calling thread's own queue — usually nearly all of them, as
/// the thread that run() them is the one that cancels or waits — and destroy
/// them there: no steal, no remote free, one count for all. A task a worker
/// took first is skipped by that worker: the pop, the destructor, a free and
/// the count. No wake-up and no exception object per task.
///
/// The stop token: the group registers a std::stop_callback that calls
/// cancel(); the destructor deregisters it before the group's memory goes
/// (std::stop_callback's destructor waits for a callback running on another
/// thread), so a stop racing the group's destruction is safe.
///
/// Memory ordering: everything a task did happens before wait() returns.
/// cancel() publishes nothing: a task that starts just as the group is
/// cancelled may run (it started first); one that reads the flag set never
/// runs. is_cancelled() is a snapshot.
///
/// Counting (docs/design/cancellation.md, "Counting without a hot line").
/// The root word state_ holds (units << 2) | outside bit | waiter bit, and
/// wait() sleeps until nothing is pending. A task is counted in one of
/// three places, which it records (GroupTaskBase::shard), and its finish
/// undoes exactly that:
///
///   run() on                  counts the task in    finish (run, skipped or taken back)
///   -----------------------   -------------------   -------------------------------------
///   the thread that built     local_: + 1, a load   popped back by the builder's join:
///   the group, under the      and a store (only     local_ - 1 (a store); anywhere else:
///   frame it built it in      that thread writes    root units - 1 (which may go below 0)
///                             it)
///   the builder inside a      the root: units + 1   root: units - 1; wake the waiter
///   group task, or a thread                         if that left 0 units and the bit set
///   outside the pool
///   worker i of the pool      shard i: +1; only     shard: -1; only 1 -> 0 takes the
///   (any other)               0 -> 1 adds a unit    shard's unit off the root (as above)
///
/// So pending = root units + local_: fork-join whose tasks stay on their
/// thread pays no RMW per task. The builder's wait() folds local_ into
/// the root before it sleeps; a wait() on another thread reads local_ then
/// the root and sleeps with the outside bit, which every root decrement and
/// every change of local_ by the builder wakes (docs/design/cancellation.md,
/// "The builder's local count"; tests/model/group_local.pml).
///
/// So the root's units are the tasks counted on it plus the shards that are
/// not zero, and a group fed from every worker writes the root once per
/// shard that empties rather than once per task: the common run() writes
/// the worker's own shard line, a finish the shard of the task (its
/// spawner's, or the thief's that ran it). The builder — in fork-join the
/// one thread that runs and waits — keeps today's single word and never
/// allocates shards; they are allocated (pool size lines) on the first
/// run() from another worker. Why units == 0 means nothing is pending, and
/// the model: tests/model/group_shards.pml, docs/design/cancellation.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/exec/task.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

class TaskGroup;

namespace detail {
// The group tasks running on this thread, innermost first: each GroupTask
// links a frame on its own stack while it runs, numbered by a per-thread
// count of frames ever linked. A wait() that would block must refuse to
// wait for itself (a task of the group below it on this thread). The
// common wait — by the thread that built the group, with the same frame on
// top as when it built it — needs no walk: every frame linked since the
// group was built is gone again, and the frames below were linked before
// the group existed. Any other wait that would block walks the chain (the
// rare case: a group shared between threads, or waited on from deeper
// down). So a join costs O(1), not O(depth): a recursion thousands of
// groups deep stays linear. A task pays a thread-local increment and two
// stores for it. A wait that blocks links a frame of no group while it
// runs other tasks: a run() on the group from one of them (a stolen fork
// of parallel_invoke, a Future's task) then counts on the root, which the
// blocked builder has made exact, and not on its local count.
struct GroupFrame {
  const TaskGroup* group;
  GroupFrame* below;
  std::uint64_t serial;
};
extern thread_local constinit GroupFrame* t_group_frames;
extern thread_local constinit std::uint64_t t_group_serial;
// Links a frame for `group` (nullptr: a frame of no group) on this
// thread's chain for the scope.
class LinkedGroupFrame {
 public:
  explicit LinkedGroupFrame(const TaskGroup* group) noexcept
      : frame_{group, t_group_frames, ++t_group_serial} {
    t_group_frames = &frame_;
  }
  ~LinkedGroupFrame() { t_group_frames = frame_.below; }
  LinkedGroupFrame(const LinkedGroupFrame&) = delete;
  LinkedGroupFrame& operator=(const LinkedGroupFrame&) = delete;

 private:
  GroupFrame frame_;
};
// The serial of this thread's innermost running group task (0: none).
inline std::uint64_t top_group_serial() noexcept {
  const GroupFrame* f = t_group_frames;
  return f != nullptr ? f->serial : 0;
}
// Frames visited by self-wait walks, all threads: how a test tells that
// the common wait walks none (relaxed: a count nothing is ordered by).
std::uint64_t self_wait_frames_walked() noexcept;
}  // namespace detail

/// A set of tasks on a pool that one wait() joins: fork-join with
/// exceptions and cancellation (this file's opening comment).
class TaskGroup {
 public:
  /// An empty group whose tasks run on `pool`.
  explicit TaskGroup(ThreadPool& pool) noexcept : pool_(pool) {}
  /// An empty group on the current pool (ThreadPool::current(): the calling
  /// worker's, or that of the task the caller runs in place), else on
  /// weft::default_pool(), which this may start: recursive code need not
  /// pass its pool down.
  TaskGroup();
  /// Cancelled when a stop is requested on `stop` (at once if it already
  /// was). The stop callback is allocated (so that a group without one
  /// stays one cache line): throws std::bad_alloc if that fails.
  TaskGroup(ThreadPool& pool, std::stop_token stop)
      : pool_(pool),
        on_stop_(stop.stop_possible() ? std::make_unique<std::stop_callback<Canceller>>(std::move(stop), Canceller{this})
                                      : nullptr) {}
  ~TaskGroup();
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  /// Queues f() on the pool as one of the group's tasks (skipped once the
  /// group is cancelled). Throws what allocating the task throws.
  template <class F>
  void run(F&& f) {
    using Fn = std::decay_t<F>;
    detail::sched_point();
    if (is_cancelled()) {
      skip();
      return;
    }
    Shard* shard = nullptr;
    if (builder_ == &detail::t_group_frames) {
      if (detail::top_group_serial() == builder_top_) {
        count_local();
        shard = local_mark();
      } else {
        count_on_root();
      }
    } else {
      shard = count_elsewhere();
    }
    detail::TaskNode* t;
    try {
      t = detail::new_task<GroupTask<Fn>>(std::forward<F>(f), this, shard);
    } catch (...) {
      if (shard == local_mark())
        uncount_local();
      else
        finish_one(shard);
      throw;
    }
    pool_.push(t);  // on failure the task's discard() has called finish_one()
  }

  /// Waits for every task run() so far; rethrows the first exception a task
  /// threw, else throws weft::cancelled if a task was skipped since the last
  /// wait().
  void wait();

  /// Cancels the group: queued tasks and later run()s are skipped. The
  /// group's tasks the calling thread queued itself (in its own deque) are
  /// taken back and destroyed here, at once.
  void cancel() noexcept;
  /// Whether cancel() was called (or the stop token requested a stop).
  [[nodiscard]] bool is_cancelled() const noexcept {
    return cancelled_.load(std::memory_order_relaxed);  // relaxed: a snapshot, as in cancel()
  }

 private:
  // The root's units are 30 bits, and may stand below zero while the
  // builder holds local counts (see count_local()): both stay far from
  // the wrap.
  static constexpr std::uint32_t kMaxLocal = 1u << 28;
  static constexpr std::int32_t kMaxRootUnits = 1 << 28;
  static constexpr std::uint32_t kUnitMask = (1u << 30) - 1;

  // One worker's count of the group's tasks it run(): written by that
  // worker's run()s and by the finishes of those tasks (on the worker
  // itself or on the thief that ran one), on a line of its own.
  using Shard = detail::CacheAligned<std::atomic<std::uint32_t>>;

  // The part every group task shares: `discard` is the one function
  // discard_task for all of them, which is how take_back() recognises the
  // group's tasks among others; `destroy` frees one without accounting;
  // `shard` is where run() counted it: nullptr on the root, local_mark()
  // in the builder's local count, inline_mark() the same task once the
  // builder's join took it back to run it (so its finish takes it off the
  // local count, not the root), else a shard.
  struct GroupTaskBase : detail::TaskNode {
    TaskGroup* group;
    Shard* shard;
    void (*destroy)(GroupTaskBase*) noexcept;
  };

  template <class F>
  struct GroupTask final : GroupTaskBase {
    F fn;
    template <class G>
    GroupTask(G&& g, TaskGroup* grp, Shard* sh) : fn(std::forward<G>(g)) {
      execute = &execute_impl;
      discard = &discard_task;
      group = grp;
      shard = sh;
      destroy = &destroy_impl;
    }
    static void execute_impl(detail::TaskNode* t) noexcept {
      auto* self = static_cast<GroupTask*>(t);
      TaskGroup* g = self->group;
      Shard* shard = self->shard;
      // The claim: this thread alone took the task from the queue, so this
      // one read decides between running and skipping it.
      detail::sched_point();
      if (g->is_cancelled()) {
        detail::delete_task(self);
        g->skip();
        g->finish_one(shard);
        return;
      }
      {
        const detail::LinkedGroupFrame frame(g);
        try {
          self->fn();
        } catch (...) {
          g->record(std::current_exception());
        }
      }
      detail::delete_task(self);
      g->finish_one(shard);
    }
    static void destroy_impl(GroupTaskBase* t) noexcept { detail::delete_task(static_cast<GroupTask*>(t)); }
  };

  static void discard_task(detail::TaskNode* t) noexcept;
  // take_back()'s filter: destroys `t` if it is one of `group`'s tasks.
  static bool take_mine(detail::TaskNode* t, const void* group) noexcept;
  void take_back_queued() noexcept;

  struct Canceller {
    TaskGroup* group;
    void operator()() const noexcept { group->cancel(); }
  };

  void record(std::exception_ptr e) noexcept;
  void skip() noexcept {
    // relaxed: wait() reads the flag after the count reached zero, which the
    // skipping worker's finish_one() orders after this (a skipping run() is
    // ordered before wait() as every run() must be).
    // A load first, so a burst of skips writes the line once.
    if (!skipped_.load(std::memory_order_relaxed)) skipped_.store(true, std::memory_order_relaxed);
  }
  [[nodiscard]] bool running_on_this_thread() const noexcept;
  // The builder, waiting under the frame it built the group in: not inside
  // one of the group's tasks (GroupFrame), an O(1) test.
  [[nodiscard]] bool waited_on_by_builder() const noexcept {
    return builder_ == &detail::t_group_frames && detail::top_group_serial() == builder_top_;
  }
  // Whether `t` is one of `group`'s tasks: discard_task is the one discard
  // function every group task has. It reads the task, so only on one the
  // caller has claimed (out of a deque by pop or take_all), never on a task
  // a thief could take and free while it looks.
  static bool is_task_of(const detail::TaskNode* t, const TaskGroup* group) noexcept {
    return t->discard == &discard_task && static_cast<const GroupTaskBase*>(t)->group == group;
  }
  // The join's fast path: if the calling worker's newest queued task is
  // one of this group's, takes it back and runs it here; true if it did.
  bool run_mine_at_bottom() noexcept;
  void count_on_root() {
    // relaxed: the count only has to be in place before the task can finish,
    // which the push's release orders.
    const std::uint32_t old = state_.fetch_add(4, std::memory_order_relaxed);
    if (static_cast<std::int32_t>(old) >= 4 * kMaxRootUnits) {
      state_.fetch_sub(4, std::memory_order_relaxed);  // relaxed: undoes our own add
      throw std::length_error("weft::TaskGroup: more than 2^28 pending tasks");
    }
  }
  // The builder's run() under the frame it built the group in: +1 on the
  // local count, a word only this thread writes — a load and a store, no
  // RMW. A task so counted leaves the count where it finishes: popped back
  // by the builder's join (finish_inline(), again no RMW) or anywhere else
  // (a thief, a helping wait, a skip: a unit off the root, which may so
  // stand below zero). pending = root units + local, and the builder's
  // wait() folds local into the root (flush_local()) before it sleeps.
  // Fork-join that keeps its tasks pays no RMW per task; a steal pays one.
  // The protocol: tests/model/group_local.pml, docs/design/cancellation.md.
  void count_local() {
    // relaxed: only this thread writes the word; a wait() on another thread
    // is ordered after this run() by the caller (as every run() must be),
    // a finish does not read it.
    const std::uint32_t n = local_.load(std::memory_order_relaxed);
    if (n >= kMaxLocal) throw std::length_error("weft::TaskGroup: more than 2^28 pending tasks");
    local_.store(n + 1, std::memory_order_relaxed);
  }
  void uncount_local() noexcept {
    // relaxed: undoes count_local() before anything saw the task.
    local_.store(local_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }
  static Shard* local_mark() noexcept { return reinterpret_cast<Shard*>(std::uintptr_t{1}); }
  static Shard* inline_mark() noexcept { return reinterpret_cast<Shard*>(std::uintptr_t{2}); }
  void finish_inline() noexcept;
  void flush_local() noexcept;
  void note_local_change() noexcept;
  [[nodiscard]] bool builder_done() const noexcept;
  [[nodiscard]] bool outside_done() const noexcept;
  void block_outside(bool help) noexcept;
  void clear_waiter_bits() noexcept;
  // run() on any thread but the builder: counts on the worker's shard
  // (returned), or on the root outside the pool (nullptr).
  Shard* count_elsewhere();
  Shard* shards();
  void finish_one(Shard* shard) noexcept;
  void take_units_off_root(std::uint32_t units) noexcept;
  static bool done(std::uint32_t w) noexcept { return (w >> 2) == 0; }
  void wait_as_one_of_the_p(bool outside) noexcept;

  ThreadPool& pool_;
  // The thread that built the group (the address of its t_group_frames):
  // its run()s count on the root word. Read by every run(); never written.
  const void* const builder_ = &detail::t_group_frames;
  // The builder's innermost group task when it built the group (its
  // frame's serial, 0: none): a wait() by the builder with this frame on
  // top cannot be inside one of the group's tasks. Never written.
  const std::uint64_t builder_top_ = detail::top_group_serial();
  // pool.size() shards, made by the first run() that needs one and kept
  // until the destructor; read by run()s on workers other than the builder.
  std::atomic<Shard*> shards_{nullptr};
  // The root: (units << 2) | outside bit | waiter bit. Written by run()s
  // that count on it, by finishing root-counted and local-counted tasks
  // and by shards' 0 <-> 1 transitions; read by wait(). Not on a line of
  // its own: the builder writes local_ beside it on every run() anyway,
  // the fields above are read-only, and a group lives in a fork's stack
  // frame, where 64-byte alignment would realign every such frame and
  // deepen a recursion's stack by up to a line per level.
  std::atomic<std::uint32_t> state_{0};
  // The builder's local count (count_local()): written by the builder's
  // thread alone, read by a wait() on another thread.
  std::atomic<std::uint32_t> local_{0};
  // Set once by the first task that throws (error_claimed_ arbitrates).
  std::atomic<bool> error_claimed_{false};
  // Set by cancel() or the stop callback on any thread; read by every task
  // as it starts (on the state word's line, which the task writes anyway).
  std::atomic<bool> cancelled_{false};
  // Set by whoever skips a task; read and cleared by wait().
  std::atomic<bool> skipped_{false};
  std::exception_ptr error_;
  // Last: destroyed first, so no stop callback can run on a group whose
  // members are going away (its destructor waits for one in flight).
  // Only for a group made with a stop token that can be stopped.
  std::unique_ptr<std::stop_callback<Canceller>> on_stop_;
};

}  // namespace weft
