// The pool's life and its push: building and pinning the workers, the
// worker loop, push() with its half of the sleep protocol's fence argument
// (docs/design/pool.md), quiescence, wait_idle() and shutdown(), and the
// ThreadPool facade. The rest of PoolCore is split by role: injector.cpp
// (an outside thread's injection slot; taking back what a thread queued),
// steal.cpp (finding a task), help.cpp (how waits help), pool_stats.cpp,
// idle_workers.cpp (the sleep protocol), seat.cpp (the caller's seat).
#include "weft/exec/thread_pool.hpp"

#include <unistd.h>

#include <cassert>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "pool_core.hpp"
#include "weft/detail/exec/deferred.hpp"
#include "weft/error.hpp"
#include "weft/detail/exec/fault_injection.hpp"
#include "weft/detail/exec/victim_rings.hpp"
#include "weft/detail/sync/asymmetric_fence.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/topology.hpp"

namespace weft {
namespace detail {

std::atomic<WorkerStartHook> g_worker_start_hook{nullptr};
std::atomic<InjectorHook> g_injector_hook{nullptr};

namespace {
std::atomic<std::uint64_t> g_next_pool_id{1};  // never reused: stale thread-local caches cannot match

std::string describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

// An outside push refused because the pool is shut down: t discarded, the
// caller told.
[[noreturn]] void refuse(TaskNode* t) {
  t->discard(t);
  throw std::runtime_error("weft::ThreadPool: submit to a pool that is shut down");
}
// The same after t was counted as pushed on s (and never queued, or taken
// back): the count is undone first.
[[noreturn]] void refuse_counted(Source& s, TaskNode* t) {
  // relaxed: owner-written counter, read by quiescent() after its seq_cst fence.
  s.pushed.store(s.pushed.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  refuse(t);
}
}  // namespace

thread_local constinit WorkerContext t_this_worker;

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept { futex_wake(word, kWakeAll); }

void record_post_exception(PoolCore* pool, std::exception_ptr e) noexcept { pool->record_exception(e); }

// ---- PoolCore ----------------------------------------------------------------

// relaxed: only the id's uniqueness matters; nothing is published through it.
PoolCore::PoolCore(PoolOptions options, ThreadPool* owner_pool)
    : owner(owner_pool), options_(std::move(options)), id_(g_next_pool_id.fetch_add(1, std::memory_order_relaxed)) {
  const int n = options_.workers.value_or(available_parallelism());
  if (n < 1)
    throw std::invalid_argument("weft::ThreadPool: a pool needs at least one worker, got " + std::to_string(n));
  if (n > 4096)
    throw std::invalid_argument("weft::ThreadPool: " + std::to_string(n) + " workers is more than the 4096 allowed");
  if (options_.stack_size != 0 && options_.stack_size < min_stack_size())
    throw std::invalid_argument("weft::ThreadPool: a worker stack of " + std::to_string(options_.stack_size) +
                                " bytes is below the system's minimum of " + std::to_string(min_stack_size()));
  enable_asymmetric_fences();  // before any worker runs: every pusher and sleeper sees one choice
  const Topology& topo = Topology::instance();
  cpus_ = place(topo, options_.placement, n);  // throws for one_per_core beyond the cores

  if (options_.trace_capacity > kMaxTraceCapacity)
    throw std::invalid_argument("weft::ThreadPool: trace_capacity " + std::to_string(options_.trace_capacity) +
                                " is more than the " + std::to_string(kMaxTraceCapacity) + " events allowed");
  const bool env_trace = trace_path_from_env() != nullptr;
  const std::size_t trace_capacity =
      options_.trace_capacity != 0 ? options_.trace_capacity : env_trace ? kDefaultTraceCapacity : 0;
  workers_.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto w = std::make_unique<Worker>();
    if (trace_capacity != 0) w->trace = std::make_unique<TraceRing>(trace_capacity);
    w->index = i;
    w->cpu = cpus_.empty() ? -1 : cpus_[static_cast<std::size_t>(i)];
    w->rng = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1);
    workers_.push_back(std::move(w));
  }
  idle_.size_for(n);
  // The seat's guest: every worker one ring away (its thread's CPU is
  // whatever the caller's is); its index is the leased worker's while seated.
  guest_ = std::make_unique<Worker>();
  guest_->rng = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(n + 1);
  guest_->rings.emplace_back();
  for (int i = 0; i < n; ++i) guest_->rings.back().push_back(i);
  guest_->ring_kinds.push_back(StealRing::remote);
  guest_->reach = 1;
  // Pinned workers' rings are known now; unpinned ones report where they
  // started and the rings are drawn once all have (set_victim_rings()).
  unread_cpus_.store(n, std::memory_order_relaxed);  // relaxed: the thread starts publish it
  if (!cpus_.empty()) set_victim_rings(topo);

  int started = 0;
  try {
    for (auto& w : workers_) {
      Worker* raw = w.get();
      // relaxed: a test sets the hook before it builds the pool.
      if (WorkerStartHook hook = g_worker_start_hook.load(std::memory_order_relaxed)) hook(started);
      w->thread.start(options_.stack_size, [this, raw] { run_worker(*raw); });
      ++started;
      // cpus_, not raw->cpu: an unpinned worker is writing its own.
      if (!cpus_.empty()) pin_native_thread(raw->thread.native_handle(), cpus_[static_cast<std::size_t>(started - 1)]);
    }
  } catch (...) {
    const std::string why = describe(std::current_exception());
    stop_.store(true, std::memory_order_seq_cst);  // seq_cst: pairs with the workers' sleep check
    release_workers();  // with what rings they have: they only leave
    for (int i = 0; i < started; ++i) workers_[static_cast<std::size_t>(i)]->parker.unpark();
    for (int i = 0; i < started; ++i) workers_[static_cast<std::size_t>(i)]->thread.join();
    joined_ = true;
    throw std::runtime_error("weft::ThreadPool: could not start worker " + std::to_string(started + 1) + " of " +
                             std::to_string(n) + ": " + why);
  }
  if (cpus_.empty()) {
    // acquire: see each worker's cpu, written before its decrement.
    for (int k; (k = unread_cpus_.load(std::memory_order_acquire)) != 0;) unread_cpus_.wait(k, std::memory_order_acquire);
    set_victim_rings(topo);
  }
  release_workers();
  if (env_trace) env_traced_ = trace_env_attach(*this);
}

void PoolCore::set_victim_rings(const Topology& topo) {
  std::vector<int> cpus;
  for (const auto& w : workers_) cpus.push_back(w->cpu);
  for (auto& w : workers_) {
    const VictimRings rings = victim_rings(topo, cpus, w->index);
    for (std::size_t r = 0; r < rings.size(); ++r) {
      if (rings[r].empty()) continue;
      w->rings.push_back(rings[r]);
      w->ring_kinds.push_back(static_cast<StealRing>(r));
    }
    w->reach = w->rings.empty() ? 0 : 1;
  }
}

void PoolCore::release_workers() noexcept {
  // release: the workers see their rings (acquire in run_worker()).
  rings_ready_.store(true, std::memory_order_release);
  rings_ready_.notify_all();
}

PoolCore::~PoolCore() {
  shutdown();
  if (env_traced_) trace_env_detach(*this);
  if (first_error_) {
    char where[128];
    std::snprintf(where, sizeof where,
                  "weft::ThreadPool: a posted task threw and no wait_idle() rethrew it (%llu more dropped)",
                  static_cast<unsigned long long>(dropped_errors_));
    report_error(where, first_error_);
  }
}

// The deque's push, whose only failure is growing its array (bad_alloc):
// then the count bumped for it is taken back and `t` discarded, so every
// failure of push() has discarded its task exactly once.
void PoolCore::push_or_discard(Source& s, TaskNode* t) {
  try {
    s.deque.push(t);
  } catch (...) {
    // relaxed: owner-written counter, as bump() writes it.
    s.pushed.store(s.pushed.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    t->discard(t);
    throw;
  }
}

void PoolCore::push(TaskNode* t) { push(t, false); }

void PoolCore::push_posted(TaskNode* t) { push(t, true); }

void PoolCore::push(TaskNode* t, bool may_hand) {
  WorkerContext& ctx = this_worker();
  if (ctx.pool == this) {
    Source& s = ctx.worker->source;
    bump(s.pushed);  // before the push: wait_idle() must never count a completion it has not counted pushed
    push_or_discard(s, t);
    announce_own_push(*ctx.worker);
    return;
  }
  // relaxed: a fast refusal only; the decisive check is after the fence.
  if (closed_.load(std::memory_order_relaxed)) refuse(t);
  Injector in;
  try {
    // relaxed: a test's hook, set before the pushes it is meant for.
    if (InjectorHook hook = g_injector_hook.load(std::memory_order_relaxed)) hook();
    in = injector_for_this_thread();
  } catch (...) {
    t->discard(t);
    throw;
  }
  Source& s = *in.source;
  // s.pushing from here to our last use of the pool (shutdown() waits for
  // it), and a borrowed slot given back after it: its next holder sets the
  // flag itself. A borrowed slot's table is held meanwhile, since the pool
  // that owns it may be freed once the flag is down.
  struct Pushing {
    Source& s;
    std::shared_ptr<InjectionSlots> borrowed_from;
    int slot;
    ~Pushing() {
      // release: our uses of the pool before it, before shutdown()'s acquire.
      s.pushing.store(false, std::memory_order_release);
      if (borrowed_from) borrowed_from->release(slot);
    }
  };
  // relaxed: published with the task (the deque's release of bottom), which
  // happens before the task's completion that shutdown() waits for.
  s.pushing.store(true, std::memory_order_relaxed);
  const Pushing pushing{s, in.borrowed ? injection_ : nullptr, in.slot};
  bump(s.pushed);
  // Every worker asleep (a hint, decided under the sleepers' lock): hand t
  // to the one we wake instead of queueing it, so that neither side
  // touches the injection deque, its bits, or the other queues the woken
  // worker's search would look at first: on a 2-vCPU Intel Xeon VM, whose
  // caches come back cold from a halted vCPU, that search and its ramp
  // check took ~0.7 us of a ~1 us wake-to-task (docs/design/pool.md, "A
  // post into a sleeping pool"). The counted push, then the fence, then
  // the check for shutdown, as for a queued task below: shutdown()
  // either sees the count and waits for t's completion, or we see closed_.
  if (may_hand && idle_.all_asleep()) {
    sched_point();
    std::atomic_thread_fence(std::memory_order_seq_cst);  // seq_cst: the count before the read of closed_
    if (closed_.load(std::memory_order_relaxed)) refuse_counted(s, t);  // relaxed: ordered by the fence
    if (idle_.hand_off(t)) return;
    // A worker woke meanwhile: queue t as any push.
  }
  push_or_discard(s, t);
  sched_point();
  // seq_cst fence: as above, against shutdown() (either shutdown's fence
  // comes later and its quiescence check sees this push, or we see
  // closed_ below), and against a thief that clears the slot's bit
  // (mark() reads the bit after it).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (closed_.load(std::memory_order_relaxed)) {  // relaxed: ordered by the fence
    bool pushed_back = false;
    TaskNode* const x = s.deque.pop_batched(pushed_back);  // an injection deque: see run_if_still_queued()
    // The tasks queued before t, pushed back: shutdown() waits for them.
    if (pushed_back) republish(s, in.slot);
    if (x == t) refuse_counted(s, t);
    // A worker already took it: it runs, the submission stands.
  }
  injection_->mark(in.slot);  // a bit it sets is part of the push: it fences after it
  idle_.notify_one(&s);
}

void PoolCore::execute(Worker& w, TaskNode* t) noexcept {
  trace_event(w, TraceKind::task_start);
  t->execute(t);
  trace_event(w, TraceKind::task_end);
  count_completed(w.completed);
}

namespace {
void run_hook(const std::function<void(int)>& hook, const char* name, int index) noexcept {
  if (!hook) return;
  try {
    hook(index);
  } catch (...) {
    char where[96];  // no allocation: the hook may have thrown std::bad_alloc
    std::snprintf(where, sizeof where, "weft::ThreadPool: %s of worker %d threw (the worker carries on)", name, index);
    report_error(where, std::current_exception());
  }
}
}  // namespace

void PoolCore::steer_off(int i, int cpu) noexcept {
  if (!cpus_.empty() || cpu < 0 || cpu >= CPU_SETSIZE) return;  // pinned: each worker has its CPU
  // A stopping pool's workers may have exited (a seated call racing
  // shutdown()): leave them be. The thread id, not the pthread handle, so
  // that a thread that exits after this check makes the calls fail (ESRCH)
  // rather than touch a freed descriptor.
  if (stopping()) return;
  Worker& w = *workers_[static_cast<std::size_t>(i)];
  // relaxed: only a waker sets it, and one waker at a time holds a worker
  // it took off the sleepers' list; still set means the worker has not
  // run since the last steer, and its saved mask is the one to keep.
  if (w.steered.load(std::memory_order_relaxed)) return;
  cpu_set_t mask;
  if (w.tid <= 0 || sched_getaffinity(w.tid, sizeof mask, &mask) != 0) return;
  if (!CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2) return;
  w.unsteered = mask;
  CPU_CLR(cpu, &mask);
  if (sched_setaffinity(w.tid, sizeof mask, &mask) != 0) return;
  w.steered.store(true, std::memory_order_release);  // release: `unsteered` before it
}

void PoolCore::unsteer(Worker& w) noexcept {
  // relaxed first look: the common case, not steered, costs a load. acquire
  // exchange: the waker's `unsteered` before our read of it.
  if (!w.steered.load(std::memory_order_relaxed) || !w.steered.exchange(false, std::memory_order_acquire)) return;
  // The saved mask fails only if the CPUs allowed shrank meanwhile (a
  // cpuset change) to none of it; then every CPU, which the kernel narrows
  // to what is allowed, so the worker is never left off the caller's CPU.
  if (sched_setaffinity(0, sizeof w.unsteered, &w.unsteered) != 0) {
    cpu_set_t all;
    std::memset(&all, 0xff, sizeof all);
    (void)sched_setaffinity(0, sizeof all, &all);
  }
}

void PoolCore::run_worker(Worker& w) {
  this_worker() = {this, &w};
  if (w.cpu < 0) w.cpu = current_cpu();  // unpinned: a hint, the scheduler may move us
  w.tid = gettid();  // published with w.cpu by the release below
  // release: the constructor reads w.cpu after seeing the count reach 0.
  if (unread_cpus_.fetch_sub(1, std::memory_order_release) == 1) unread_cpus_.notify_one();
  rings_ready_.wait(false, std::memory_order_acquire);  // acquire: see release_workers()
  w.counters.since_ns = now_ns();
  run_hook(options_.on_worker_start, "on_worker_start", w.index);
  unsigned ticks = 0;  // tasks run since this thread deferred work
  for (;;) {
    TaskNode* t = find_task_or_flush(w);
    if (t == nullptr && (t = idle_.search_or_sleep(w)) == nullptr) break;  // null: the pool stops
    execute(w, t);
    if (t_deferred != nullptr && ++ticks >= kDeferredTicks) [[unlikely]] {
      ticks = 0;
      run_deferred();
    }
  }
  bump(w.counters.busy_ns, static_cast<std::uint64_t>(now_ns() - w.counters.since_ns));
  this_worker() = {};
  run_hook(options_.on_worker_stop, "on_worker_stop", w.index);
}

bool PoolCore::quiescent() const noexcept {
  std::uint64_t completed = 0;
  for (const auto& w : workers_) completed += w->completed.load(std::memory_order_acquire);  // acquire: see execute()
  completed += guest_->completed.load(std::memory_order_acquire);  // acquire: as above
  // seq_cst fence: every completion counted above was pushed (and counted)
  // before it ran, so the push counts read after this are at least as large.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::uint64_t pushed = 0;
  for (const auto& w : workers_) pushed += w->source.pushed.load(std::memory_order_acquire);  // acquire: as above
  pushed += guest_->source.pushed.load(std::memory_order_acquire);  // acquire: as above
  pushed += injection_->pushed();
  return completed == pushed;
}

void PoolCore::wait_idle() {
  if (this_worker().pool == this)
    throw std::logic_error("weft::ThreadPool::wait_idle() called from one of the pool's own workers (it would wait for itself)");
  idle_.wait_quiescent();
  std::exception_ptr e;
  {
    std::lock_guard lock(error_mutex_);
    e = std::exchange(first_error_, nullptr);
    dropped_errors_ = 0;
  }
  if (e) std::rethrow_exception(e);
}

void PoolCore::shutdown() {
  std::lock_guard lock(shutdown_mutex_);
  if (joined_) return;
  assert(this_worker().pool != this && "a pool cannot be shut down from one of its own workers");
  closed_.store(true, std::memory_order_seq_cst);  // seq_cst: see push()
  std::atomic_thread_fence(std::memory_order_seq_cst);
  idle_.wait_quiescent();
  // seq_cst: pairs with the fence in IdleWorkers::announce_sleep() before a
  // worker's read of it (PoolCore::stopping()).
  stop_.store(true, std::memory_order_seq_cst);
  for (auto& w : workers_) w->parker.unpark();
  for (auto& w : workers_) w->thread.join();
  // Every task has completed, but an outside thread that pushed one may
  // still be on its way out of push() (the wake rule after its push).
  injection_->wait_for_pushers();
  joined_ = true;
}

void PoolCore::record_exception(std::exception_ptr e) noexcept {
  std::lock_guard lock(error_mutex_);
  if (!first_error_) {
    first_error_ = std::move(e);
  } else {
    ++dropped_errors_;
  }
}

}  // namespace detail

// ---- ThreadPool --------------------------------------------------------------

ThreadPool::ThreadPool(PoolOptions options)
    : core_(std::make_unique<detail::PoolCore>(std::move(options), this)) {}
ThreadPool* ThreadPool::current() noexcept {
  const detail::PoolCore* p = detail::current_pool();
  return p != nullptr ? p->owner : nullptr;
}
ThreadPool::~ThreadPool() = default;  // PoolCore's destructor shuts down and joins
void ThreadPool::push(detail::TaskNode* t) { core_->push(t); }
void ThreadPool::push_posted(detail::TaskNode* t) { core_->push_posted(t); }
std::size_t ThreadPool::take_back(bool (*take)(detail::TaskNode*, const void*) noexcept, const void* ctx) noexcept {
  return core_->take_back(take, ctx);
}

void ThreadPool::wait_idle() { core_->wait_idle(); }
void ThreadPool::shutdown() { core_->shutdown(); }
int ThreadPool::size() const noexcept { return core_->size(); }
const std::vector<int>& ThreadPool::cpus() const noexcept { return core_->cpus(); }
bool ThreadPool::is_worker() const noexcept { return detail::on_worker_of(*core_); }
PoolStats ThreadPool::stats() const { return core_->stats(); }
int ThreadPool::idle_worker_count() const noexcept { return static_cast<int>(core_->idle_count()); }
const char* ThreadPool::push_fences() noexcept {
  return detail::enable_asymmetric_fences() ? "membarrier" : "fences";
}
int ThreadPool::current_worker_index() noexcept {
  const detail::WorkerContext& c = detail::this_worker();
  return c.worker != nullptr ? c.worker->index : -1;
}

}  // namespace weft
