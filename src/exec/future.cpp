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
  // PoolCore::push() fails in two ways. A pool that is shut down discards
  // the task, then throws std::runtime_error: a continuation's discard
  // cancels it, so its future reports the refusal. Failing to register
  // this thread's injection deque (std::bad_alloc, std::system_error from
  // its mutex) leaves the task with us: discard it the same way.
  try {
    pool.push(t);
  } catch (const std::bad_alloc&) {
    t->discard(t);
  } catch (const std::system_error&) {
    t->discard(t);
  } catch (const std::runtime_error&) {
  }
}

PoolCore& current_or_default_pool() {
  if (PoolCore* p = this_worker().pool) return *p;
  return core_of(default_pool());
}

}  // namespace weft::detail
