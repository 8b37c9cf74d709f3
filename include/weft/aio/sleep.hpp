/// @file
/// weft/aio/sleep.hpp — timers for coroutines: a sleeping coroutine holds no
/// thread.
///
///   weft::Task<> tick(std::stop_token stop) {
///     co_await weft::sleep_for(std::chrono::milliseconds(5));   // on its pool after 5 ms
///     co_await weft::sleep_until(deadline, stop);               // a stop ends it early
///   }
///
/// Contract
/// - The coroutine resumes on its pool — a weft::Task's own (the one spawn(),
///   sync_wait(pool, …) or schedule() gave it), else ThreadPool::current(),
///   else weft::default_pool() — no earlier than the deadline.
/// - No worker waits: one timer thread per process, started by the first
///   timer, sleeps on a condition variable until the earliest deadline
///   (with a timer slack of 1 ns, so the kernel does not round it up by its
///   default 50 µs) and queues each due coroutine on its pool. Thousands of
///   pending timers cost nothing while they wait, and adding one wakes the
///   timer thread only when it is the new earliest. Adding and removing one
///   is O(log n).
/// - A stop token (the one given, else the Task's own, see
///   weft::current_stop_token()) ends the wait at once: the coroutine
///   resumes on its pool and the co_await throws weft::cancelled. A token
///   already stopped throws without suspending; a deadline already past
///   goes on without suspending.
/// - A coroutine still sleeping when the process exits is never resumed.
///   Its pool must outlive it, as for every weft resumption.
#pragma once

#include <chrono>
#include <coroutine>
#include <cstddef>
#include <stop_token>

#include "weft/detail/aio/waiter.hpp"

namespace weft {

/// @cond internal
namespace detail::aio {

struct TimerWaiter : Waiter {
  std::chrono::steady_clock::time_point deadline;
  std::size_t heap_index = static_cast<std::size_t>(-1);  // -1: not in the heap
};

// Queues `w` on the process's timer thread (starting it the first time).
void add_timer(TimerWaiter* w);

struct SleepAwaiter {
  TimerWaiter w;
  std::stop_token stop;

  SleepAwaiter(std::chrono::steady_clock::time_point deadline, std::stop_token s) : stop(std::move(s)) {
    w.deadline = deadline;
  }
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> coro) {
    return w.suspend(coro, stop, [&] {
      if (w.deadline <= std::chrono::steady_clock::now()) return false;  // past: on at once
      add_timer(&w);
      return true;
    });
  }
  void await_resume() const { w.check_cancelled(); }
};

}  // namespace detail::aio
/// @endcond

/// co_await sleep_until(t): resumes on the coroutine's pool at `t` or later;
/// a stop throws weft::cancelled. Any clock: a deadline on another clock is
/// converted to steady_clock once, when called.
template <class Clock, class Duration>
detail::aio::SleepAwaiter sleep_until(std::chrono::time_point<Clock, Duration> deadline,
                                      std::stop_token stop = {}) {
  using steady = std::chrono::steady_clock;
  if constexpr (std::is_same_v<Clock, steady>) {
    return {std::chrono::time_point_cast<steady::duration>(deadline), std::move(stop)};
  } else {
    const auto left = std::chrono::duration_cast<steady::duration>(deadline - Clock::now());
    return {steady::now() + left, std::move(stop)};
  }
}

/// co_await sleep_for(d): sleep_until(now + d).
template <class Rep, class Period>
detail::aio::SleepAwaiter sleep_for(std::chrono::duration<Rep, Period> d, std::stop_token stop = {}) {
  return {std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(d),
          std::move(stop)};
}

/// How many times the timer thread has woken (a deadline, a new earliest
/// timer, a stop): what the idle-cost test and `weft aio` read.
std::size_t timer_thread_wakeups() noexcept;

}  // namespace weft
