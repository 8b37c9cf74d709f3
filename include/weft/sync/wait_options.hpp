/// @file
/// weft/sync/wait_options.hpp — how long a waiter spins before it parks.
///
/// Every blocking wait in weft (Event, Parker, Future, TaskGroup, idle pool
/// workers) spins with `pause` for at most `spin`, then parks on a futex.
///
/// Why the default is what it is (ski rental): parking costs the waiter a
/// sleep and the notifier a system call, and the wake-up reaches the waiter
/// only after the park+wake latency W. Spinning for W, then parking, costs at
/// most 2x what an oracle that knew the wait's length would pay; spinning
/// longer than W can never pay, spinning much shorter turns waits that would
/// have ended a little later into sleeps that each cost W. So the budget is W,
/// measured: `calibrate()` times futex park+wake round trips on this machine.
/// Without calibration the default is kDefaultSpin, the median W measured on
/// the machine weft was developed on (2 vCPUs under KVM: 21–25 µs median
/// wake-up; see docs/design/waiting.md). The environment variable
/// WEFT_SPIN_NS, read once at start-up, overrides it.
///
/// Adaptation: the budget above is a ceiling. Each thread keeps its own
/// estimate of whether spinning pays. A wait that ended while spinning, or that
/// parked but was woken within half the budget, halves the thread's shrink
/// factor; a wait that parked longer doubles it (down to budget / 64). With
/// more runnable threads than CPUs, spinning only delays the thread that would
/// have set the flag, every spin fails, and the budget collapses, so waits go
/// straight to the futex; when spins start to succeed again the budget grows
/// back. `adaptive = false` keeps the full budget.
#pragma once

#include <chrono>
#include <cstdint>

namespace weft {

/// How a blocking wait waits: how long it spins before it sleeps.
struct WaitOptions {
  /// The spin budget in time (a ceiling when adaptive).
  std::chrono::nanoseconds spin = default_spin();
  /// Shrink the budget for threads whose spins keep failing.
  bool adaptive = true;

  /// The process-wide default budget used by default-constructed WaitOptions.
  static std::chrono::nanoseconds default_spin() noexcept;
  /// Sets it (clamped to [0, 10 ms]); thread-safe, affects later waits.
  static void set_default_spin(std::chrono::nanoseconds spin) noexcept;

  /// The default budget before calibration or WEFT_SPIN_NS: 20 us.
  static constexpr std::chrono::nanoseconds kDefaultSpin{20'000};
};

/// What calibrate() measured.
struct Calibration {
  double pause_ns = 0;            ///< cost of one cpu_relax()
  double wake_ns = 0;             ///< median futex park->wake one-way latency
  double wake_min_ns = 0;         ///< fastest observed
  double wake_max_ns = 0;         ///< slowest observed
  double notify_ns = 0;           ///< median time the waker spends in the wake call
  int samples = 0;                ///< round trips measured
  std::chrono::nanoseconds spin{0};  ///< the budget it recommends: wake_ns
};

/// Measures this machine's park+wake cost with two threads ping-ponging over
/// futexes (a few milliseconds; `rounds` round trips). It does not change the
/// default: call WaitOptions::set_default_spin(c.spin) to adopt it, or use
/// calibrate_default().
Calibration calibrate(int rounds = 200);
/// calibrate() once per process and adopt the result; later calls return the
/// first result.
const Calibration& calibrate_default();

}  // namespace weft
