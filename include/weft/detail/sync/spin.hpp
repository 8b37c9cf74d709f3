// weft/detail/sync/spin.hpp — the spin half of spin-then-park.
//
// spin_until(pred, opts) polls `pred` with a `pause` between polls for at
// most the thread's current budget (WaitOptions::spin, shrunk by adaptation).
// The waiter's condition is a load of a line another thread will write:
// polling it every pause costs nothing extra while the line sits in our cache
// (shared state) and notices the store one cache-line transfer after it
// lands, so by default there is no backoff between polls (that is for
// read-modify-writes that contend, see Backoff). A poll that reads many
// lines other threads write (a pool worker's search) may ask for a pause
// that doubles between polls (`max_gap_pauses`). The clock is read once per
// kPollsPerClockRead pauses.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "weft/sync/cpu_relax.hpp"
#include "weft/sync/wait_options.hpp"

namespace weft::detail {

// Per-thread adaptation state (see wait_options.hpp). shift = log2 of how
// much the budget is shrunk.
struct SpinTuner {
  static constexpr std::uint32_t kMaxShift = 6;            // budget / 64 at the least
  static constexpr std::uint32_t kMinProbeInterval = 16;   // full-budget probes: at most 1 in 16 waits,
  static constexpr std::uint32_t kMaxProbeInterval = 1024;  // at least 1 in 1024
  std::uint32_t shift = 0;
  std::uint32_t waits = 0;
  std::uint32_t probe_interval = kMinProbeInterval;  // doubles after each failed probe
};

// Gives the CPU to another runnable thread, if there is one (sched_yield).
void yield_cpu() noexcept;
// About how many cpu_relax() calls take `ns` on this host, at least 1: a
// `pause` costs ~140 cycles on Intel since Skylake and a few dozen on
// AMD, so a wait measured in pauses must be converted, not hard-coded.
// The cost is measured once per process (~10 us, on first use: call it
// where setup belongs, not on a hot path).
int pauses_for(std::int64_t ns) noexcept;
// Yields before parking: with more runnable threads than CPUs the thread
// that will end our wait may be waiting for this very CPU, and a yield hands
// it over for ~1 µs where a park+wake costs ~20 µs; with an idle CPU the
// call returns at once. Not free, though, and not only for the ~1 µs of the
// call: under the kernel's EEVDF scheduler (Linux >= 6.6) each sched_yield
// pushes the thread's virtual deadline a slice later, and that debt is still
// there when the thread is next woken, so its wake-up no longer preempts the
// waker. On the Intel host of docs/results/wake-path-intel-vm.md a pool
// worker that yielded 8 times before each park started a task posted to it
// ~10 us after the post instead of ~2 us (a condition-variable pool given the
// same 8 yields took 9.3 and 10.3 us, against 2.5 and 6.4 without). So a wait
// with no spin budget does not yield either (spin_until() below), and a wait
// that has nobody to hand its CPU to - a pool worker's search - passes 0.
inline constexpr int kYieldsBeforePark = 4;
SpinTuner& this_thread_tuner() noexcept;

inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The outcome of a whole wait, for adaptation.
struct SpinOutcome {
  bool satisfied;          // pred became true before parking
  bool probe;              // this wait spun the full budget to test the water
  bool yielded;            // it became true only after the spin, while yielding
  std::int64_t start_ns;   // when the spin began (0 if the first poll succeeded)
};

inline constexpr int kPollsPerClockRead = 16;  // ~0.15 µs of pauses on the Intel host, ~0.4 µs on the AMD one

// `max_gap_pauses` > 1: the pause between polls doubles up to that many
// (for a `pred` that reads lines other threads write, where each poll costs
// them a line transfer); the clock is still read every kPollsPerClockRead
// pauses, so the budget is kept to within one gap and one poll.
//
// `brief_at_floor`: once the tuner has shrunk the budget as far as it goes
// (the last kMaxShift waits all parked), a wait that is not a probe looks
// once and returns, instead of the few free polls and the clock round that
// make a floor of ~10 polls under any budget. For a pool worker's search
// (each poll loads the lines other threads write), that floor was a third
// of an idle worker's CPU per task at one task per ms (2 vCPUs, AMD EPYC:
// 11 looks per search). A look that finds its condition still counts as a
// spin that paid, and probes still run, so the budget grows back as ever.
template <class Pred>
SpinOutcome spin_until(Pred&& pred, const WaitOptions& opts, int yields = kYieldsBeforePark,
                       int max_gap_pauses = 1, bool brief_at_floor = false) noexcept {
  // No budget: one look and no clock, as the caller asked to park at once.
  // The polls below are a floor under a budget, not a spin of their own: a
  // worker's park with no spin ran 20 pauses and a clock read first, ~7%
  // of an idle worker's CPU at one task per ms (2 vCPUs, Intel Xeon, where
  // a pause takes 15 ns). start_ns 0: nothing for the tuner to learn.
  if (opts.spin.count() <= 0) return {pred(), false, false, 0};
  // At the floor, the one look comes first (below); otherwise a few polls
  // before touching the clock: most waits in a busy pipeline end within a
  // cache-line transfer or two, and need not reach the thread's tuner.
  SpinTuner* tuner = brief_at_floor && opts.adaptive ? &this_thread_tuner() : nullptr;
  const bool at_floor = tuner != nullptr && tuner->shift == SpinTuner::kMaxShift;
  for (int i = 0; i < 4 && !at_floor; ++i) {
    if (pred()) return {true, false, false, 0};
    cpu_relax();
  }
  const std::int64_t start = now_ns();
  std::int64_t budget = opts.spin.count();
  bool probe = false;
  if (opts.adaptive) {
    // A shrunk budget cannot see that spinning would pay again (a park
    // always looks long: it includes the wake-up latency), so now and then
    // a wait spins the full budget to find out.
    SpinTuner& t = tuner != nullptr ? *tuner : this_thread_tuner();
    probe = t.shift > 0 && ++t.waits % t.probe_interval == 0;
    if (!probe) budget >>= t.shift;
  }
  if (at_floor && !probe) return {pred(), false, false, start};
  const std::int64_t deadline = start + budget;
  int gap = 1;
  for (;;) {
    for (int paused = 0; paused < kPollsPerClockRead;) {
      if (pred()) return {true, probe, false, start};
      for (int i = 0; i < gap; ++i) cpu_relax();
      paused += gap;
      gap = std::min(2 * gap, max_gap_pauses);
    }
    if (now_ns() >= deadline) break;
  }
  // No budget, no yields: the caller asked to park at once.
  for (int i = 0, n = opts.spin.count() == 0 ? 0 : yields; i < n; ++i) {
    if (pred()) return {true, probe, true, start};
    yield_cpu();
  }
  return {pred(), probe, true, start};
}

// Feeds a finished wait back into the thread's tuner. `parked_until_ns` is
// when the parked waiter saw its condition (only read if !satisfied).
inline void adapt(const SpinOutcome& o, const WaitOptions& opts, std::int64_t parked_until_ns) noexcept {
  if (!opts.adaptive || o.start_ns == 0) return;
  SpinTuner& t = this_thread_tuner();
  // The spin paid if it ended the wait, or if the wait was so short that a
  // longer spin would have. A wait that yielded its way out did not.
  const bool paid = (o.satisfied && !o.yielded) ||
                    (!o.satisfied && parked_until_ns - o.start_ns < opts.spin.count() / 2);
  if (o.probe) {
    // Probes cost a full budget each: back off from probing while they fail.
    if (paid) {
      t.shift = 0;
      t.probe_interval = SpinTuner::kMinProbeInterval;
    } else if (t.probe_interval < SpinTuner::kMaxProbeInterval) {
      t.probe_interval *= 2;
    }
  } else if (paid) {
    if (t.shift > 0) --t.shift;
  } else if (t.shift < SpinTuner::kMaxShift) {
    ++t.shift;
  }
  if (t.shift == 0) t.probe_interval = SpinTuner::kMinProbeInterval;
}

}  // namespace weft::detail
