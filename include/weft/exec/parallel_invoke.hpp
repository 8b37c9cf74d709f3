/// @file
/// weft/exec/parallel_invoke.hpp — call several functions at once, return
/// when all have returned.
///
///   weft::parallel_invoke(pool, [&] { left = build(a); }, [&] { right = build(b); });
///
/// The first function runs on the calling thread; the others are handed to
/// the pool, where idle workers take them (and, when none is idle, the
/// caller's wait runs them itself if it is a worker). So a call from inside
/// a task nests to any depth, even on a pool of one worker. Every function
/// runs, even after one has thrown; when all are done one exception is
/// rethrown (a handed-off function's, else the first function's) and any
/// others are dropped.
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
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

#include "weft/detail/exec/invoke_task.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

/// Calls every function, the first on this thread and the others on the
/// pool, and returns when all have returned (exceptions: this file's
/// opening comment).
namespace detail {
template <class G>
void invoke_call(void* f) {
  std::forward<G>(*static_cast<std::remove_reference_t<G>*>(f))();
}
// What the fork in the caller's frame can hand off: callable objects (a
// function reference has no object address; those go through a TaskGroup).
template <class... Fs>
inline constexpr bool kInvokeInFrame = (std::is_object_v<std::remove_reference_t<Fs>> && ...);
}  // namespace detail

template <std::invocable F, std::invocable... Fs>
void parallel_invoke(ThreadPool& pool, F&& first, Fs&&... rest) {
  if constexpr (sizeof...(Fs) == 0) {
    std::forward<F>(first)();
  } else {
    if constexpr (detail::kInvokeInFrame<Fs...>) {
      // On a worker of `pool`: the tasks live in this frame
      // (weft/detail/exec/invoke_task.hpp).
      std::array<detail::InvokeTask, sizeof...(Fs)> tasks{detail::InvokeTask(
          &detail::invoke_call<Fs>, const_cast<void*>(static_cast<const void*>(std::addressof(rest))))...};
      if (detail::invoke_fork(pool, tasks.data(), tasks.size())) {
        std::exception_ptr mine;
        try {
          std::forward<F>(first)();
        } catch (...) {
          mine = std::current_exception();  // still join: the tasks reference rest...
        }
        detail::invoke_join(tasks.data(), tasks.size());
        for (detail::InvokeTask& t : tasks)
          if (t.error) std::rethrow_exception(t.error);
        if (mine) std::rethrow_exception(mine);
        return;
      }
    }
    TaskGroup g(pool);
    std::exception_ptr mine;
    try {
      (g.run([&rest] { std::forward<Fs>(rest)(); }), ...);
      std::forward<F>(first)();
    } catch (...) {
      mine = std::current_exception();  // still wait: the tasks reference rest...
    }
    g.wait();  // rethrows a task's exception
    if (mine) std::rethrow_exception(mine);
  }
}

template <std::invocable F, std::invocable... Fs>
void parallel_invoke(F&& first, Fs&&... rest) {
  parallel_invoke(default_pool(), std::forward<F>(first), std::forward<Fs>(rest)...);
}

}  // namespace weft
