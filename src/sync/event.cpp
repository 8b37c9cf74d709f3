#include "weft/sync/event.hpp"

#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/spin.hpp"

namespace weft {

bool Event::wait_slow(const WaitOptions& opts, std::chrono::nanoseconds timeout) const noexcept {
  const std::int64_t deadline = timeout > std::chrono::nanoseconds::zero()
                                    ? detail::now_ns() + timeout.count()
                                    : 0;
  // acquire: a poll that sees kSet must also see the setter's writes.
  const auto spun =
      detail::spin_until([this] { return state_.load(std::memory_order_acquire) == kSet; }, opts);
  if (spun.satisfied) {
    detail::adapt(spun, opts, 0);
    return true;
  }
  for (;;) {
    detail::sched_point();
    // acquire: as above.
    std::uint32_t s = state_.load(std::memory_order_acquire);
    if (s == kSet) break;
    if (s == kUnset) {
      // Announce a sleeper so set() makes the wake call. relaxed: the CAS
      // only has to be ordered against set()'s exchange on this same word,
      // which the word's modification order already does; a failure means
      // the word changed (set, or another waiter announced): look again.
      if (!state_.compare_exchange_weak(s, kWaiters, std::memory_order_relaxed,
                                        std::memory_order_relaxed)) {
        continue;
      }
    }
    std::int64_t remaining = 0;
    if (deadline != 0) {
      remaining = deadline - detail::now_ns();
      if (remaining <= 0) {
        detail::adapt(spun, opts, detail::now_ns());
        return try_wait();
      }
    }
    detail::sched_point();
    // Sleeps only if the word still says kWaiters: a set() between our
    // announcement and this call changed it, and the kernel returns at once.
    detail::futex_wait(state_, kWaiters, std::chrono::nanoseconds(remaining));
  }
  detail::adapt(spun, opts, detail::now_ns());
  return true;
}

void Event::wake_slow() noexcept { detail::futex_wake(state_, detail::kWakeAll); }

}  // namespace weft
