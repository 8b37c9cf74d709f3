// weft/detail/exec/on_workers.hpp — the calling thread counts as one of the P.
//
// A blocking parallel algorithm (parallel_for, the reductions, scans,
// sorts and find) runs with at most P threads computing on a pool of P
// workers, whoever calls it:
// - on one of the pool's own workers it runs in place: that thread is one
//   of the P already;
// - on an outside thread it takes the pool's seat when it can (seat.hpp):
//   the caller computes as a worker while one parked worker sits out, as
//   oneTBB's arena gives an outside thread one of its slots and OpenMP's
//   master thread computes with its team;
// - otherwise (the seat is taken, no worker is parked, or the caller is a
//   worker of another pool) the call goes to the pool as one task, which a
//   worker runs, and the caller waits for it - spinning within its budget,
//   then parked - without computing.
// Before either, an outside caller computed a share beside the P workers:
// P + 1 threads on P CPUs, and a fixed split then waited for whichever
// thread the kernel had descheduled (docs/results/wake-path-intel-vm.md: an
// outside parallel_for on 2 workers ran at 1.26x the ideal time, 1.0x for
// OpenMP's team of 2). The hand-off alone costs a remote round trip per
// call (a few hundred ns with a searching worker, a wake-up with all of
// them parked, and the caller's own wake-up at the end).
#pragma once

#include <utility>

#include "weft/detail/exec/remote_wait.hpp"
#include "weft/detail/exec/seat.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft::detail {

template <class F>
decltype(auto) on_workers(ThreadPool& pool, F&& f) {
  if (pool.is_worker()) return std::forward<F>(f)();
  if (Seat seat(pool); seat.seated()) return std::forward<F>(f)();
  auto done = pool.submit([&f]() -> decltype(auto) { return std::forward<F>(f)(); });
  // get_remote, not get(): get() would take the queued task back and run it
  // here, which is what this avoids. An exception from f (weft::cancelled
  // included) is rethrown here.
  return get_remote(done);
}

}  // namespace weft::detail
