// weft/sync/event.hpp — a manual-reset event: set it, and every waiter goes.
//
// set() lets every current and future wait() return until reset(). wait()
// spins within WaitOptions (wait_options.hpp), then sleeps on a futex.
// is_set() never blocks. Any number of threads may wait, set and reset.
// wait(stop_token) also returns (false) once a stop is requested on the
// token: the request wakes the sleeper through a std::stop_callback, with
// no polling (docs/guide/cancellation.md).
//
// Memory ordering: everything a thread did before set() happens before
// everything a waiter does after a wait()/is_set() that observed that set.
// A reset() that races a set() can hide that set from waiters that had not
// yet observed it (they keep waiting for the next set()); a waiter that
// observed it returns. Use a counter or a Parker when every pulse must count.
//
// Destruction: safe as soon as wait() has returned in the thread that owns
// the Event, even if the setter is still inside set(): set()'s futex wake
// does not touch the Event's memory (the kernel only hashes its address).
//
// State (one 32-bit word on a cache line of its own):
//
//   state         meaning                     set()                 wait()                         reset()   a waiter's stop
//   ------------  --------------------------  --------------------  -----------------------------  --------  ----------------
//   kUnset        not set, nobody asleep      -> kSet               spin, then -> kWaiters, sleep  stays     -> kWaiters + wake
//   kSet          set                         stays                 returns                        -> kUnset stays (an RMW)
//   kWaiters + g  not set, someone may sleep  -> kSet + futex wake  sleep                          stays     -> g + 1, wake
//
// set() exchanges in kSet and makes the wake system call only when it saw
// kWaiters or above, so setting an event nobody sleeps on costs one atomic
// exchange. A stop requested on a waiter's token changes the word with a
// release RMW (bumping g, the only reason it moves) and wakes every sleeper:
// the stopped waiter returns, the others see a spurious wake-up and sleep
// again on the new value (weft/detail/sync/wait.hpp says why no stop is lost).
// reset() is a compare-exchange kSet->kUnset, so it can never overwrite
// kWaiters with kUnset (which would strand the sleepers). The values are
// detail::EventWord's (weft/detail/sync/word_states.hpp); the waiting side
// is src/sync/event.cpp, over the engine in weft/detail/sync/wait.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stop_token>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/word_states.hpp"
#include "weft/sync/wait_options.hpp"

namespace weft {

class Event {
 public:
  explicit Event(bool initially_set = false) noexcept : state_(initially_set ? W::kSet : W::kUnset) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void set() noexcept {
    detail::sched_point();
    // release: publishes the setter's writes to every waiter's acquire.
    // Exchange rather than store: the old value says whether anyone sleeps.
    if (state_.exchange(W::kSet, std::memory_order_release) >= W::kWaiters) wake_slow();
  }

  void reset() noexcept {
    detail::sched_point();
    std::uint32_t expected = W::kSet;
    // relaxed: reset publishes nothing; it only has to leave waiters alone,
    // which the compare-exchange guarantees.
    state_.compare_exchange_strong(expected, W::kUnset, std::memory_order_relaxed,
                                   std::memory_order_relaxed);
  }

  // acquire: pairs with set()'s release.
  [[nodiscard]] bool is_set() const noexcept { return state_.load(std::memory_order_acquire) == W::kSet; }

  void wait(const WaitOptions& opts = {}) const noexcept {
    if (is_set()) return;
    wait_slow(opts, std::chrono::nanoseconds::zero());
  }

  // True if the event was set within `timeout`.
  bool wait_for(std::chrono::nanoseconds timeout, const WaitOptions& opts = {}) const noexcept {
    if (is_set()) return true;
    if (timeout <= std::chrono::nanoseconds::zero()) return false;
    return wait_slow(opts, timeout);
  }

  // True if the event was set; false if a stop was requested on `stop` first
  // (when both happened, either answer may come back).
  bool wait(std::stop_token stop, const WaitOptions& opts = {}) const noexcept {
    if (is_set()) return true;
    return wait_slow(opts, stop);
  }

 private:
  using W = detail::EventWord;

  bool wait_slow(const WaitOptions& opts, std::chrono::nanoseconds timeout) const noexcept;
  bool wait_slow(const WaitOptions& opts, const std::stop_token& stop) const noexcept;
  void wake_slow() noexcept;

  // mutable: waiters announce themselves (kUnset -> kWaiters) from const wait().
  alignas(detail::kCacheLine) mutable std::atomic<std::uint32_t> state_;
};

}  // namespace weft

// The alignas on the word rounds the object up to a whole line, so
// neighbouring data cannot share it.
static_assert(sizeof(weft::Event) == weft::detail::kCacheLine && alignof(weft::Event) == weft::detail::kCacheLine);
