#include "weft/sync/parker.hpp"

#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/spin.hpp"

namespace weft {

bool Parker::park_slow(const WaitOptions& opts, std::chrono::nanoseconds timeout) noexcept {
  const std::int64_t deadline = timeout > std::chrono::nanoseconds::zero()
                                    ? detail::now_ns() + timeout.count()
                                    : 0;
  // relaxed poll: the acquire that orders the unparker's writes is the
  // fetch_sub / compare-exchange below that consumes the permit.
  const auto spun = detail::spin_until(
      [this] { return state_.load(std::memory_order_relaxed) == kNotified; }, opts);

  detail::sched_point();
  // kNotified -> kEmpty (take the permit) or kEmpty -> kParked (announce the
  // sleep), in one step. acquire: pairs with unpark()'s release exchange.
  if (state_.fetch_sub(1, std::memory_order_acquire) == kNotified) {
    detail::adapt(spun, opts, detail::now_ns());
    return true;
  }
  for (;;) {
    std::int64_t remaining = 0;
    if (deadline != 0) {
      remaining = deadline - detail::now_ns();
      if (remaining <= 0) {
        // Withdraw the announcement. If an unpark() landed meanwhile the
        // word is kNotified and we take that permit instead of timing out.
        // acquire: as above, when it was kNotified.
        const bool got = state_.exchange(kEmpty, std::memory_order_acquire) == kNotified;
        detail::adapt(spun, opts, detail::now_ns());
        return got;
      }
    }
    detail::sched_point();
    detail::futex_wait(state_, kParked, std::chrono::nanoseconds(remaining));
    detail::sched_point();
    std::uint32_t expected = kNotified;
    // acquire: pairs with unpark()'s release. Failure (still kParked) is a
    // spurious wake-up or a timeout: go round again.
    if (state_.compare_exchange_strong(expected, kEmpty, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      detail::adapt(spun, opts, detail::now_ns());
      return true;
    }
  }
}

void Parker::wake_slow() noexcept { detail::futex_wake(state_, 1); }

}  // namespace weft
