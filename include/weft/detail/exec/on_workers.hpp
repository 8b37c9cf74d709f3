// weft/detail/exec/on_workers.hpp — the calling thread counts as one of the P.
//
// A blocking parallel algorithm (parallel_for, the reductions, scans,
// sorts and find) called from a thread outside the pool does its work on
// the pool's workers only: the call goes to the pool as one task, which a
// worker runs (splitting it over the others as usual), and the caller waits
// for it - spinning within its budget, then parked - without computing.
// So a pool of P workers never has more than P threads computing, whoever
// calls. Before this, an outside caller computed a share beside the P
// workers: P + 1 threads on P CPUs, and a fixed split then waited for
// whichever thread the kernel had descheduled (docs/results/
// wake-path-intel-vm.md: an outside parallel_for on 2 workers ran at 1.26x
// the ideal time, 1.0x for OpenMP's team of 2). oneTBB reaches the same
// bound the other way round: its arena of P has P - 1 workers beside a slot
// the caller takes. On one of the pool's own workers the call runs in
// place: that thread is one of the P already.
//
// The hand-off costs an outside caller one remote round trip (a few
// hundred ns with a searching worker, a wake-up with all of them parked).
#pragma once

#include <utility>

#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft::detail {

template <class F>
decltype(auto) on_workers(ThreadPool& pool, F&& f) {
  if (pool.is_worker()) return std::forward<F>(f)();
  auto done = pool.submit([&f]() -> decltype(auto) { return std::forward<F>(f)(); });
  // get_remote, not get(): get() would take the queued task back and run it
  // here, which is what this avoids. An exception from f (weft::cancelled
  // included) is rethrown here.
  return get_remote(done);
}

}  // namespace weft::detail
