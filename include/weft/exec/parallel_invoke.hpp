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
/// Memory ordering: everything the functions did happens before the call
/// returns.
#pragma once

#include <concepts>
#include <exception>
#include <type_traits>
#include <utility>

#include "weft/exec/default_pool.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

/// Calls every function, the first on this thread and the others on the
/// pool, and returns when all have returned (exceptions: this file's
/// opening comment).
template <std::invocable F, std::invocable... Fs>
void parallel_invoke(ThreadPool& pool, F&& first, Fs&&... rest) {
  if constexpr (sizeof...(Fs) == 0) {
    std::forward<F>(first)();
  } else {
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

/// The same on default_pool().
template <std::invocable F, std::invocable... Fs>
void parallel_invoke(F&& first, Fs&&... rest) {
  parallel_invoke(default_pool(), std::forward<F>(first), std::forward<Fs>(rest)...);
}

}  // namespace weft
