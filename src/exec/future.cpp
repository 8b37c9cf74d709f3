// Where futures' continuations go: the pool's queues (weft/exec/future.hpp).
#include "weft/exec/future.hpp"

#include <new>
#include <stdexcept>
#include <system_error>

#include "pool_core.hpp"
#include "weft/exec/default_pool.hpp"

namespace weft::detail {

PoolCore& core_of(ThreadPool& pool) noexcept { return *pool.core_; }

void push_continuation(PoolCore& pool, TaskNode* t) noexcept {
  // Every failure of PoolCore::push() (a pool shut down, no injection deque
  // or no room in one) has discarded the task already — which cancels a
  // continuation's task, so its future reports the refusal. Discarding it
  // again here would release it twice.
  try {
    pool.push(t);
  } catch (...) {
  }
}

// The context's pool is only ever set together with its worker.
bool on_worker_of(const PoolCore& pool) noexcept { return this_worker().pool == &pool; }

// in_place: only this thread reads or writes it, so no atomics.
RunningInPlace::RunningInPlace(PoolCore* pool) noexcept : saved_(this_worker().in_place) {
  if (pool != nullptr) this_worker().in_place = pool;
}
RunningInPlace::~RunningInPlace() { this_worker().in_place = saved_; }

PoolCore& current_or_default_pool() {
  if (PoolCore* p = current_pool()) return *p;
  return core_of(default_pool());
}

}  // namespace weft::detail
