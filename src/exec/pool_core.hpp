// The pool's insides: workers, injection deques, and the sleep/wake protocol.
// See docs/design/pool.md for the protocol and its correctness argument.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/exec/deque.hpp"
#include "weft/detail/exec/idle_policy.hpp"
#include "weft/detail/exec/injection_slots.hpp"
#include "weft/detail/exec/trace_ring.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/asymmetric_fence.hpp"
#include "idle_workers.hpp"
#include "native_thread.hpp"
#include "weft/exec/pool_stats.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/sync/parker.hpp"
#include "weft/topo/topology.hpp"

namespace weft::detail {

// relaxed increment of an owner-written counter: a plain load and store,
// no read-modify-write; readers only need to see it eventually.
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) noexcept {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

// One more task this worker ran (or is about to run inside the one it
// runs), on its own counter. release: a wait_idle() that reads the new
// count (acquire) sees the task's effects and the pushes it made.
inline void count_completed(std::atomic<std::uint64_t>& completed) noexcept {
  completed.store(completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// The counters behind WorkerStats (weft/exec/pool_stats.hpp), each written
// only by its worker with bump(), read relaxed by ThreadPool::stats(). Their
// own line: stats() readers must not disturb the deque or `completed`.
struct alignas(kCacheLine) WorkerCounters {
  std::array<std::atomic<std::uint64_t>, kStealRings> steals_by_ring{};
  std::atomic<std::uint64_t> steals_from_submitters{0};
  std::atomic<std::uint64_t> handed_posts{0};
  std::atomic<std::uint64_t> failed_steal_rounds{0};
  std::atomic<std::uint64_t> parks{0};
  std::atomic<std::uint64_t> wakeups_sent{0};
  std::atomic<std::uint64_t> wakeups_received{0};
  std::atomic<std::uint64_t> spins_found_work{0};
  // Task-graph nodes this worker ran inside another node's pool task (a
  // chain's successors, a range's further sources): counted in tasks_run,
  // since a node is a task whichever way it starts (src/exec/task_graph.cpp).
  std::atomic<std::uint64_t> handed_on{0};
  std::atomic<std::uint64_t> busy_ns{0};
  std::atomic<std::uint64_t> idle_ns{0};
  std::int64_t since_ns = 0;  // owner only: when the worker last started or woke, or parked
};

struct alignas(kCacheLine) Worker {
  Source source;
  Parker parker;
  // A task an outside post() handed to this worker as it woke it from a
  // pool that was all asleep (IdleWorkers::hand_off()), on the parker's
  // line, which the wake-up touches anyway. Written by that waker while the
  // worker is parked and off the sleepers' list, before its unpark
  // (release); read and cleared by the worker after its park (acquire):
  // relaxed suffices on both sides.
  std::atomic<TaskNode*> handed{nullptr};
  // Tasks this worker has finished; owner-written, read by wait_idle() and
  // as WorkerStats::tasks_run by stats().
  alignas(kCacheLine) std::atomic<std::uint64_t> completed{0};
  // This worker's trace (weft/exec/trace.hpp), or null: set before the
  // thread starts and never changed, so the branch on it in trace_event()
  // is the whole cost of tracing when it is off.
  std::unique_ptr<TraceRing> trace;
  int index = 0;
  // Where it runs: its pinned CPU, or where it started (set before the
  // worker's decrement of unread_cpus_); -1 unknown.
  int cpu = -1;
  // Owner only once the worker runs. The other workers by ring of distance,
  // nearest first, empty rings left out (victim_rings.hpp); ring_kinds[r]
  // names rings[r]. A search covers rings[0, reach): reach grows by one
  // after kEmptySearchesPerRing empty searches, shrinks to where a steal
  // succeeded, and to 1 when the worker wakes.
  std::vector<std::vector<int>> rings;
  std::vector<StealRing> ring_kinds;
  std::size_t reach = 0;
  int empty_searches = 0;
  // Owner only: how far its searches stretch (idle_policy.hpp).
  SearchStretch stretch;
  // When a waker last unparked this worker (now_ns()), for the stretch. Written
  // by the waker before unpark(), relaxed: the parker's release/acquire
  // orders it before the worker's read after its park.
  std::atomic<std::int64_t> woken_at_ns{0};
  // Owner only: looks at the injection slots in a row that found nothing. From
  // kPassesBeforeClearing on, the worker clears the injection bits of
  // slots it finds empty (InjectionSlots::steal()).
  int empty_passes = 0;
  std::uint64_t rng = 0;
  NativeThread thread;
  WorkerCounters counters;
  // A waker that narrowed this worker's CPU mask (PoolCore::steer_off())
  // keeps the mask it had here and sets `steered`; the worker puts the mask
  // back once its park returns. steered: release by the waker after
  // `unsteered`, acquire by the worker's exchange before reading it.
  cpu_set_t unsteered{};
  std::atomic<bool> steered{false};
  // The worker thread's kernel id (for steer_off()), written once as it
  // starts, before the constructor returns.
  pid_t tid = 0;
  // The seat's guest only (owner only: the seated thread): its next wake-up
  // of a sleeper is steered off its CPU (seat_begin() sets it).
  bool steer_next_wake = false;
};

class PoolCore {
 public:
  // `owner`: the ThreadPool this core is the heart of (ThreadPool::current()).
  PoolCore(PoolOptions options, ThreadPool* owner);
  // Set before any worker starts; never written after.
  ThreadPool* const owner;
  ~PoolCore();

  // Queues t. Every failure (a pool shut down: std::runtime_error; no
  // injection deque or no room to grow one: std::bad_alloc,
  // std::system_error) has called t->discard(t), exactly once, before the
  // exception leaves: the caller never discards it again.
  void push(TaskNode* t);
  // push() for a task nobody can take back (ThreadPool::post()): from an
  // outside thread into a pool whose workers all sleep, it goes straight
  // to the sleeper it wakes (IdleWorkers::hand_off()), which runs it
  // without a search; otherwise as push().
  void push_posted(TaskNode* t);
  void wait_idle();
  void shutdown();
  void record_exception(std::exception_ptr e) noexcept;
  bool help_one(Worker& w) noexcept;
  bool quiescent() const noexcept;
  PoolStats stats() const;
  PoolTrace trace() const;

  int size() const noexcept { return static_cast<int>(workers_.size()); }

  // The seat (weft/detail/exec/seat.hpp, src/exec/seat.cpp): for an outside
  // thread, the index of the worker leased to sit out while the calling
  // thread is the guest worker, or -1 (no seat: the caller hands off).
  int seat_begin() noexcept;
  // Gives the seat back; `leased` is what seat_begin() returned (>= 0).
  void seat_end(int leased) noexcept;
  const std::vector<int>& cpus() const noexcept { return cpus_; }

 private:
  void push_or_discard(Source& s, TaskNode* t);
  void run_worker(Worker& w);
  void set_victim_rings(const Topology& topo);
  void release_workers() noexcept;

 public:
  // What the sleep protocol (IdleWorkers) asks of the pool, and no more.
  // A task from w's own deque, else from a victim (src/exec/steal.cpp).
  TaskNode* find_task(Worker& w) noexcept;
  // find_task(), and when it finds nothing, submits what this thread put
  // off (detail/exec/deferred.hpp) and looks again: what a worker's loop
  // and a helping wait call before they search further or give up.
  TaskNode* find_task_or_flush(Worker& w) noexcept;
  // One search of the victims and injection slots (not w's own deque).
  TaskNode* steal_any(Worker& w) noexcept;
  bool anything_queued() const noexcept;
  // Tasks queued in every deque, counted until `cap` is reached (a snapshot).
  std::uint32_t queued_up_to(std::uint32_t cap) const noexcept;
  const WaitOptions& wait_options() const noexcept { return options_.wait; }
  // Whether shutdown() has told the workers to leave. acquire: a worker
  // that sees it and exits does so after what shutdown()'s thread did
  // before its store (the stop hook must not race the owner's last reads).
  bool stopping() const noexcept { return stop_.load(std::memory_order_acquire); }
  // Ends worker i's park (after a waker took it off the sleepers' list).
  // Before unpark(i), by a waker that goes on computing on CPU `cpu`:
  // takes `cpu` out of unpinned worker i's mask until i runs again
  // (unsteer()), so that the kernel places the wake-up on another CPU.
  // Without it the kernel at times queued the woken worker on the waker's
  // CPU, behind the waker, while the other CPU idled, until a load balance
  // moved it up to a tick later (docs/design/pool.md, "The calling thread
  // is one of the P"). Three system calls, so only where it pays: the
  // seated caller's first wake-up, which starts its parallel call's other
  // workers. Nothing for a pinned pool, a worker already steered, or a mask
  // with no other CPU.
  void steer_off(int i, int cpu) noexcept;
  // The woken worker's side, after every park: its mask back if steered.
  static void unsteer(Worker& w) noexcept;
  void unpark(int i, TaskNode* handed = nullptr) noexcept {
    Worker& w = *workers_[static_cast<std::size_t>(i)];
    w.woken_at_ns.store(now_ns(), std::memory_order_relaxed);  // relaxed: see Worker::woken_at_ns
    if (handed != nullptr) w.handed.store(handed, std::memory_order_relaxed);  // relaxed: see Worker::handed
    w.parker.unpark();
  }
  // Whether an outside caller holds the seat. relaxed: a hint for the
  // search's budget (IdleWorkers::search_or_sleep()); nothing is published
  // through it.
  bool seat_held() const noexcept { return guest_taken_.load(std::memory_order_relaxed); }
  // Searching plus sleeping workers (a hint: see IdleWorkers::idle_count()).
  std::uint32_t idle_count() const noexcept { return idle_.idle_count(); }

 private:
  // push() and push_posted(): `may_hand`, whether t may go to a sleeper.
  void push(TaskNode* t, bool may_hand);
  // The calling outside thread's injection slot, taken on its first push.
  struct Injector {
    Source* source = nullptr;
    int slot = -1;
    bool borrowed = false;  // for this push only: the thread is exiting (given back after it)
  };
  Injector injector_for_this_thread();
  Injector take_injector();

 public:
  void execute(Worker& w, TaskNode* t) noexcept;
  // See ThreadPool::take_back().
  std::size_t take_back(bool (*take)(TaskNode*, const void*) noexcept, const void* ctx) noexcept;
  // The owner of injection slot `slot` (source `s`) pushed tasks back after
  // taking more than it kept (WorkStealingDeque::pop_batched()): while it
  // held them the slot looked empty, and a thief may have cleared its bit
  // and gone to sleep. Publishes them as push() does a task: the fence,
  // mark(), a wake-up (tests/model/injection.pml, BROKEN_TAKE_BACK).
  void republish(Source& s, int slot) noexcept;
  // Worker w (the calling thread) pushed to its own deque: a new task
  // (push()), or one it took out and put back (TaskGroup's join,
  // WorkStealingDeque::claim_bottom_if(): while it was out the deque looked
  // empty, and a thief may have gone to sleep). The fence, then the wake
  // rule (IdleWorkers::notify_for_own_push()).
  // Inline up to the common case, nobody parked (every fork-join task
  // passes here); the wake rule itself is out of line.
  void announce_own_push(Worker& w) noexcept;
  // A fork's tasks, at(0) .. at(n - 1) oldest first, onto w's own deque:
  // PoolCore::push()'s worker branch for all of them at once (counted,
  // pushed with one release of the deque's bottom, then one fence and one
  // run of the wake rule, rather than all three per task: every push comes
  // before the fence, so a sleeper's rescan or our read of the idle word
  // sees all of them, docs/design/pool.md, and a sleeper woken for them
  // wakes more as it finds them, IdleWorkers::found()'s ramp). If the deque
  // cannot grow (std::bad_alloc), none is queued and the count is undone.
  // parallel_invoke's fork (invoke.cpp) and a coroutine join's (help.cpp).
  template <class At>
  void push_own_batch(Worker& w, std::size_t n, At&& at);

 private:
  PoolOptions options_;
  std::vector<int> cpus_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Start-up: each worker counts down once it knows its CPU, and all wait
  // for rings_ready_ before they look for work.
  std::atomic<int> unread_cpus_{0};
  std::atomic<bool> rings_ready_{false};

  // Injection slots, one per live outside thread that submits (weft/detail/
  // exec/injection_slots.hpp). Shared with the threads that hold a slot,
  // which keep only a weak_ptr: they give the slot back when they exit if
  // the pool is still there.
  std::shared_ptr<InjectionSlots> injection_ = std::make_shared<InjectionSlots>();

  // The seat's guest worker: no thread; the outside thread that holds the
  // seat runs as it (under the leased worker's index, one ring of every
  // worker). Its deque is a victim of every worker's search. guest_taken_
  // says a thread holds it.
  std::unique_ptr<Worker> guest_;
  alignas(kCacheLine) std::atomic<bool> guest_taken_{false};

  // Sleep/wake protocol and quiescence waits (docs/design/pool.md).
  IdleWorkers idle_{*this};

  alignas(kCacheLine) std::atomic<bool> closed_{false};  // outside submissions refused
  std::atomic<bool> stop_{false};                        // workers exit once idle
  bool joined_ = false;
  std::mutex shutdown_mutex_;

  std::mutex error_mutex_;
  std::exception_ptr first_error_;
  std::uint64_t dropped_errors_ = 0;
  std::uint64_t id_;
  bool env_traced_ = false;  // in WEFT_TRACE's list: leaves it at destruction
};

// Records an event in w's trace if the pool traces (owner only); _at with
// a time the caller has taken already.
inline void trace_event_at(Worker& w, std::int64_t ns, TraceKind kind, std::int32_t peer = -1,
                           StealRing ring = StealRing::smt) noexcept {
  if (w.trace) [[unlikely]]
    w.trace->record(kind, ns, peer, ring);
}

// A label for task_start events (trace_label() gives the text back); the
// same text gets the same label for the process's life.
std::int32_t intern_trace_label(const std::string& text);

// The clock is read only when the pool traces.
inline void trace_event(Worker& w, TraceKind kind, std::int32_t peer = -1, StealRing ring = StealRing::smt) noexcept {
  if (w.trace) [[unlikely]]
    trace_event_at(w, now_ns(), kind, peer, ring);
}

// w woke `n` sleepers: counted in its stats and traced, wherever it woke
// them from (a push, a take-back, a found task, a refilled injection slot).
inline void count_wakes_sent(Worker& w, std::uint64_t n = 1) noexcept {
  bump(w.counters.wakeups_sent, n);
  trace_event(w, TraceKind::wake_sent);
}

inline void PoolCore::announce_own_push(Worker& w) noexcept {
  sched_point();
  // The push (store) must be ordered before reading the idle state (load),
  // against a worker that announces sleep (RMW) and then rescans the
  // queues: the store-load pattern of Dekker's mutual exclusion. Without it
  // a pusher and a sleeper can miss each other. The light side of an
  // asymmetric pair (the sleeper's heavy_fence() makes it a seq_cst fence
  // in effect; a plain one where membarrier is not there):
  // weft/detail/sync/asymmetric_fence.hpp.
  light_fence();
  // The first read notify_for_own_push() makes, and its first answer:
  // with no worker parked there is nobody to wake (relaxed: ordered after
  // the push by the fence above, as there).
  if (idle_.sleeping_count() == 0) return;
  // The seated caller's first wake-up of its tenure (seat.cpp): steered.
  const bool steer = w.steer_next_wake;
  if (idle_.notify_for_own_push(w.source, steer)) {
    w.steer_next_wake = false;
    count_wakes_sent(w);
  }
}

template <class At>
void PoolCore::push_own_batch(Worker& w, std::size_t n, At&& at) {
  Source& s = w.source;
  // Before the pushes: wait_idle() must never count a completion it has not
  // counted pushed.
  bump(s.pushed, n);
  try {
    s.deque.push_n(static_cast<std::int64_t>(n), at);
  } catch (...) {
    // push_n() grows first: nothing was queued.
    // relaxed: owner-written counter, as bump() writes it.
    s.pushed.store(s.pushed.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
    throw;
  }
  announce_own_push(w);
}

// WEFT_TRACE (src/exec/trace.cpp): its path, read once (null: unset or
// empty); a traced pool attaches once it runs (false: it could not, said
// through the error handler) and detaches, leaving its final trace, when
// it is destroyed.
const char* trace_path_from_env() noexcept;
bool trace_env_attach(const PoolCore& pool) noexcept;
void trace_env_detach(const PoolCore& pool) noexcept;

// The calling thread's worker, if it is one, and its pool. Inline: every
// push, pop and wait reads it (an out-of-line call was three per fork).
struct WorkerContext {
  PoolCore* pool = nullptr;
  Worker* worker = nullptr;
  // The pool of a task this thread runs in place (RunningInPlace,
  // weft/exec/future.hpp): ThreadPool::current() when `pool` is null (a
  // worker's own pool, or a seat's, comes first: what it runs while
  // helping, or in the seat, is that pool's).
  PoolCore* in_place = nullptr;
};
extern thread_local constinit WorkerContext t_this_worker;
inline WorkerContext& this_worker() noexcept { return t_this_worker; }
// ThreadPool::current()'s pool: the worker's (or seat's), else that of the
// task this thread runs in place, else null. Inline: one TLS access, on
// every fork of recursive code that asks for its pool.
inline PoolCore* current_pool() noexcept {
  const WorkerContext& c = this_worker();
  return c.pool != nullptr ? c.pool : c.in_place;
}

}  // namespace weft::detail
