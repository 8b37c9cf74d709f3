// weft/detail/sync/asymmetric_fence.hpp — a Dekker pair whose hot side
// costs no fence instruction.
//
// The pool's sleep protocol is Dekker's: a worker that pushes a task (a
// store) then reads the idle word (a load), and a worker going to sleep
// announces it (an RMW) then reads the queues (loads); a seq_cst fence on
// each side between the two keeps them from missing each other. The pusher
// is the fork-join hot path (every spawn), the sleeper the cold one (a
// worker that has searched for its whole spin budget and found nothing).
// So the pusher's fence becomes a compiler barrier (light_fence()) and the
// sleeper's a membarrier(2) system call (heavy_fence(),
// MEMBARRIER_CMD_PRIVATE_EXPEDITED): the kernel makes every other thread of
// the process that is running on a CPU pass a full memory barrier before
// the call returns (threads not running passed one when they were switched
// out). For a pusher, that barrier falls somewhere in its program:
//   - between its store and its load: both sides fenced, Dekker as before;
//   - before its store: its load comes after the barrier, which comes after
//     the sleeper's announcement, so it sees the sleeper and wakes it;
//   - after its load: its store comes before the barrier, so the sleeper's
//     rescan, after the system call, sees the task.
// In each case one of them sees the other (folly's asymmetric barriers and
// Linux's own RCU use the same pair). Measured on a 2-vCPU KVM Xeon: the
// push's fence was 10-14% of a fork-join task (fib, skynet at 1 and 2
// workers), the system call ~150 ns against a sleep that costs a futex
// wait and a spin budget of microseconds before it.
//
// Where membarrier cannot be used (a kernel without it, a seccomp filter
// that refuses it, or WEFT_ASYMMETRIC_FENCE=0 in the environment), both
// sides are seq_cst fences, as before. The choice is made once, before any
// pool starts a worker (enable_asymmetric_fences() in PoolCore's
// constructor), and never changes: a pusher that skips its fence always
// faces sleepers that make the system call. A sleeper may make it late:
// IdleWorkers::announce_sleep() parks for a window first, and makes the
// call and rescans only if no waker came (a push that both sides missed
// waits for the window, never longer); a call made after the announcement
// serves the argument above wherever it falls before the rescan.
#pragma once

#include <atomic>

namespace weft::detail {

// Set once (false -> true) by enable_asymmetric_fences(), before the
// threads that read it exist.
extern std::atomic<bool> g_asymmetric_fences;

// Registers the process for membarrier's private expedited command, once;
// later calls return the first answer. True if the asymmetric pair is on.
bool enable_asymmetric_fences() noexcept;

// The hot side: between a push and the read of the idle word.
inline void light_fence() noexcept {
  // relaxed: written before any pool's workers started (thread creation
  // orders it) and never written again.
  if (g_asymmetric_fences.load(std::memory_order_relaxed)) {
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler keeps the store before the load
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

// The cold side: between a sleep announcement and the read of the queues
// (a searcher that finds a task makes none: it hands its search on,
// IdleWorkers::found()).
void heavy_fence() noexcept;

}  // namespace weft::detail
