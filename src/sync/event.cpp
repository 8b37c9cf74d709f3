#include "weft/sync/event.hpp"

#include <cstdint>

#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sync/wait.hpp"

namespace weft {

namespace {
using W = detail::EventWord;

// Event's side of the engine (state table in event.hpp).
struct EventWait : detail::WaitProtocolBase {
  std::atomic<std::uint32_t>& state;

  // acquire: a poll that sees kSet must also see the setter's writes.
  bool poll() const noexcept { return (state.load(std::memory_order_acquire) & W::kSet) != 0; }
  detail::WaitStep announce() noexcept {
    std::uint32_t s = state.load(std::memory_order_acquire);  // acquire: as in poll()
    if ((s & W::kSet) != 0) return detail::WaitStep::done();
    // Announce a sleeper so set() makes the wake call. relaxed: the CAS
    // only has to be ordered against set()'s compare-exchange on this same
    // word, which the word's modification order already does; a failure
    // means the word changed (set, a stop, or another waiter announced):
    // look again.
    if ((s & W::kWaiters) == 0) {
      if (!state.compare_exchange_weak(s, s | W::kWaiters, std::memory_order_relaxed, std::memory_order_relaxed))
        return detail::WaitStep::retry();
      s |= W::kWaiters;
    }
    // Sleeps only if the word still holds what we saw: a set() or a stop
    // after our announcement changed it, and the kernel returns at once.
    return detail::WaitStep::sleep(s);
  }
  void stop_wake() noexcept {
    // release: the stop request happens before any announce() that reads
    // this value or a later one (every write to the word is an RMW, so they
    // continue this release sequence). The count moves even on a set word,
    // so that no later reset() and announcement can bring back a value a
    // waiter announced before the stop.
    const std::uint32_t s = state.fetch_add(W::kStop, std::memory_order_release);
    if ((s & W::kWaiters) != 0) detail::futex_wake(state, detail::kWakeAll);
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
