// parallel_invoke's fork and join on a worker (weft/detail/exec/invoke_task.hpp).
#include "weft/detail/exec/invoke_task.hpp"

#include "pool_core.hpp"
#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/futex.hpp"

namespace weft::detail {

namespace {
bool invoke_done(std::uint32_t w) noexcept { return (w >> 2) == 0; }
}  // namespace

void InvokeTask::execute_stolen(TaskNode* t) noexcept {
  auto* self = static_cast<InvokeTask*>(t);
  self->run_here();
  sched_point();
  std::atomic<std::uint32_t>& word = self->state;
  // release: publishes the run and `error` to the joiner, whose done()
  // test loads the word with acquire (block_on()). The waiter bit needs no
  // more: RMWs of one word are totally ordered, so this one sees a bit the
  // joiner's RMW set before it, and otherwise the joiner's re-check after
  // setting it sees the unit gone. After it the task may be gone: the wake
  // uses only the address.
  if ((word.fetch_sub(kUnit, std::memory_order_release) & kWaiter) != 0) futex_wake(word, kWakeAll);
}

void InvokeTask::discard_unrun(TaskNode* t) noexcept {
  // Every queued task can be discarded, but nothing discards an InvokeTask:
  // a fork whose deque cannot grow queues none of its tasks (push_n() grows
  // first), and take_back() takes only a group's tasks, recognised by their
  // discard. Should one be, its unit goes, as if it had run.
  // relaxed: the pushing thread's own task, never published.
  static_cast<InvokeTask*>(t)->state.store(0, std::memory_order_relaxed);
}

bool invoke_fork(ThreadPool& pool, InvokeTask* tasks, std::size_t n) {
  WorkerContext& ctx = this_worker();
  // ThreadPool::is_worker(), inline, and without core_of()'s call.
  if (ctx.pool == nullptr || ctx.pool->owner != &pool) return false;
  // The calls through push() and push_or_discard() per task were a third
  // of a fork's instructions. Throws, with nothing queued, if the deque
  // cannot grow: nothing ran and nothing is left to join.
  ctx.pool->push_own_batch(*ctx.worker, n, [tasks](std::int64_t i) -> TaskNode* { return &tasks[i]; });
  return true;
}

namespace {
// Pops t if it is still the newest task on w's deque (pop_exactly()) and
// counts it as run (the caller runs it); a task queued above it, popped in
// its place, is pushed back and announced. Always inline: the join's loop
// calls it per task (called, skynet took 18 more instructions per task).
[[gnu::always_inline]] inline bool take_own(PoolCore& pool, Worker& w, InvokeTask* t) noexcept {
  bool pushed_back = false;
  if (w.source.deque.pop_exactly(t, pushed_back)) {
    // Counted before it runs, inside the running task, which is itself not
    // yet counted: the pool never looks idle meanwhile.
    count_completed(w.completed);
    return true;
  }
  if (pushed_back) pool.announce_own_push(w);
  return false;
}
}  // namespace

bool invoke_take_back(InvokeTask* t) noexcept {
  // invoke_fork() pushed it from this thread as a worker (or the seat's
  // guest), which it still is: its own deque.
  WorkerContext& ctx = this_worker();
  return take_own(*ctx.pool, *ctx.worker, t);
}

void invoke_wait(InvokeTask* tasks, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) block_on(tasks[i].state, &invoke_done, InvokeTask::kWaiter, true);
}

void invoke_join(InvokeTask* tasks, std::size_t n) noexcept {
  // invoke_fork() pushed them from this thread as a worker (or the seat's
  // guest), which it still is: its own deque, looked up once.
  WorkerContext& ctx = this_worker();
  Worker& w = *ctx.worker;
  // All at once while no worker looks for work (an n-way fork, skynet's
  // 9 or a loop's pieces): one fence for the n take-backs instead of n.
  // They are then out of thieves' reach while they run here one after
  // another, so after each one the join looks at the idle word again (a
  // relaxed hint, one load) and, if a worker has gone idle, pushes the
  // ones not yet run back, as the fork pushed them, and joins those one at
  // a time below, where a thief can take them: an idle worker waits at
  // most one sibling's run for them. (Left on the deque from the start,
  // every sibling is a thief's at once; taken back together, none is
  // until the one running returns. A function that waits for another of
  // the same call can therefore wait for ever, as it can on a pool of one
  // worker: parallel_invoke's contract says so.)
  std::size_t left = n;
  if (n > 1 && ctx.pool->idle_count() == 0) {
    bool restored = false;
    const auto task_at = [tasks](std::int64_t i) { return static_cast<TaskNode*>(&tasks[i]); };
    if (w.source.deque.take_newest_n(static_cast<std::int64_t>(n), task_at, restored)) {
      for (left = n; left > 0;) {
        --left;
        // As take_own(): counted before it runs, inside the running task.
        count_completed(w.completed);
        tasks[left].run_here();
        // No growth (try_push_n()): this join cannot throw; a deque
        // too full to take them back keeps them here.
        if (left > 0 && ctx.pool->idle_count() > 0 &&
            w.source.deque.try_push_n(static_cast<std::int64_t>(left), task_at)) {
          ctx.pool->announce_own_push(w);
          break;
        }
      }
      if (left == 0) return;
    } else if (restored) {
      ctx.pool->announce_own_push(w);
    }
  }
  // Newest first: a task still at the bottom of this worker's deque is
  // taken back (the pop decides: no thief can have it after) and run here;
  // its word is nobody else's, so it is not touched.
  while (left > 0) {
    InvokeTask* const t = &tasks[left - 1];
    if (!take_own(*ctx.pool, w, t)) break;
    t->run_here();
    --left;
  }
  // The rest were taken, or lie under a task queued above them (the first
  // function may have posted one): wait for their units, helping, which
  // may run them here through execute_stolen().
  invoke_wait(tasks, left);
}

}  // namespace weft::detail
