// weft/detail/exec/invoke_task.hpp — parallel_invoke's fork on a worker:
// tasks in the caller's stack frame, no allocation, no group.
//
// A worker of the pool that calls parallel_invoke() pushes one InvokeTask
// per handed-off function onto its own deque (invoke_fork()), runs the
// first function, then joins (invoke_join()): newest first, it takes back
// each task no thief has taken and runs it in place, with no atomic RMW at
// all; for any task a thief took it waits (helping) until the thief's
// finish has taken the task's one unit off its word. So a fork whose task
// is not stolen costs a deque push and a pop, as in libfork or oneTBB's
// parallel_invoke, instead of a TaskGroup's allocation, counting and wait.
// An n-way fork's join takes its tasks back together while no worker is
// idle (WorkStealingDeque::take_newest_n(): one fence for the n pops;
// model: tests/model/take_newest.pml).
//
// The word: (units << 2) | waiter bit, block_on()'s protocol with one unit
// (as TaskGroup's root). Model: tests/model/invoke_join.pml.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>

#include "weft/detail/exec/task.hpp"

namespace weft {
class ThreadPool;
}

namespace weft::detail {

struct InvokeTask : TaskNode {
  static constexpr std::uint32_t kUnit = 4;
  static constexpr std::uint32_t kWaiter = 1;

  // `call(fn, index)` runs the function; `fn` points at it, in the
  // caller's frame (parallel_invoke_n() calls one function with each index).
  InvokeTask(void (*c)(void*, std::size_t), void* f, std::size_t i = 0) noexcept : call(c), fn(f), index(i) {
    execute = &execute_stolen;
    discard = &discard_unrun;
  }
  InvokeTask(const InvokeTask&) = delete;
  InvokeTask& operator=(const InvokeTask&) = delete;

  // Runs the function on this thread, keeping its exception.
  void run_here() noexcept {
    try {
      call(fn, index);
    } catch (...) {
      error = std::current_exception();
    }
  }

  // How a worker that took the task off the deque (a thief, or the owner's
  // helping wait) runs it: the run, then the unit off the word; the
  // joiner may return, and the frame holding the task go, as soon as the
  // unit is off, so the wake uses only the word's address.
  static void execute_stolen(TaskNode* t) noexcept;
  // The discard every TaskNode has; nothing discards an InvokeTask
  // (invoke.cpp says why). Takes the unit off, as a run would.
  static void discard_unrun(TaskNode* t) noexcept;

  std::atomic<std::uint32_t> state{kUnit};
  void (*call)(void*, std::size_t);
  void* fn;
  std::size_t index;
  std::exception_ptr error;  // written by whoever runs it, read by the joiner after the unit is off
};

// n tasks constructed in `storage` (room for n, in the caller's frame or
// on the heap), destroyed with it.
class InvokeTasks {
 public:
  InvokeTasks(void* storage, std::size_t n, void (*call)(void*, std::size_t), void* fn) noexcept
      : tasks_(static_cast<InvokeTask*>(storage)), n_(n) {
    for (std::size_t i = 0; i < n; ++i) ::new (static_cast<void*>(tasks_ + i)) InvokeTask(call, fn, i);
  }
  InvokeTasks(const InvokeTasks&) = delete;
  InvokeTasks& operator=(const InvokeTasks&) = delete;
  ~InvokeTasks() {
    for (std::size_t i = 0; i < n_; ++i) tasks_[i].~InvokeTask();
  }
  [[nodiscard]] InvokeTask* data() const noexcept { return tasks_; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }

 private:
  InvokeTask* tasks_;
  std::size_t n_;
};

// Pushes tasks[0..n) onto the calling worker's deque, oldest first, if the
// calling thread is a worker of `pool` (ThreadPool::is_worker(), tested here
// in the same call: false, and nothing pushed, if not). If the deque cannot
// grow to hold them (std::bad_alloc), pushes none of them and rethrows.
bool invoke_fork(ThreadPool& pool, InvokeTask* tasks, std::size_t n);
// Returns once every task of tasks[0..n) has run, each exactly once: the
// ones still at the bottom of this worker's deque here, the others where
// they were taken (this thread helps meanwhile).
void invoke_join(InvokeTask* tasks, std::size_t n) noexcept;
// invoke_join()'s two halves, for a caller that runs a task it takes back
// itself (a direct call instead of the task's pointer): invoke_take_back()
// takes t back if it is still the newest task on this worker's deque (it
// then counts as run: the caller must run it, and must not touch its word);
// false if a thief took it or another task lies above it. invoke_wait()
// returns once the units of tasks[0..n) are off, helping meanwhile.
[[nodiscard]] bool invoke_take_back(InvokeTask* t) noexcept;
void invoke_wait(InvokeTask* tasks, std::size_t n) noexcept;

}  // namespace weft::detail
