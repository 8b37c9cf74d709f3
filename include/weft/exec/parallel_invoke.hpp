/// @file
/// weft/exec/parallel_invoke.hpp — call several functions at once, return
/// when all have returned.
///
///   weft::parallel_invoke(pool, [&] { left = build(a); }, [&] { right = build(b); });
///   weft::parallel_invoke_n(pool, kids.size(), [&](std::size_t i) { out[i] = build(kids[i]); });
///
/// The first function runs on the calling thread; the others are handed to
/// the pool, where idle workers take them (and, when none is idle, the
/// caller's wait runs them itself if it is a worker). So a call from inside
/// a task nests to any depth, even on a pool of one worker. Every function
/// runs, even after one has thrown; when all are done one exception is
/// rethrown (a handed-off function's, else the first function's) and any
/// others are dropped.
///
/// The functions may run one after another on the calling thread (on a pool
/// of one worker; or, for an n-way call inside a task, while no worker is
/// idle: its join then takes them back together, and hands the rest back to
/// the pool as soon as a worker goes idle between two of them). So a
/// function must not wait for another function of the same call: that wait
/// can last for ever.
///
/// Cost: called on a worker of `pool` (inside a task, the recursive case),
/// the handed-off functions' tasks live in the caller's stack frame: a fork
/// whose task no thief took costs a push and a pop on the worker's own
/// deque, no allocation and no atomic read-modify-write. Elsewhere (a
/// thread outside the pool) it is a TaskGroup's run()s and wait(), taking
/// the pool's seat as TaskGroup::wait() does.
///
/// Memory ordering: everything the functions did happens before the call
/// returns.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "weft/detail/exec/invoke_task.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

namespace detail {
template <class G>
void invoke_call(void* f, std::size_t /*index*/) {
  std::forward<G>(*static_cast<std::remove_reference_t<G>*>(f))();
}
template <class G>
void invoke_call_n(void* f, std::size_t index) {
  (*static_cast<std::remove_reference_t<G>*>(f))(index);
}
// On a worker of `pool`: forks tasks[0..n), runs here(), joins (join(),
// which returns once every task has run), then rethrows the first
// handed-off error in order, else here()'s. False, with nothing done,
// anywhere else.
template <class Here, class Join>
bool invoke_in_frame(ThreadPool& pool, InvokeTask* tasks, std::size_t n, Here&& here, Join&& join) {
  if (!invoke_fork(pool, tasks, n)) return false;
  std::exception_ptr mine;
  try {
    here();
  } catch (...) {
    mine = std::current_exception();  // still join: the tasks reference the caller's functions
  }
  join();
  for (std::size_t i = 0; i < n; ++i)
    if (tasks[i].error) std::rethrow_exception(tasks[i].error);
  if (mine) std::rethrow_exception(mine);
  return true;
}
// Anywhere else: fork(g) run()s the handed-off calls on a TaskGroup, then
// here(), then the group's wait() (which rethrows a task's error first).
template <class Fork, class Here>
void invoke_in_group(ThreadPool& pool, Fork&& fork, Here&& here) {
  TaskGroup g(pool);
  std::exception_ptr mine;
  try {
    fork(g);
    here();
  } catch (...) {
    mine = std::current_exception();  // still wait: the tasks reference the caller's functions
  }
  g.wait();
  if (mine) std::rethrow_exception(mine);
}
// What the fork in the caller's frame can hand off: callable objects (a
// function reference has no object address; those go through a TaskGroup).
template <class... Fs>
inline constexpr bool kInvokeInFrame = (std::is_object_v<std::remove_reference_t<Fs>> && ...);
}  // namespace detail

/// Calls every function, the first on this thread and the others on the
/// pool, and returns when all have returned (exceptions: this file's
/// opening comment).
template <std::invocable F, std::invocable... Fs>
void parallel_invoke(ThreadPool& pool, F&& first, Fs&&... rest) {
  if constexpr (sizeof...(Fs) == 0) {
    std::forward<F>(first)();
  } else {
    const auto here = [&first] { std::forward<F>(first)(); };
    if constexpr (detail::kInvokeInFrame<Fs...>) {
      // The tasks live in this frame (weft/detail/exec/invoke_task.hpp).
      std::array<detail::InvokeTask, sizeof...(Fs)> tasks{detail::InvokeTask(
          &detail::invoke_call<Fs>, const_cast<void*>(static_cast<const void*>(std::addressof(rest))))...};
      // One handed-off function (the common two-way fork): invoke_join()
      // in its halves, so that the task, taken back, runs by a direct call
      // the compiler can inline rather than through its function pointer.
      // (For more, the library's loop: a call per task taken back would
      // cost more than the pointer saves.)
      const auto join = [&] {
        if constexpr (sizeof...(Fs) == 1) {
          if (detail::invoke_take_back(&tasks[0])) {
            try {
              (std::forward<Fs>(rest)(), ...);
            } catch (...) {
              tasks[0].error = std::current_exception();
            }
          } else {
            detail::invoke_wait(tasks.data(), 1);
          }
        } else {
          detail::invoke_join(tasks.data(), tasks.size());
        }
      };
      if (detail::invoke_in_frame(pool, tasks.data(), tasks.size(), here, join)) return;
    }
    detail::invoke_in_group(
        pool, [&](TaskGroup& g) { (g.run([&r = rest] { std::forward<Fs>(r)(); }), ...); }, here);
  }
}

/// How many of parallel_invoke_n()'s handed-off calls live in the caller's
/// stack frame, in room sized to the call; more go to one allocation.
inline constexpr std::size_t kParallelInvokeInFrame = 64;

/// Calls f(0), f(1), ..., f(n - 1) at once, f(n - 1) on the calling thread
/// and the others on the pool (oldest first to thieves, as a TaskGroup's
/// run()s), and returns when all have returned: parallel_invoke() for a
/// count known only at run time, such as a tree node's children. The same
/// cost, exceptions and ordering as parallel_invoke().
template <class F>
  requires std::invocable<F&, std::size_t>
void parallel_invoke_n(ThreadPool& pool, std::size_t n, F&& f) {
  if (n == 0) return;
  const std::size_t handed = n - 1;
  if (handed == 0) {
    f(std::size_t{0});
    return;
  }
  // Refused on either path: beyond it the tasks cannot be sized (nor run).
  if (handed > std::numeric_limits<std::size_t>::max() / sizeof(detail::InvokeTask))
    throw std::length_error("weft::parallel_invoke_n: " + std::to_string(n) + " calls cannot be counted in memory");
  const auto here = [&f, handed] { f(handed); };
  // Storage for the tasks only where they will be forked (a worker of the
  // pool; asked first only when it would be an allocation). In the frame,
  // exactly `handed` tasks' room (alloca(): freed when this call returns,
  // as the tasks are), so a tree node with 9 children (skynet) costs no
  // allocation and one with 2 no more stack than it needs; a fixed array
  // would have to be sized for the widest node at every level of a deep
  // recursion. Never more than kParallelInvokeInFrame tasks' room (3.5 KiB).
  if (handed <= kParallelInvokeInFrame || pool.is_worker()) {
    std::unique_ptr<std::byte[]> on_heap;  // new[]'s alignment covers InvokeTask's
    void* room = nullptr;
    if (handed > kParallelInvokeInFrame) {
      on_heap = std::make_unique_for_overwrite<std::byte[]>(handed * sizeof(detail::InvokeTask));
      room = on_heap.get();
    } else {
      static_assert(alignof(detail::InvokeTask) <= alignof(std::max_align_t), "alloca()'s alignment");
      room = __builtin_alloca(handed * sizeof(detail::InvokeTask));
    }
    const detail::InvokeTasks tasks(room, handed, &detail::invoke_call_n<F>,
                                    const_cast<void*>(static_cast<const void*>(std::addressof(f))));
    const auto join = [&tasks, handed] { detail::invoke_join(tasks.data(), handed); };
    if (detail::invoke_in_frame(pool, tasks.data(), handed, here, join)) return;
  }
  detail::invoke_in_group(
      pool, [&f, handed](TaskGroup& g) {
        for (std::size_t i = 0; i < handed; ++i) g.run([&f, i] { f(i); });
      },
      here);
}

/// The same on default_pool().
template <std::invocable F, std::invocable... Fs>
void parallel_invoke(F&& first, Fs&&... rest) {
  parallel_invoke(default_pool(), std::forward<F>(first), std::forward<Fs>(rest)...);
}

}  // namespace weft
