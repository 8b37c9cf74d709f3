// Where futures' continuations go: the pool's queues (weft/exec/future.hpp).
#include "weft/exec/future.hpp"

#include "pool_core.hpp"
#include "weft/exec/default_pool.hpp"

namespace weft::detail {

PoolCore& core_of(ThreadPool& pool) noexcept { return *pool.core_; }

void push_continuation(PoolCore& pool, Task* t) noexcept {
  try {
    pool.push(t);
  } catch (...) {
    // Only a shut-down pool refuses a push, and it has discarded the task
    // (a continuation's discard cancels it): the refusal is its future's.
  }
}

PoolCore& current_or_default_pool() {
  if (PoolCore* p = this_worker().pool) return *p;
  return core_of(default_pool());
}

}  // namespace weft::detail
