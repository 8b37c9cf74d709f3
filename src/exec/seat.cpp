// The seat of weft/detail/exec/seat.hpp: an outside caller computes as the
// pool's guest worker while one parked worker sits out.
//
// Why no task or wake-up is lost (tests/model/seat.pml checks it with the
// pool's sleep protocol, and that its variant without the rescan loses one):
// - The lease takes a worker off the list under the sleepers' mutex, as a
//   waker would, but leaves it parked. A worker caught between its
//   announcement and its park finds itself off the list in its rescan and
//   parks waiting for a waker's permit (search_or_sleep()): the same state,
//   parked, reachable again once the lease ends.
// - While leased the worker is neither searching nor sleeping: a push then
//   wakes another sleeper, or finds a worker searching, or none idle, as
//   when every worker runs a task. Running workers look for tasks after
//   each one, and the guest looks at each join it helps.
// - Giving the seat back lists the worker and counts it as sleeping (seq_cst
//   RMW), then fences and rescans, exactly as the worker's own announcement
//   does, so the argument of docs/design/pool.md applies: a push before the
//   rescan is seen by it, a push after the RMW sees the sleeper and wakes.
// - The guest's deque is a victim of every search and part of every rescan
//   and quiescence count, so what the caller leaves in it (tasks posted by
//   tasks it ran) runs, and wait_idle() waits for it.
// - One thread holds the guest at a time: guest_taken_'s acquire exchange
//   and release store order each holder's use of the guest's deque (its
//   owner side) and counters after the previous holder's.
#include "weft/detail/exec/seat.hpp"

#include <utility>

#include "pool_core.hpp"
#include "weft/detail/exec/deferred.hpp"
#include "weft/detail/exec/promise.hpp"

namespace weft::detail {

// Seated inside a coroutine's resumption (the caller runs one on this
// outside thread, e.g. under sync_wait(task)), the resumptions the seated
// work causes must go to the pools' queues, not to that resumption's
// hand-off slot: a coroutine parked there would run only once the outer
// one suspends, on this thread, by then no worker of its pool.
Seat::Seat(ThreadPool& pool) noexcept : core_(&core_of(pool)) {
  leased_ = core_->seat_begin();
  if (leased_ >= 0) outer_active_ = std::exchange(trampoline.active, false);
}

Seat::~Seat() {
  if (leased_ < 0) return;
  core_->seat_end(leased_);
  trampoline.active = outer_active_;
}

int PoolCore::seat_begin() noexcept {
  WorkerContext& ctx = this_worker();
  // A worker of another pool keeps its identity: it hands off.
  if (ctx.pool != nullptr) return -1;
  // relaxed: a shut-down pool refuses the hand-off's submit with its error;
  // a shutdown racing a call on the pool is the caller's race.
  if (closed_.load(std::memory_order_relaxed)) return -1;
  // No parked worker to lease (all P compute): no seat, without the
  // exchange's write or the sleepers' lock. A hint; lease_sleeper() decides.
  if (idle_.sleeping_count() == 0) return -1;
  // relaxed: a hint that saves the exchange's write while another thread
  // is seated; the exchange below decides.
  if (guest_taken_.load(std::memory_order_relaxed)) return -1;
  // acquire: the previous holder's writes to the guest (its deque's owner
  // side, its counters) happen before ours (its release in seat_end()).
  if (guest_taken_.exchange(true, std::memory_order_acquire)) return -1;
  const int leased = idle_.lease_sleeper();
  if (leased < 0) {
    // release: hands on the previous holder's writes, which our acquire saw,
    // to the next thread that takes the seat.
    guest_taken_.store(false, std::memory_order_release);
    return -1;
  }
  // The caller stands in for the worker that sits out, under its index:
  // per-worker state a program keeps by current_worker_index() (and the
  // static partition's blocks) stays one thread per index, since that
  // worker runs nothing until the seat is given back.
  guest_->index = leased;
  guest_->counters.since_ns = now_ns();
  guest_->steer_next_wake = true;  // pool_core.hpp, steer_off()
  // Field by field: a task this thread runs in place (ctx.in_place) goes
  // on being that pool's once the seat is given back.
  ctx.pool = this;
  ctx.worker = guest_.get();
  return leased;
}

void PoolCore::seat_end(int leased) noexcept {
  Worker& g = *guest_;
  // The seated thread worked as a worker: what it put off (an io_uring
  // batch) goes in now, before it stops being one and nobody would.
  run_deferred();
  bump(g.counters.busy_ns, static_cast<std::uint64_t>(now_ns() - g.counters.since_ns));
  WorkerContext& ctx = this_worker();
  ctx.pool = nullptr;
  ctx.worker = nullptr;
  idle_.return_sleeper(leased);
  // release: our use of the guest happens before the next holder's.
  guest_taken_.store(false, std::memory_order_release);
}

}  // namespace weft::detail
