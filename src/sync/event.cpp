#include "weft/sync/event.hpp"

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
    if (s == W::kUnset &&
        !state.compare_exchange_weak(s, W::kWaiters, std::memory_order_relaxed, std::memory_order_relaxed))
      return detail::WaitStep::retry();
    // Sleeps only if the word still says kWaiters: a set() after our
    // announcement changed it, and the kernel returns at once.
    return detail::WaitStep::sleep(W::kWaiters);
  }
  bool give_up() const noexcept { return poll(); }
  std::atomic<std::uint32_t>& word() noexcept { return state; }
};
}  // namespace

bool Event::wait_slow(const WaitOptions& opts, std::chrono::nanoseconds timeout) const noexcept {
  EventWait p{{}, state_};
  return detail::wait_until(p, opts, detail::Deadline::after(timeout));
}

void Event::wake_slow() noexcept { detail::futex_wake(state_, detail::kWakeAll); }

}  // namespace weft
