// weft/detail/exec/seat.hpp — a seat for an outside caller: it computes as
// one of the pool's P threads while one parked worker sits out.
//
// A blocking algorithm called from a thread outside the pool (on_workers.hpp)
// first asks for the pool's seat, and so does TaskGroup::wait() (and the
// group's destructor) on such a thread, for as long as it waits. The seat is one guest worker (a deque, its
// victims, counters; no thread of its own) that one outside thread at a time
// may hold, and it comes with a lease on a parked worker: that worker is
// taken off the sleepers' list and out of the sleeping count, so no waker
// can wake it, and stays parked until the seat is given back. Seated, the
// caller is the guest worker, under the index of the worker sitting out
// (ThreadPool::current_worker_index()): its forks go to the guest's deque, where the
// workers steal them, and its joins help as a worker's do. So P threads
// compute — the caller and P - 1 workers — with no hand-off: no task to
// queue, no worker to wake for it, and no wake-up of the caller when the
// call ends (the hand-off costs a remote round trip, ~100 us per call on a
// 2-vCPU host whose futex wake-up takes ~40 us).
//
// No seat when the caller is a worker of any pool (it runs the call where it
// is, or hands it off), when another outside thread holds it, or when no
// worker is parked (all P are running or searching: a seat would make P + 1
// threads compute). Then the call is handed to the pool as before.
//
// Giving the seat back puts the worker back on the list, counted as
// sleeping, as its own announcement would have, then fences and rescans the
// queues: a task left queued (posted by a task the caller ran, or pushed
// while the worker was leased and nobody else was idle) gets a wake-up.
// The protocol and its model: src/exec/seat.cpp, tests/model/seat.pml.
#pragma once

namespace weft {
class ThreadPool;
}

namespace weft::detail {

class PoolCore;

class Seat {
 public:
  // Takes the seat of `pool` for the calling thread if it can (seated()).
  explicit Seat(ThreadPool& pool) noexcept;
  // Gives it back: the calling thread is an outside thread again.
  ~Seat();
  Seat(const Seat&) = delete;
  Seat& operator=(const Seat&) = delete;

  [[nodiscard]] bool seated() const noexcept { return leased_ >= 0; }

 private:
  PoolCore* core_;
  int leased_ = -1;  // the index of the worker sitting out, or -1: no seat
  bool outer_active_ = false;  // the thread's Trampoline::active before the seat (seat.cpp)
};

}  // namespace weft::detail
