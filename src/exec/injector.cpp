// The calling thread's side of the pool's queues: the injection slot an
// outside thread holds in each pool it posts to (cached per thread, given
// back when the thread exits), and taking back what this thread queued and
// no worker has taken yet (run_if_still_queued(), PoolCore::take_back()).
// PoolCore::push() itself, with the fence argument, is in thread_pool.cpp.
#include <algorithm>
#include <memory>
#include <vector>

#include "pool_core.hpp"
#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/sched_point.hpp"

namespace weft::detail {

namespace {
// The injection slot this outside thread pushed to last, by pool id.
struct InjectorCache {
  std::uint64_t pool_id = 0;
  // The pool itself: only used while one of its tasks is in `source`, which
  // keeps it alive (its shutdown waits for that task).
  PoolCore* pool = nullptr;
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
    if (s.deque.pop_if([t](const TaskNode* x) { return x == t; }) == nullptr) return false;
    c.pool->execute(*c.worker, t);  // counts as this worker's completion
    return true;
  }
  InjectorCache& cache = injector_cache();
  if (cache.source == nullptr) return false;
  // The pool this thread pushed to last may be gone by now (t may be
  // another pool's task, queued by another thread); its slot table is not:
  // HeldSlots::cached holds it while the cache names it.
  Source& s = *cache.source;
  if (s.deque.peek_bottom() != t) return false;
  // pop_batched(): workers take from this deque in batches.
  bool pushed_back = false;
  TaskNode* const x = s.deque.pop_batched(pushed_back);
  // Before t stops counting as pushed below: until then its pool is alive.
  if (pushed_back) cache.pool->republish(s, cache.slot);
  if (x != t) return false;  // thieves took it (and everything below it)
  // Taken back before any worker saw it: it no longer counts as pushed.
  // relaxed: owner-written counter, read by quiescent() (thread_pool.cpp) after its seq_cst fence.
  s.pushed.store(s.pushed.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  // Still the pool's task, scoped here rather than around the call: a
  // worker's get() takes the branch above and needs no scope.
  const RunningInPlace here(cache.pool);
  t->execute(t);
  return true;
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
  cache = {id_, this, &injection_->source(slot), slot};
  return {cache.source, cache.slot};
}

void PoolCore::republish(Source& s, int slot) noexcept {
  sched_point();
  // seq_cst fence: the tasks pushed back are pushes like any other (see
  // push()): ordered before mark()'s read of the slot's bit, against a
  // thief that cleared the bit and then looks at the deque again.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  injection_->mark(slot);  // a bit it sets is part of the push: it fences after it
  idle_.notify_one(&s);
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
  // relaxed: owner-written counter, read by quiescent() (thread_pool.cpp) after its seq_cst fence.
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

}  // namespace weft::detail
