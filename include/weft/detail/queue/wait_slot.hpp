// weft/detail/queue/wait_slot.hpp — where a blocked queue operation sleeps.
//
// A queue operation that cannot proceed (pop on empty, push on full) spins
// within WaitOptions, then sleeps on `seq` with a 1 ms time limit and looks
// again. The other side calls notify() after it changed the queue: when
// someone sleeps it bumps `seq` and wakes them. notify() reads `waiters`
// without a fence (one relaxed load on the hot path), so a sleeper that
// announced itself just as the other side looked can miss that wake-up; the
// 1 ms limit bounds what that costs, and the queue's contents are never at
// risk, only the latency of that one wake-up.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sync/spin.hpp"

namespace weft::detail {

struct alignas(kCacheLine) WaitSlot {
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint32_t> waiters{0};

  void notify() noexcept {
    // relaxed: a hint; a missed sleeper wakes within 1 ms (see above).
    if (waiters.load(std::memory_order_relaxed) != 0) {
      seq.fetch_add(1, std::memory_order_release);  // release: pairs with the sleeper's acquire of seq
      futex_wake(seq, kWakeAll);
    }
  }

  template <class Ready>
  void wait(Ready&& ready, const WaitOptions& opts) noexcept {
    const SpinOutcome spun = spin_until(ready, opts);
    if (spun.satisfied) {
      adapt(spun, opts, 0);
      return;
    }
    for (;;) {
      // relaxed: a count; the futex call below rechecks seq atomically.
      waiters.fetch_add(1, std::memory_order_relaxed);
      const std::uint32_t s = seq.load(std::memory_order_acquire);  // acquire: pairs with notify()
      if (!ready()) futex_wait(seq, s, std::chrono::milliseconds(1));
      waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: as above
      if (ready()) break;
    }
    adapt(spun, opts, now_ns());
  }
};

}  // namespace weft::detail
