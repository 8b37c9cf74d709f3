// How the pool's waits wait (weft/detail/exec/block_on.hpp): a wait on a
// worker thread runs other queued tasks while its condition is false, then
// spins and sleeps on the waiter bit.
#include <chrono>
#include <cstdint>

#include "pool_core.hpp"
#include "weft/detail/exec/deferred.hpp"
#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/exec/promise.hpp"
#include "weft/detail/sync/wait.hpp"

namespace weft::detail {

bool on_worker_thread() noexcept { return this_worker().worker != nullptr; }

std::coroutine_handle<> break_chain(Join* top) noexcept {
  std::coroutine_handle<> last;
  for (Join* j = top; j != nullptr;) {
    Join* const below = j->below;  // read first: after the fetch_sub j may be gone
    const std::size_t k = j->local + 1;
    // acq_rel: release publishes the children this thread finished (and
    // the suspended one's state before it suspended) to the last arrival;
    // acquire, if this is the last, sees every other child's result before
    // the parent resumes. The reservation kept j alive until here.
    if (j->remaining.fetch_sub(k, std::memory_order_acq_rel) == k) last = j->parent;
    j = below;
  }
  return last;
}

TaskNode* take_own_newest_in(const void* first, std::size_t bytes) noexcept {
  WorkerContext& c = this_worker();
  if (c.worker == nullptr) return nullptr;
  const auto begin = reinterpret_cast<std::uintptr_t>(first);
  TaskNode* const t = c.worker->source.deque.pop_if(
      [begin, bytes](const TaskNode* x) { return reinterpret_cast<std::uintptr_t>(x) - begin < bytes; });
  // Counted before it runs, inside the running task, which is itself not
  // yet counted: the pool never looks idle meanwhile.
  if (t != nullptr) count_completed(c.worker->completed);
  return t;
}

bool push_own_n(PoolCore& pool, TaskNode* first, std::size_t stride, std::size_t n) noexcept {
  WorkerContext& c = this_worker();
  if (c.pool != &pool) return false;
  auto* const base = reinterpret_cast<std::byte*>(first);
  try {
    pool.push_own_batch(*c.worker, n, [base, stride](std::int64_t i) -> TaskNode* {
      return reinterpret_cast<TaskNode*>(base + static_cast<std::size_t>(i) * stride);
    });
  } catch (...) {
    return false;  // the deque could not grow: none queued; the caller pushes them one by one
  }
  return true;
}

bool help_one() noexcept {
  WorkerContext& c = this_worker();
  return c.worker != nullptr && c.pool->help_one(*c.worker);
}

void run_in_seat(TaskNode* root, std::atomic<std::uint32_t>& word, DonePredicate done) noexcept {
  WorkerContext& c = this_worker();
  Worker& g = *c.worker;  // the seat's guest worker
  // Counted pushed, then run as a task the guest popped: wait_idle() sees
  // the root pending while it runs (a child its chain takes back is counted
  // run inside it, take_own_newest_in()), and the stats and the trace have
  // it as one of the seat's tasks.
  // (Resumptions caused here go to the pools' queues even inside an outer
  // coroutine's resumption on this thread: the Seat turned its hand-off
  // slot off.)
  // relaxed (bump): execute()'s release store of the completion publishes
  // it to any quiescent() that sees the root done.
  bump(g.source.pushed);
  c.pool->execute(g, root);
  // acquire: as block_on()'s predicate reads, the result before get().
  while (!done(word.load(std::memory_order_acquire)) && c.pool->help_one(g)) {
  }
}

namespace {
// The fast path of a helping wait (a fork-join join, whose task is usually
// this worker's own newest): on a worker, runs queued tasks until done(),
// with no spin set-up, no clock and no waiter bit. False when not on a
// worker, or nothing is left to run and it is not done: the protocol below
// takes over.
bool helped_until_done(const std::atomic<std::uint32_t>& word, DonePredicate done) noexcept {
  const WorkerContext& c = this_worker();
  if (c.worker == nullptr) return false;
  // acquire: as the protocol's poll(), done() publishes the awaited work.
  while (!done(word.load(std::memory_order_acquire)))
    if (!c.pool->help_one(*c.worker)) return false;
  return true;
}

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
  if (help && helped_until_done(word, done)) return true;
  // Inside a coroutine's resumption, before this thread sleeps: the
  // hand-off slot's coroutine goes to its pool's queues (it would otherwise
  // run only once the waiting coroutine suspends, which may be what this
  // waits for), and resumptions the wait causes use the queues too. (The
  // helping above may have put one there: it runs tasks in this context.)
  Trampoline& t = trampoline;
  const bool in_coroutine = t.active;
  if (in_coroutine) {
    t.active = false;
    if (t.handoff) {
      t.handoff = {};
      push_continuation(*t.handoff_pool, t.handoff_node);
    }
  }
  BlockOn p{{{}, word, done, waiter_bit}, help};
  const bool ok = wait_until(p, WaitOptions{}, Deadline::after(timeout));
  t.active = in_coroutine;
  return ok;
}

TaskNode* PoolCore::find_task_or_flush(Worker& w) noexcept {
  TaskNode* t = find_task(w);
  if (t == nullptr && run_deferred()) t = find_task(w);
  return t;
}

bool PoolCore::help_one(Worker& w) noexcept {
  // Nothing queued here: what this thread put off (its coroutines' I/O)
  // may be what the wait waits for.
  TaskNode* t = find_task_or_flush(w);
  if (t == nullptr) return false;
  execute(w, t);
  return true;
}

}  // namespace weft::detail
