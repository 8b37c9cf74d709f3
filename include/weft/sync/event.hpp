/// @file
/// weft/sync/event.hpp — a manual-reset event: set it, and every waiter goes.
///
/// set() lets every current and future wait() return until reset(). wait()
/// spins within WaitOptions (wait_options.hpp), then sleeps on a futex.
/// is_set() never blocks. Any number of threads may wait, set and reset.
/// wait(stop_token) also returns (false) once a stop is requested on the
/// token: the request wakes the sleeper through a std::stop_callback, with
/// no polling (docs/guide/cancellation.md).
///
/// Memory ordering: everything a thread did before set() happens before
/// everything a waiter does after a wait()/is_set() that observed that set.
/// A reset() that races a set() can hide that set from waiters that had not
/// yet observed it (they keep waiting for the next set()); a waiter that
/// observed it returns. Use a counter or a Parker when every pulse must count.
///
/// Destruction: safe as soon as wait() has returned in the thread that owns
/// the Event, even if the setter is still inside set(): set()'s futex wake
/// does not touch the Event's memory (the kernel only hashes its address).
///
/// State (one 32-bit word on a cache line of its own): bit 0 kSet, bit 1
/// kWaiters (someone may sleep), bits 2.. a count of the stops requested on
/// the tokens of this Event's waiters (kStop each, wrapping within those
/// bits). set() and reset() keep the count; only a stop moves it.
///
///   bits 1..0     meaning                     set()                 wait()                         reset()   a waiter's stop
///   ------------  --------------------------  --------------------  -----------------------------  --------  ----------------
///   unset         not set, nobody asleep      -> set                spin, then -> waiters, sleep   stays     count + 1
///   set           set (never with waiters)    stays (written)       returns                        -> unset  count + 1
///   waiters       not set, someone may sleep  -> set, futex wake    sleep                          stays     count + 1, wake
///
/// set() makes the wake system call only when it saw kWaiters, so setting an
/// event nobody sleeps on costs one compare-exchange. set() clears kWaiters
/// (every sleeper is woken then), so reset() can clear kSet with one
/// fetch_and and never strands a sleeper. A stop requested on a waiter's
/// token adds kStop with a release RMW and wakes every sleeper if it saw
/// kWaiters: the stopped waiter returns, the others see a spurious wake-up
/// and sleep again on the new value (weft/detail/sync/wait.hpp says why no
/// stop is lost). The count is what makes that argument hold when set() and
/// reset() race the stop: the word after the stop never equals a value
/// announced before it, even if set, reset and another announcement bring
/// the low bits back (tests/model/event_stop.pml, -DRESET). The values are
/// detail::EventWord's (weft/detail/sync/word_states.hpp); the waiting side
/// is src/sync/event.cpp, over the engine in weft/detail/sync/wait.hpp.
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

/// A manual-reset event: set() releases every waiter until reset().
class Event {
 public:
  /// An event, set or not.
  explicit Event(bool initially_set = false) noexcept : state_(initially_set ? W::kSet : W::kUnset) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Sets the event and wakes every waiter; a system call only when one sleeps.
  void set() noexcept {
    detail::sched_point();
    std::uint32_t s = state_.load(std::memory_order_relaxed);  // relaxed: the CAS below checks it
    // release: publishes the setter's writes to every waiter's acquire (a
    // set event is still written, so a waiter that sees it synchronizes
    // with this set() too). A CAS loop rather than fetch_or: it must also
    // clear kWaiters and report whether that bit was there.
    while (!state_.compare_exchange_weak(s, (s | W::kSet) & ~W::kWaiters, std::memory_order_release,
                                         std::memory_order_relaxed)) {
    }
    if ((s & W::kWaiters) != 0) wake_slow();
  }

  /// Clears the event: later waits block until the next set().
  void reset() noexcept {
    detail::sched_point();
    // relaxed: reset publishes nothing. A set word never has kWaiters, and
    // an unset one is left as it is, so no sleeper's announcement is lost.
    state_.fetch_and(~W::kSet, std::memory_order_relaxed);
  }

  /// Whether the event is set now; never blocks. Observing a set orders the
  /// setter's writes before the caller's reads.
  // acquire: pairs with set()'s release.
  [[nodiscard]] bool is_set() const noexcept { return (state_.load(std::memory_order_acquire) & W::kSet) != 0; }

  /// Returns once the event is set: spins within `opts`, then sleeps.
  void wait(const WaitOptions& opts = {}) const noexcept {
    if (is_set()) return;
    wait_slow(opts, std::chrono::nanoseconds::zero());
  }

  /// True if the event was set within `timeout`.
  bool wait_for(std::chrono::nanoseconds timeout, const WaitOptions& opts = {}) const noexcept {
    if (is_set()) return true;
    if (timeout <= std::chrono::nanoseconds::zero()) return false;
    return wait_slow(opts, timeout);
  }

  /// True if the event was set; false if a stop was requested on `stop` first
  /// (when both happened, either answer may come back).
  bool wait(std::stop_token stop, const WaitOptions& opts = {}) const noexcept {
    if (is_set()) return true;
    return wait_slow(opts, stop);
  }

 private:
  using W = detail::EventWord;

  bool wait_slow(const WaitOptions& opts, std::chrono::nanoseconds timeout) const noexcept;
  bool wait_slow(const WaitOptions& opts, const std::stop_token& stop) const noexcept;
  void wake_slow() noexcept;

  // mutable: waiters announce themselves (set kWaiters) from const wait().
  alignas(detail::kCacheLine) mutable std::atomic<std::uint32_t> state_;
};

}  // namespace weft

// The alignas on the word rounds the object up to a whole line, so
// neighbouring data cannot share it.
static_assert(sizeof(weft::Event) == weft::detail::kCacheLine && alignof(weft::Event) == weft::detail::kCacheLine);
