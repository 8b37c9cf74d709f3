// weft/detail/exec/idle_policy.hpp — two choices the pool's sleep protocol
// (src/exec/idle_workers.cpp) makes that do not touch its correctness, only
// its cost: how long an idle worker searches beyond its spin budget, and
// which parked worker the seat leases. Any budget and any sleeper are
// correct (tests/model/pool.pml and seat.pml leave both free); these are
// plain functions of their inputs so that tests can pin them down.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::detail {

// The search's stretch, one per worker (owner only). At level 0 a worker
// searches for its thread's spin budget (WaitOptions::spin, shrunk by the
// spin tuner of weft/detail/sync/spin.hpp while searches keep failing); at
// level k > 0 for WaitOptions::spin times 2^k, the tuner left out. After a
// park, climb() moves the level by when the task that ended it came,
// counted from the search's start (`task_at`: when a waker unparked the
// worker, or when its rescan found the task):
// - within twice the budget, while an outside caller holds the seat
//   (`seated`): up one, to at most 8x. Back-to-back parallel loops from an
//   outside caller end one loop and start the next a few tens of us apart;
//   on the 2-vCPU Intel host a park and wake-up cost 50-80 us of the next
//   loop's start, and OpenMP's team spins for ms between regions.
// - later: down one, back to the tuner at 0.
// - within twice the budget with nobody seated: unchanged. A longer search
//   elsewhere only adds a thief (a coroutine's hop, a fan-in from a worker)
//   where the tuner already decides.
// Without WaitOptions::adaptive the level stays 0.
struct SearchStretch {
  static constexpr int kMax = 3;  // 8x: 160 us at the default 20 us
  int level = 0;

  std::chrono::nanoseconds budget(std::chrono::nanoseconds base) const noexcept { return base * (1 << level); }
  void climb(std::int64_t spin_start, std::int64_t task_at, std::chrono::nanoseconds base, bool adaptive,
             bool seated) noexcept {
    if (!adaptive) return;
    if (task_at >= spin_start && task_at - spin_start < 2 * budget(base).count()) {
      if (seated && level < kMax) ++level;
    } else if (level > 0) {
      --level;
    }
  }
};

// Which sleeper the seat leases from `sleepers` (indices, most recent
// last), given the CPU each last announced its sleep on (`cpu_of[index]`,
// -1 unknown) and the caller's CPU `cpu`: among the kPlacementLook most
// recent, the most recent that last ran on `cpu`; failing that, the most
// recent. Returns a position in `sleepers`, which must not be empty.
//
// The seated caller computes in the leased worker's place and wakes the
// others with its pushes. The kernel queues a woken thread on its previous
// CPU or on the waker's, and on the 2-vCPU Intel host (`perf sched
// timehist`) it left one queued there behind the running waker, with the
// other CPU idle, until the next load balance up to a tick (4 ms) later. A
// worker that last ran on the caller's CPU is the one to leave parked:
// the one woken then last ran elsewhere (its effect on `weft pfor`'s sum:
// docs/design/pool.md, "The calling thread is one of the P").
inline constexpr std::size_t kPlacementLook = 8;
inline std::size_t pick_sleeper(const std::vector<int>& sleepers, const std::vector<int>& cpu_of,
                                int cpu) noexcept {
  const std::size_t n = sleepers.size();
  if (cpu >= 0) {
    for (std::size_t k = 0; k < std::min(n, kPlacementLook); ++k) {
      const std::size_t i = n - 1 - k;
      const auto w = static_cast<std::size_t>(sleepers[i]);
      if (w < cpu_of.size() && cpu_of[w] == cpu) return i;
    }
  }
  return n - 1;
}

}  // namespace weft::detail
