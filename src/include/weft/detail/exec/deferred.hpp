// weft/detail/exec/deferred.hpp — work a worker thread puts off until it
// runs out of tasks.
//
// An io_uring submission is one system call however many operations it
// carries: a worker running many coroutines that each start a read queues
// their SQEs and submits them together (src/aio/async_file.cpp). The hook
// says "this thread holds work that is not submitted yet"; the pool's
// worker loop runs it before it looks for work elsewhere or sleeps, every
// kDeferredTicks tasks while it stays busy, and a helping wait runs it
// before it gives up helping. It never runs on a thread that is not a
// worker (those submit at once).
#pragma once

namespace weft::detail {

// The hook of this thread, or null. Set by the layer that defers, cleared
// by run_deferred() before it runs.
using DeferredFn = void (*)() noexcept;
// constinit: a plain TLS load in the worker loop, no lazy-init wrapper.
inline thread_local constinit DeferredFn t_deferred = nullptr;

// A busy worker runs its deferred work at least every this many tasks.
inline constexpr unsigned kDeferredTicks = 32;

// Runs and clears this thread's deferred work; false if there was none.
inline bool run_deferred() noexcept {
  const DeferredFn f = t_deferred;
  if (f == nullptr) return false;
  t_deferred = nullptr;
  f();
  return true;
}

}  // namespace weft::detail
