// weft/exec/task_group.hpp — fork-join: run tasks, then wait for all of them.
//
//   weft::TaskGroup g{pool};
//   g.run([&] { left = fib(n - 1); });
//   right = fib(n - 2);
//   g.wait();                 // rethrows the first exception a task threw
//
// wait() on a worker runs queued tasks (its own first) while it waits, so
// groups nest to any depth and recursive fork-join needs no extra threads.
// Every task of the group runs, even after one has thrown; wait() rethrows
// the first exception and drops the rest. run() may be called from any
// thread, including from the group's own tasks, until wait() returns; the
// group can be reused after wait().
//
// wait() called from one of the group's own tasks (directly, or from a task
// of another group that a wait nested inside the group's task ran) would
// wait for itself: it throws std::logic_error instead.
//
// Destruction waits for the group's tasks; an exception nobody wait()ed for
// goes to weft's error handler (weft/error.hpp; by default a line on
// stderr), since a destructor must not throw; it is never lost silently.
//
// Memory ordering: everything a task did happens before wait() returns.
//
// State word: (pending tasks << 1) | waiter bit. run() adds 2; a finishing
// task subtracts 2 and wakes the futex if that left 0 pending with the
// waiter bit set; a waiter about to sleep sets the bit (src/exec/task_group.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
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
// links a frame on its own stack while it runs. A wait() that would block
// walks it to refuse waiting for itself; a task pays two thread-local
// stores for it, a wait() that does not block pays nothing.
struct GroupFrame {
  const TaskGroup* group;
  GroupFrame* below;
};
extern thread_local constinit GroupFrame* t_group_frames;
}  // namespace detail

class TaskGroup {
 public:
  explicit TaskGroup(ThreadPool& pool) noexcept : pool_(pool) {}
  ~TaskGroup();
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  template <class F>
  void run(F&& f) {
    using Fn = std::decay_t<F>;
    detail::sched_point();
    // relaxed: the count only has to be in place before the task can finish,
    // which the push's release orders.
    if (state_.fetch_add(2, std::memory_order_relaxed) >= kMaxPending) {
      state_.fetch_sub(2, std::memory_order_relaxed);
      throw std::length_error("weft::TaskGroup: more than 2^31 pending tasks");
    }
    detail::Task* t;
    try {
      t = detail::new_task<GroupTask<Fn>>(std::forward<F>(f), this);
    } catch (...) {
      finish_one();
      throw;
    }
    pool_.push(t);  // on failure the task's discard() has called finish_one()
  }

  // Waits for every task run() so far; rethrows the first exception.
  void wait();

 private:
  static constexpr std::uint32_t kMaxPending = 0xfffffffeu;

  template <class F>
  struct GroupTask final : detail::Task {
    F fn;
    TaskGroup* group;
    template <class G>
    GroupTask(G&& g, TaskGroup* grp) : fn(std::forward<G>(g)), group(grp) {
      execute = &execute_impl;
      discard = &discard_impl;
    }
    static void execute_impl(detail::Task* t) noexcept {
      auto* self = static_cast<GroupTask*>(t);
      TaskGroup* g = self->group;
      detail::GroupFrame frame{g, detail::t_group_frames};
      detail::t_group_frames = &frame;
      try {
        self->fn();
      } catch (...) {
        g->record(std::current_exception());
      }
      detail::t_group_frames = frame.below;
      detail::delete_task(self);
      g->finish_one();
    }
    static void discard_impl(detail::Task* t) noexcept {
      auto* self = static_cast<GroupTask*>(t);
      TaskGroup* g = self->group;
      detail::delete_task(self);
      g->finish_one();
    }
  };

  void record(std::exception_ptr e) noexcept;
  [[nodiscard]] bool running_on_this_thread() const noexcept;
  void finish_one() noexcept;
  static bool done(std::uint32_t w) noexcept { return (w >> 1) == 0; }

  ThreadPool& pool_;
  // Written by run() and by finishing tasks on any thread; read by wait().
  alignas(detail::kCacheLine) std::atomic<std::uint32_t> state_{0};
  // Set once by the first task that throws (error_claimed_ arbitrates).
  std::atomic<bool> error_claimed_{false};
  std::exception_ptr error_;
};

}  // namespace weft
