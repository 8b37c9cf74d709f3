#include "weft/exec/thread_pool.hpp"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>

#include "pool_core.hpp"
#include "weft/error.hpp"
#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/exec/fault_injection.hpp"
#include "weft/detail/exec/victim_rings.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/detail/sync/wait.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/topology.hpp"

namespace weft {
namespace detail {

std::atomic<WorkerStartHook> g_worker_start_hook{nullptr};

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
}  // namespace

namespace {
// The injection slot this outside thread pushed to last, by pool id.
struct InjectorCache {
  std::uint64_t pool_id = 0;
  Source* source = nullptr;
  int slot = -1;
};
InjectorCache& injector_cache() noexcept {
  thread_local InjectorCache cache;
  return cache;
}

// Every injection slot this outside thread holds, one per pool, given back
// when the thread exits. weak_ptr: a pool destroyed first has nothing to
// take back, and its table goes with it.
struct HeldSlot {
  std::uint64_t pool_id;
  std::weak_ptr<InjectionSlots> table;
  int slot;
};
thread_local bool t_slots_given_back = false;
struct HeldSlots {
  std::vector<HeldSlot> held;
  // The table of the pool the cache names, held while it does: the cached
  // Source stays valid memory even after that pool is destroyed, so the
  // look in run_if_still_queued() needs no check (set with the cache, on a
  // thread's first push to a pool after another, not per push or wait).
  std::shared_ptr<InjectionSlots> cached;
  HeldSlots() = default;
  HeldSlots(const HeldSlots&) = delete;
  HeldSlots& operator=(const HeldSlots&) = delete;
  ~HeldSlots() {
    t_slots_given_back = true;
    injector_cache() = {};  // the slot may be someone else's from here on
    for (const HeldSlot& h : held)
      if (std::shared_ptr<InjectionSlots> table = h.table.lock()) table->release(h.slot);
  }
};
// Null once the thread's thread_locals are being destroyed (a destructor
// that submits then borrows a slot for each push).
HeldSlots* held_slots() noexcept {
  if (t_slots_given_back) return nullptr;
  thread_local HeldSlots slots;
  return &slots;
}
}  // namespace

bool run_if_still_queued(TaskNode* t) noexcept {
  WorkerContext& c = this_worker();
  if (c.worker != nullptr) {
    Source& s = c.worker->source;
    if (s.deque.peek_bottom() != t || s.deque.pop() != t) return false;
    c.pool->execute(*c.worker, t);  // counts as this worker's completion
    return true;
  }
  InjectorCache& cache = injector_cache();
  if (cache.source == nullptr) return false;
  // The pool this thread pushed to last may be gone by now (t may be
  // another pool's task, queued by another thread); its slot table is not:
  // HeldSlots::cached holds it while the cache names it.
  Source& s = *cache.source;
  // pop_batched(): workers take from this deque in batches.
  if (s.deque.peek_bottom() != t || s.deque.pop_batched() != t) return false;
  // Taken back before any worker saw it: it no longer counts as pushed.
  // relaxed: owner-written counter, read by wait_idle() after its fence.
  s.pushed.store(s.pushed.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  t->execute(t);
  return true;
}

WorkerContext& this_worker() noexcept {
  thread_local WorkerContext ctx;
  return ctx;
}

bool on_worker_thread() noexcept { return this_worker().worker != nullptr; }

bool help_one() noexcept {
  WorkerContext& c = this_worker();
  return c.worker != nullptr && c.pool->help_one(*c.worker);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept { futex_wake(word, kWakeAll); }

void record_post_exception(PoolCore* pool, std::exception_ptr e) noexcept { pool->record_exception(e); }

namespace {
// A pool wait: the waiter-bit protocol, helping on a worker thread.
struct BlockOn : WaiterBitWait<DonePredicate> {
  bool helping;
  bool help() const noexcept { return helping && help_one(); }
  bool helps() const noexcept { return helping; }
  // A helping worker sleeps at most 1 ms at a time: work it could help
  // with may be queued where no wake-up reaches it (it is neither
  // searching nor parked as idle).
  std::chrono::nanoseconds max_sleep() const noexcept {
    return helping ? std::chrono::milliseconds(1) : std::chrono::nanoseconds::zero();
  }
};
}  // namespace

bool block_on(std::atomic<std::uint32_t>& word, DonePredicate done, std::uint32_t waiter_bit, bool help,
              std::chrono::nanoseconds timeout) noexcept {
  BlockOn p{{{}, word, done, waiter_bit}, help};
  return wait_until(p, WaitOptions{}, Deadline::after(timeout));
}

// ---- PoolCore ----------------------------------------------------------------

PoolCore::PoolCore(PoolOptions options) : options_(std::move(options)), id_(g_next_pool_id.fetch_add(1)) {
  const int n = options_.workers.value_or(available_parallelism());
  if (n < 1)
    throw std::invalid_argument("weft::ThreadPool: a pool needs at least one worker, got " + std::to_string(n));
  if (n > 4096)
    throw std::invalid_argument("weft::ThreadPool: " + std::to_string(n) + " workers is more than the 4096 allowed");
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
      w->thread = std::thread([this, raw] { run_worker(*raw); });
      ++started;
      // cpus_, not raw->cpu: an unpinned worker is writing its own.
      if (!cpus_.empty()) pin_thread(raw->thread, cpus_[static_cast<std::size_t>(started - 1)]);
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

PoolCore::Injector PoolCore::injector_for_this_thread() {
  const InjectorCache& cache = injector_cache();
  if (cache.pool_id == id_) return {cache.source, cache.slot};
  return take_injector();
}

PoolCore::Injector PoolCore::take_injector() {
  HeldSlots* slots = held_slots();
  if (slots == nullptr) {
    const int slot = injection_->acquire();
    return {&injection_->source(slot), slot, true};
  }
  // The slot this thread already holds in this pool, else a new one.
  const auto held =
      std::find_if(slots->held.begin(), slots->held.end(), [this](const HeldSlot& h) { return h.pool_id == id_; });
  int slot = held != slots->held.end() ? held->slot : -1;
  if (slot < 0) {
    slot = injection_->acquire();
    try {
      // Slots of pools that are gone have nothing to give back to.
      std::erase_if(slots->held, [](const HeldSlot& h) { return h.table.expired(); });
      slots->held.push_back({id_, injection_, slot});
    } catch (...) {
      injection_->release(slot);
      throw;
    }
  }
  slots->cached = injection_;
  InjectorCache& cache = injector_cache();
  cache = {id_, &injection_->source(slot), slot};
  return {cache.source, cache.slot};
}

void PoolCore::push(TaskNode* t) {
  WorkerContext& ctx = this_worker();
  if (ctx.pool == this) {
    Source& s = ctx.worker->source;
    bump(s.pushed);  // before the push: wait_idle() must never count a completion it has not counted pushed
    s.deque.push(t);
    sched_point();
    // seq_cst fence: our push (store) must be ordered before reading the
    // idle state (load), against a worker that announces sleep (RMW) and
    // then rescans the queues — the store-load pattern of Dekker's mutual
    // exclusion. Without it a submitter and a sleeper can miss each other.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (idle_.notify_one()) count_wakes_sent(*ctx.worker);
    return;
  }
  // relaxed: a fast refusal only; the decisive check is after the fence.
  if (closed_.load(std::memory_order_relaxed)) {
    t->discard(t);
    throw std::runtime_error("weft::ThreadPool: submit to a pool that is shut down");
  }
  Injector in;
  try {
    in = injector_for_this_thread();
  } catch (...) {
    t->discard(t);
    throw;
  }
  Source& s = *in.source;
  bump(s.pushed);
  s.deque.push(t);
  sched_point();
  // seq_cst fence: as above, against shutdown() (either shutdown's fence
  // comes later and its quiescence check sees this push, or we see
  // closed_ below), and against a thief that clears the slot's bit
  // (mark() reads the bit after it).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (closed_.load(std::memory_order_relaxed)) {  // relaxed: ordered by the fence
    if (s.deque.pop_batched() == t) {  // an injection deque: see run_if_still_queued()
      s.pushed.store(s.pushed.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
      if (in.borrowed) injection_->release(in.slot);
      t->discard(t);
      throw std::runtime_error("weft::ThreadPool: submit to a pool that is shut down");
    }
    // A worker already took it: it runs, the submission stands.
  }
  injection_->mark(in.slot);  // a bit it sets is part of the push: it fences after it
  if (in.borrowed) injection_->release(in.slot);
  idle_.notify_one(&s);  // a borrowed slot given back above is still the pool's memory
}

std::size_t PoolCore::take_back(bool (*take)(TaskNode*, const void*) noexcept, const void* ctx) noexcept {
  WorkerContext& c = this_worker();
  Source* s = nullptr;
  int slot = -1;  // the outside thread's injection slot
  if (c.pool == this) {
    s = &c.worker->source;
  } else if (InjectorCache& cache = injector_cache(); cache.pool_id == id_) {
    s = cache.source;
    slot = cache.slot;
  }
  if (s == nullptr) return 0;
  const auto taken = static_cast<std::uint64_t>(s->deque.take_all([take, ctx](TaskNode* t) { return take(t, ctx); }));
  // Taken back before any worker saw them: they no longer count as pushed.
  // relaxed: owner-written counter, read by wait_idle() after its fence.
  s->pushed.store(s->pushed.load(std::memory_order_relaxed) - taken, std::memory_order_relaxed);
  sched_point();
  // seq_cst fence: the tasks put back are pushes like any other (see push()):
  // a worker that saw the deque empty meanwhile may have gone to sleep.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // The tasks put back must be findable like any push: a thief that found
  // the slot empty while take_all() held them may have cleared its bit (and
  // the summary's) and gone to sleep. mark() fences as in push().
  if (slot >= 0 && !s->deque.empty()) injection_->mark(slot);
  if (idle_.notify_one() && c.pool == this) count_wakes_sent(*c.worker);
  return static_cast<std::size_t>(taken);
}

bool PoolCore::anything_queued() const noexcept {
  for (const auto& w : workers_)
    if (!w->source.deque.empty()) return true;
  if (!guest_->source.deque.empty()) return true;
  return injection_->any_marked([](const Source& s) { return !s.deque.empty(); });
}

std::uint32_t PoolCore::queued_up_to(std::uint32_t cap) const noexcept {
  std::uint64_t n = 0;
  auto add = [&](const Source& s) { return (n += static_cast<std::uint64_t>(s.deque.size())) >= cap; };
  for (const auto& w : workers_)
    if (add(w->source)) return cap;
  if (add(guest_->source)) return cap;
  return injection_->any_marked(add) ? cap : static_cast<std::uint32_t>(n);
}

namespace {
// A thief widens its search by one ring after this many searches in a row
// found nothing: bounded, so a task far away waits a few empty searches of
// the near rings (each a load or two per victim), not a park.
constexpr int kEmptySearchesPerRing = 2;

// A thief clears the injection bits of empty slots only after this many
// looks in a row at the injection slots found nothing (~1 us of spinning here): a submitter that
// waits for its task and posts the next one sooner finds its bit still set
// and pays a load, not two read-modify-writes and a fence against the
// thief's clear (+130 ns on the remote round trip when every search cleared).
constexpr int kPassesBeforeClearing = 16;

// The most tasks a worker takes from a submitter's deque at once (half of
// what is there, rounded up, up to this): a submitter that posts a burst
// costs the workers one CAS per batch, not one per task.
constexpr std::int64_t kInjectionBatch = 16;
static_assert(kInjectionBatch <= WorkStealingDeque::kMaxBatch, "steal_batch() takes at most kMaxBatch");

// A random index below n: xorshift64, scaled by a multiply rather than a
// division (a steal attempt costs a few ns; a 64-bit divide would be most
// of it). Good enough to spread thieves over a ring.
std::size_t random_below(std::uint64_t& state, std::size_t n) noexcept {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return static_cast<std::size_t>(((state >> 32) * static_cast<std::uint64_t>(n)) >> 32);
}
}  // namespace

TaskNode* PoolCore::steal_any(Worker& w) noexcept {
  for (int round = 0; round < 4; ++round) {
    bool retry = false;
    TaskNode* t = nullptr;
    // The rings in reach, nearest first, each from a random victim on.
    for (std::size_t r = 0; r < w.reach; ++r) {
      const std::vector<int>& ring = w.rings[r];
      const std::size_t n = ring.size();
      const std::size_t first = n == 1 ? 0 : random_below(w.rng, n);
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = first + k < n ? first + k : first + k - n;
        const Steal s = workers_[static_cast<std::size_t>(ring[i])]->source.deque.steal(t);
        if (s == Steal::success) {
          bump(w.counters.steals_by_ring[static_cast<std::size_t>(w.ring_kinds[r])]);
          trace_event(w, TraceKind::steal, ring[i], w.ring_kinds[r]);
          w.reach = r + 1;  // nothing nearer had work: this is where to look first next time
          w.empty_searches = 0;
          return t;
        }
        retry |= s == Steal::retry;
      }
    }
    // The seat's guest (an outside caller computing as a worker): the
    // farthest victim. An empty deque costs two loads.
    if (&w != guest_.get()) {
      const Steal s = guest_->source.deque.steal(t);
      if (s == Steal::success) {
        bump(w.counters.steals_by_ring[static_cast<std::size_t>(StealRing::remote)]);
        trace_event(w, TraceKind::steal, -1, StealRing::remote);  // -1: an outside thread's deque
        w.empty_searches = 0;
        return t;
      }
      retry |= s == Steal::retry;
    }
    bool rearmed = false;
    std::array<TaskNode*, kInjectionBatch> batch;
    std::int64_t taken = 0;
    const Steal r = injection_->steal(w.rng, batch.data(), kInjectionBatch, taken, rearmed,
                                      w.empty_passes >= kPassesBeforeClearing);
    // A bit set again is a push (see push()); whoever set it fenced after it.
    if (rearmed && idle_.notify_one()) count_wakes_sent(w);
    if (r == Steal::success) {
      bump(w.counters.steals_from_submitters, static_cast<std::uint64_t>(taken));
      // A steal event per task taken, as in the stats.
      if (w.trace) [[unlikely]]
        for (std::int64_t i = 0, ns = now_ns(); i < taken; ++i) trace_event_at(w, ns, TraceKind::steal);
      w.empty_passes = 0;
      // The oldest runs now; the rest go to our deque, newest first, so our
      // pops run them in the order they were submitted and thieves take the
      // newest. Not counted as pushed: the submitter's slot counted them
      // (wait_idle() sums both).
      if (taken > 1) {
        for (std::int64_t i = taken - 1; i >= 1; --i) w.source.deque.push(batch[static_cast<std::size_t>(i)]);
        sched_point();
        // seq_cst fence: these are pushes like push()'s, and so is what
        // follows: our stores before the read of the idle word. (A searcher
        // counts itself searching here, so this wakes nobody; its found()
        // then wakes sleepers for what is queued.)
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (idle_.notify_one()) count_wakes_sent(w);
      }
      return batch[0];
    }
    if (w.empty_passes < kPassesBeforeClearing) ++w.empty_passes;
    retry |= r == Steal::retry;
    if (!retry) break;
  }
  if (w.reach < w.rings.size() && ++w.empty_searches >= kEmptySearchesPerRing) {
    ++w.reach;
    w.empty_searches = 0;
  }
  bump(w.counters.failed_steal_rounds);
  return nullptr;
}

TaskNode* PoolCore::find_task(Worker& w) noexcept {
  if (TaskNode* t = w.source.deque.pop()) return t;
  return steal_any(w);
}

void PoolCore::execute(Worker& w, TaskNode* t) noexcept {
  trace_event(w, TraceKind::task_start);
  t->execute(t);
  trace_event(w, TraceKind::task_end);
  // release: a wait_idle() that reads the new count (acquire) sees the
  // task's effects and the pushes it made.
  w.completed.store(w.completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

bool PoolCore::help_one(Worker& w) noexcept {
  TaskNode* t = find_task(w);
  if (t == nullptr) return false;
  execute(w, t);
  return true;
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

void PoolCore::run_worker(Worker& w) {
  this_worker() = {this, &w};
  if (w.cpu < 0) w.cpu = current_cpu();  // unpinned: a hint, the scheduler may move us
  // release: the constructor reads w.cpu after seeing the count reach 0.
  if (unread_cpus_.fetch_sub(1, std::memory_order_release) == 1) unread_cpus_.notify_one();
  rings_ready_.wait(false, std::memory_order_acquire);  // acquire: see release_workers()
  w.counters.since_ns = now_ns();
  run_hook(options_.on_worker_start, "on_worker_start", w.index);
  for (;;) {
    TaskNode* t = find_task(w);
    if (t == nullptr && (t = idle_.search_or_sleep(w)) == nullptr) break;  // null: the pool stops
    execute(w, t);
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

PoolStats PoolCore::stats() const {
  PoolStats s;
  s.workers.reserve(workers_.size());
  const auto read = [](const Worker& w) {
    const WorkerCounters& c = w.counters;
    // relaxed: a snapshot of counters nothing is published through.
    auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    WorkerStats ws;
    ws.tasks_run = get(w.completed);
    for (std::size_t r = 0; r < ws.steals_by_ring.size(); ++r) {
      ws.steals_by_ring[r] = get(c.steals_by_ring[r]);
      ws.steals_from_workers += ws.steals_by_ring[r];
    }
    ws.steals_from_submitters = get(c.steals_from_submitters);
    ws.failed_steal_rounds = get(c.failed_steal_rounds);
    ws.parks = get(c.parks);
    ws.wakeups_sent = get(c.wakeups_sent);
    ws.wakeups_received = get(c.wakeups_received);
    ws.spins_found_work = get(c.spins_found_work);
    ws.busy = std::chrono::nanoseconds(static_cast<std::int64_t>(get(c.busy_ns)));
    ws.idle = std::chrono::nanoseconds(static_cast<std::int64_t>(get(c.idle_ns)));
    return ws;
  };
  for (const auto& w : workers_) {
    WorkerStats ws = read(*w);
    ws.index = w->index;
    ws.cpu = w->cpu;  // written before the workers were released, never after
    s.total += ws;
    s.workers.push_back(ws);
  }
  // The guest's index is the seated thread's to write: not read here.
  s.seated = read(*guest_);
  s.total += s.seated;
  return s;
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
  stop_.store(true, std::memory_order_seq_cst);  // seq_cst: pairs with the workers' fence before sleeping
  for (auto& w : workers_) w->parker.unpark();
  for (auto& w : workers_) w->thread.join();
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

WorkerStats& WorkerStats::operator+=(const WorkerStats& o) noexcept {
  tasks_run += o.tasks_run;
  steals_from_workers += o.steals_from_workers;
  steals_from_submitters += o.steals_from_submitters;
  failed_steal_rounds += o.failed_steal_rounds;
  for (std::size_t r = 0; r < steals_by_ring.size(); ++r) steals_by_ring[r] += o.steals_by_ring[r];
  parks += o.parks;
  wakeups_sent += o.wakeups_sent;
  wakeups_received += o.wakeups_received;
  spins_found_work += o.spins_found_work;
  busy += o.busy;
  idle += o.idle;
  return *this;
}

// ---- ThreadPool --------------------------------------------------------------

ThreadPool::ThreadPool(PoolOptions options) : core_(std::make_unique<detail::PoolCore>(std::move(options))) {}
ThreadPool::~ThreadPool() = default;  // PoolCore's destructor shuts down and joins
void ThreadPool::push(detail::TaskNode* t) { core_->push(t); }
std::size_t ThreadPool::take_back(bool (*take)(detail::TaskNode*, const void*) noexcept, const void* ctx) noexcept {
  return core_->take_back(take, ctx);
}

void ThreadPool::wait_idle() { core_->wait_idle(); }
void ThreadPool::shutdown() { core_->shutdown(); }
int ThreadPool::size() const noexcept { return core_->size(); }
const std::vector<int>& ThreadPool::cpus() const noexcept { return core_->cpus(); }
bool ThreadPool::is_worker() const noexcept { return detail::this_worker().pool == core_.get(); }
PoolStats ThreadPool::stats() const { return core_->stats(); }
int ThreadPool::idle_worker_count() const noexcept { return static_cast<int>(core_->idle_.idle_count()); }
int ThreadPool::current_worker_index() noexcept {
  const detail::WorkerContext& c = detail::this_worker();
  return c.worker != nullptr ? c.worker->index : -1;
}

}  // namespace weft
