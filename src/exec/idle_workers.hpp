// The pool's sleep protocol: workers that found no task search for a
// bounded time, announce that they sleep, rescan, and park; a submitter
// wakes one of them only when none is searching, and a searcher that finds
// a task wakes more while tasks outnumber the searchers (the wake ramp);
// outside threads wait for the pool to go quiet. (oneTBB separates these
// roles the same way: its outermost, sleep and external waiters in
// src/tbb/waiters.h.) The protocol
// and its no-lost-wake-up argument: docs/design/pool.md; its model:
// tests/model/pool.pml.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/exec/task.hpp"
#include "weft/sync/wait_options.hpp"

namespace weft::detail {

class PoolCore;
struct Source;
struct Worker;

class IdleWorkers {
 public:
  explicit IdleWorkers(PoolCore& pool) noexcept : pool_(pool) {}

  // Before any worker starts: room for `workers` sleepers, so that no sleep
  // transition allocates under the sleepers' mutex; and the searchers'
  // longest pause between looks in this host's pauses.
  void size_for(int workers);

  // Called by worker `w` when its deque and one steal round came up empty:
  // searches for the spin budget, then sleeps until woken, and again, until
  // it finds a task (returned) or the pool stops with nothing queued (null).
  TaskNode* search_or_sleep(Worker& w) noexcept;

  // After a push and a seq_cst fence: wakes one sleeper if nobody searches.
  // Returns whether it woke one (for the caller's WorkerStats). An outside
  // submitter passes the deque it pushed to: while a worker is running a
  // task, it first gives that worker a moment to come back (wake_needed()).
  bool notify_one(const Source* pushed_to = nullptr) noexcept;

  // A worker's push to its own deque `own`, after the same fence: wakes a
  // sleeper as notify_one() does, and also while fewer workers search than
  // tasks wait in `own` and the searchers' bound (search_room()) lets one
  // more search. A woken worker counts as searching from its wake
  // until it finds a task, which on a VM can be 20-250 us; notify_one()
  // alone then wakes nobody for the pushes in between, so a pool coming out
  // of sleep for a divide and conquer came up one wake latency at a time
  // (on a 16-vCPU Xeon, 100-480 us of a 5 ms reduce). Reads own's size only
  // while someone sleeps and someone searches. `steer`: the pusher goes on
  // computing where it is and the worker it wakes must not queue behind it
  // (PoolCore::steer_off()).
  bool notify_for_own_push(const Source& own, bool steer = false) noexcept;

  // An outside post() into a pool whose workers all sleep: whether that is
  // so, as a hint (hand_off() decides under the lock).
  bool all_asleep() const noexcept;
  // If, under the sleepers' lock, every worker still sleeps and nobody
  // searches: takes a sleeper off the list, counted as running (neither
  // searching nor sleeping: it neither searches nor owes a ramp, and until
  // it sleeps again a sleeper fences against it as against any running
  // worker), leaves t with it (Worker::handed) and unparks it. False, and
  // nothing done, otherwise. The caller has counted t as pushed and fenced
  // against shutdown (PoolCore::push()). The one we wake is woken for t
  // alone; if its rescan, still under way, saw other work, it wakes a
  // sleeper for that before it runs t (search_or_sleep()). See
  // docs/design/pool.md, "A post into a sleeping pool";
  // tests/model/pool.pml -DWITH_HAND_OFF.
  bool hand_off(TaskNode* t) noexcept;

  // The most sleepers one call wakes. A wake-up costs the waker a futex
  // syscall (~2-5 us here), so one thread waking 64 would hold its own task
  // back for a few hundred us; with a batch, the workers it wakes each wake
  // more (found()), and the pool comes up in a tree, not a chain of k. The
  // searchers' bound (search_room()) makes that tree about binary from a
  // cold pool: a finder wakes at most workers - sleeping - 2 * searching.
  static constexpr std::uint32_t kWakeBatch = 8;

  // Returns when the pool is quiescent (wait_idle, shutdown).
  void wait_quiescent() noexcept;

  // The seat's lease (weft/detail/exec/seat.hpp): takes a parked worker off
  // the list and out of the sleeping count, leaving it parked (no waker can
  // reach it), and returns its index; -1 when none is listed.
  int lease_sleeper() noexcept;
  // Ends a lease: lists `w` again and counts it as sleeping, as its own
  // announcement would, then rescans the queues (after a seq_cst fence) and
  // wakes a sleeper for what it finds if nobody searches.
  void return_sleeper(int w) noexcept;

  // Parked workers on the list. relaxed: a hint for the seat, before it
  // takes the sleepers' lock (lease_sleeper() decides under the lock); and
  // the first read of the wake rule for a worker's own push, which makes it
  // after its fence (PoolCore::announce_own_push()).
  std::uint32_t sleeping_count() const noexcept { return sleeping(idle_state_.load(std::memory_order_relaxed)); }
  // Searching plus sleeping workers. relaxed: a hint for splitting work;
  // nothing is published through it.
  std::uint32_t idle_count() const noexcept {
    const std::uint64_t s = idle_state_.load(std::memory_order_relaxed);
    return searching(s) + sleeping(s);
  }

 private:
  // idle_state_: searching workers in the low 32 bits, sleeping in the high.
  static constexpr std::uint64_t kSearching = 1;
  static constexpr std::uint64_t kSleeping = std::uint64_t{1} << 32;
  static std::uint32_t searching(std::uint64_t s) noexcept { return static_cast<std::uint32_t>(s); }
  static std::uint32_t sleeping(std::uint64_t s) noexcept { return static_cast<std::uint32_t>(s >> 32); }

  // After notify_one() found nobody searching but a worker awake (running a
  // task): waits up to kWakeGraceNs for a worker to search or to take what
  // is queued in `pushed_to`, whichever comes first; true if neither did.
  // A worker that finished a short task looks for the next within a few
  // hundred ns; waking a sleeper costs the submitter a futex call (~2-5 us)
  // and, on a machine with no spare CPU, puts a third thread on the two the
  // submitter and that worker use (the remote round trip went from ~125 ns
  // to ~420 ns when every submission woke the parked worker).
  bool wake_needed(const Source& pushed_to) const noexcept;
  static constexpr std::int64_t kWakeGraceNs = 1000;

  // Ends w's search because it found `t`. The ramp: while sleepers remain,
  // a searcher that finds work wakes as many as are queued tasks beyond
  // the searchers already looking (at most kWakeBatch and search_room()),
  // so a burst pushed before anyone woke brings up the workers it needs in
  // parallel. The last searcher, with another worker running, hands its
  // search on to a sleeper instead of a membarrier (docs/design/pool.md).
  TaskNode* found(Worker& w, TaskNode* t) noexcept;
  // Takes up to `want` sleepers (at most kWakeBatch) off the list, counted
  // as searching, and unparks them; none if more than `max_searching`
  // workers search when it holds the lock; unparks them after the lock.
  // `steer`: keep each woken worker off the waker's CPU until it runs
  // (PoolCore::steer_off()). Returns how many it woke.
  std::uint32_t wake(std::uint32_t want, std::uint32_t max_searching, bool steer = false) noexcept;
  static constexpr std::uint32_t kAnySearching = ~std::uint32_t{0};
  // Parks w until a permit comes, or for at most `window` when it is not
  // zero, counting the park, the wake-up and the time on each side of it
  // in w's counters. Returns whether a permit ended it (always, without a
  // window); a window that passes counts only as idle time.
  static bool park(Worker& w, const WaitOptions& opts,
                   std::chrono::nanoseconds window = std::chrono::nanoseconds::zero()) noexcept;
  // How long a sleeper whose announcement deferred its heavy fence waits
  // before it makes it (announce_sleep()). A push racing the announcement
  // waits at most this long for the sleeper (its pusher runs it sooner if
  // it gets there first); a sleep that ends within it costs no membarrier.
  static constexpr std::chrono::nanoseconds kDeferredFenceNs{1'000'000};
  // Ends w's search because the pool stops with nothing queued.
  TaskNode* leave() noexcept;
  // After a park a waker ended: the task hand_off() left with w, taken, or
  // null.
  static TaskNode* take_handed(Worker& w) noexcept;
  // Whether the idle word `s` shows every worker asleep and none searching.
  bool all_asleep(std::uint64_t s) const noexcept;
  // The sleep announcement (docs/design/pool.md): lists worker `w` and adds
  // `delta` to the idle word (seq_cst RMW, under the mutex), bumps the idle
  // epoch, then fences, so the caller's rescan of the queues follows it. By
  // a worker about to park (searching -> sleeping), and by return_sleeper()
  // for a leased worker still parked (-> sleeping).
  // `cpu`: where w runs as it announces (sched_getcpu()), or -1 to keep
  // the CPU recorded before (a leased worker has not run since).
  //
  // `may_defer` (a worker announcing its own sleep): where the heavy fence
  // would be needed (another worker may be running and pushing with the
  // light one), make a plain fence instead and return true. The rescan
  // that follows then may miss a push in flight whose pusher also missed
  // the announcement; so the caller parks for kDeferredFenceNs at most,
  // and if no waker came, makes the heavy fence after a fresh RMW read of
  // the word and rescans before it parks for good. A worker woken within
  // the window (a pipeline's workers sleep for tens of us between items)
  // makes no system call: on a 16-vCPU Xeon the membarrier of every sleep
  // made such a pipeline four times slower (docs/design/pool.md).
  bool announce_sleep(int w, std::uint64_t delta, int cpu, bool may_defer) noexcept;
  // Takes a sleeper off the list, under the mutex, as pick_sleeper()
  // (weft/detail/exec/idle_policy.hpp) chooses for a caller on `cpu`.
  int take_sleeper(int cpu) noexcept;
  // The searchers' bound: how many sleepers may be woken to search, given
  // the idle word `s`, while fewer than half the workers not asleep search
  // (each one woken adds a searcher and takes a sleeper away): workers -
  // sleeping - 2 * searching, at least 0. The ramps keep to it, and a
  // worker starts a search only if it is above 0 without itself
  // (search_or_sleep()).
  std::uint32_t search_room(std::uint64_t s) const noexcept;
  // Whether the idle word `after` shows a worker running a task (neither
  // searching nor sleeping, so maybe pushing with light_fence()) besides
  // `self` (1 if the caller runs one and is in neither half).
  bool runs_besides(std::uint64_t after, std::uint32_t self) const noexcept;
  // The fence between a sleeper's RMW of the idle word (its result
  // `after`) and its reads of the queues: heavy_fence() while another
  // worker may be running, else a seq_cst fence. With `may_defer`, a
  // seq_cst fence in the heavy case too, and true (the caller owes the
  // heavy fence: announce_sleep()).
  bool dekker_fence(std::uint64_t after, bool may_defer) const noexcept;

  PoolCore& pool_;
  // Set by size_for() before any worker runs, then only read (beside pool_,
  // off the lines the sleep transitions write).
  int search_gap_pauses_ = 1;

  // Written by every worker that starts or ends a search and by wakers;
  // read by every submitter: a line of its own.
  alignas(kCacheLine) std::atomic<std::uint64_t> idle_state_{0};
  std::mutex sleepers_mutex_;
  std::vector<int> sleepers_;  // parked workers' indices, guarded by sleepers_mutex_
  // By worker index, guarded by sleepers_mutex_ (sized by size_for()): the
  // CPU each last announced its sleep on, -1 unknown. Which sleeper the seat
  // leases goes by it (take_sleeper()).
  std::vector<int> sleeper_cpu_;

  // Bumped by a worker going to sleep; bit 0 = an outside thread waits for
  // quiescence on it.
  alignas(kCacheLine) std::atomic<std::uint32_t> idle_epoch_{0};
};

}  // namespace weft::detail
