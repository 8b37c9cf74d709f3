#include "weft/sync/event.hpp"

#include <cstdint>
#include <limits>

#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sync/wait.hpp"

namespace weft {

namespace {
using W = detail::EventWord;

// Event's side of the engine (state table in event.hpp).
struct EventWait : detail::WaitProtocolBase {
  std::atomic<std::uint32_t>& state;

  // acquire: a poll that sees kSet must also see the setter's writes.
  bool poll() const noexcept { return state.load(std::memory_order_acquire) == W::kSet; }
  detail::WaitStep announce() noexcept {
    std::uint32_t s = state.load(std::memory_order_acquire);  // acquire: as in poll()
    if (s == W::kSet) return detail::WaitStep::done();
    // Announce a sleeper so set() makes the wake call. relaxed: the CAS
    // only has to be ordered against set()'s exchange on this same word,
    // which the word's modification order already does; a failure means
    // the word changed (set, or another waiter announced): look again.
    if (s == W::kUnset) {
      if (!state.compare_exchange_weak(s, W::kWaiters, std::memory_order_relaxed, std::memory_order_relaxed))
        return detail::WaitStep::retry();
      s = W::kWaiters;
    }
    // Sleeps only if the word still holds what we saw: a set() or a stop's
    // wake-up after our announcement changed it, and the kernel returns at once.
    return detail::WaitStep::sleep(s);
  }
  static std::uint32_t bumped(std::uint32_t s) noexcept {
    if (s == W::kSet) return W::kSet;
    return s == W::kUnset || s == std::numeric_limits<std::uint32_t>::max() ? W::kWaiters : s + 1;
  }
  void stop_wake() noexcept {
    std::uint32_t s = state.load(std::memory_order_relaxed);  // relaxed: the CAS below checks it
    // release: the stop request happens before any announce() that reads
    // this value or a later one (every write to the word is an RMW, so they
    // continue this release sequence). kSet stays kSet but is still written,
    // so that a reset() after it cannot hide the stop. A bump past the top
    // wraps to kWaiters: a sleeper would have to miss 2^32 stops to be fooled.
    while (!state.compare_exchange_weak(s, bumped(s), std::memory_order_release, std::memory_order_relaxed)) {
    }
    if (s != W::kSet) detail::futex_wake(state, detail::kWakeAll);
  }
  bool give_up() const noexcept { return poll(); }
  std::atomic<std::uint32_t>& word() noexcept { return state; }
};
}  // namespace

bool Event::wait_slow(const WaitOptions& opts, std::chrono::nanoseconds timeout) const noexcept {
  EventWait p{{}, state_};
  return detail::wait_until(p, opts, detail::Deadline::after(timeout));
}

bool Event::wait_slow(const WaitOptions& opts, const std::stop_token& stop) const noexcept {
  EventWait p{{}, state_};
  return detail::wait_until(p, opts, detail::Deadline{}, stop);
}

void Event::wake_slow() noexcept { detail::futex_wake(state_, detail::kWakeAll); }

}  // namespace weft
