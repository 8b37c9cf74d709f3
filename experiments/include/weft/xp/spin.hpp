// weft/xp/spin.hpp — sleep loops: how a lock's waiters wait (Intel: sleep loops for power and performance).
//
// T threads take work items from one shared queue: a count of remaining
// items behind one lock. Each item is a fixed amount of computation done
// outside the lock (a dependent multiply-add chain on a local, calibrated
// once per process to a time per item): coarse 100 µs, medium 10 µs, fine
// 1 µs. The total computation per run is fixed (`work_ms`), so a run at
// T=2 on two idle CPUs takes about work_ms / 2 of wall time whatever the
// granularity; finer items mean more trips through the lock.
//
// The lock's waiters wait by:
//   busy           test-and-set in a tight loop, no pause;
//   yield          test-and-set, sched_yield between tries (Windows Sleep(0));
//   sleep1ms       test-and-set, 1 ms sleep between tries (Sleep(1));
//   pause-backoff  test-and-test-and-set with weft::Backoff: pause, doubling
//                  up to 64 pauses, then sched_yield (the article's advice);
//   weft           Drepper's futex mutex ("Futexes are tricky", mutex 2 with
//                  the exchange-based slow path) whose waiters first run
//                  weft's adaptive spin (detail::spin_until: pause for the
//                  calibrated park+wake budget, shrunk per thread when spins
//                  keep failing, then a few yields) and then park on the futex;
//   std-mutex      std::mutex (glibc: a futex mutex, no spinning).
//
// Per run: wall time, process CPU seconds (the power proxy: a waiter that
// burns a CPU costs power), voluntary + involuntary context switches
// (getrusage), and energy from /sys/class/powercap (intel-rapl) where
// readable. A run that exceeds the time limit is stopped; its row says so,
// with the fraction of the work done.
#pragma once

#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

// busy, yield, sleep1ms, pause-backoff, weft, std-mutex
const std::vector<std::string>& spin_variants();
// coarse, medium, fine
const std::vector<std::string>& spin_granularities();
// Computation per item for a granularity name, in µs (coarse 100, medium 10,
// fine 1); throws std::invalid_argument for an unknown name.
double spin_item_us(const std::string& granularity);

struct SpinParams {
  std::vector<std::string> variants = spin_variants();
  std::vector<int> threads{2, 8, 32};
  std::vector<std::string> granularities = spin_granularities();
  double work_ms = 800;  // computation per run, summed over its items
  int reps = 3;
  double time_limit_s = 10;  // per run
};

Result run_spin(const SpinParams& p);

}  // namespace weft::xp
