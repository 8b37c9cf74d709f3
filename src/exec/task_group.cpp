#include "weft/exec/task_group.hpp"

#include <stdexcept>

#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/error.hpp"
#include "weft/exec/cancelled.hpp"

namespace weft {

namespace detail {
thread_local constinit GroupFrame* t_group_frames = nullptr;
}  // namespace detail

namespace {
// Bit 0 of the state word: a waiter may sleep on it (the count is in bits 1-31).
constexpr std::uint32_t kWaiter = 1;
}  // namespace

bool TaskGroup::running_on_this_thread() const noexcept {
  for (const detail::GroupFrame* f = detail::t_group_frames; f != nullptr; f = f->below)
    if (f->group == this) return true;
  return false;
}

void TaskGroup::record(std::exception_ptr e) noexcept {
  // acq_rel: one winner stores the exception; wait() reads it after the
  // count reached zero, which the finishing RMWs order after this.
  if (!error_claimed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
}

void TaskGroup::cancel() noexcept {
  detail::sched_point();
  // relaxed: the flag carries no data; each task reads it once, and either
  // answer is a legal outcome of a cancel racing that task's start.
  cancelled_.store(true, std::memory_order_relaxed);
  take_back_queued();
}

void TaskGroup::discard_task(detail::Task* t) noexcept {
  auto* self = static_cast<GroupTaskBase*>(t);
  TaskGroup* g = self->group;
  self->destroy(self);
  g->finish_one();
}

bool TaskGroup::take_mine(detail::Task* t, const void* group) noexcept {
  if (t->discard != &discard_task) return false;
  auto* self = static_cast<GroupTaskBase*>(t);
  if (self->group != group) return false;
  self->destroy(self);
  return true;
}

// The cheap way to skip: the tasks still in the calling thread's own deque
// leave it in one step, are destroyed here (their blocks go back to this
// thread's free lists, no remote free), and leave the count in one RMW,
// instead of a steal, a remote free and a fetch_sub each on the workers.
void TaskGroup::take_back_queued() noexcept {
  const std::size_t n = pool_.take_back(&TaskGroup::take_mine, this);
  if (n == 0) return;
  skip();
  detail::sched_point();
  // acq_rel and the wake: as in finish_one(), for n tasks at once.
  const std::uint32_t two_n = static_cast<std::uint32_t>(2 * n);
  if (state_.fetch_sub(two_n, std::memory_order_acq_rel) == (two_n | kWaiter))
    detail::futex_wake(state_, detail::kWakeAll);
}

void TaskGroup::finish_one() noexcept {
  detail::sched_point();
  // acq_rel: release publishes the task's effects to wait()'s acquire; the
  // old value says whether this was the last task and someone sleeps. The
  // group may be destroyed as soon as the count is zero: the wake call only
  // uses the word's address.
  if (state_.fetch_sub(2, std::memory_order_acq_rel) == (2 | kWaiter)) detail::futex_wake(state_, detail::kWakeAll);
}

void TaskGroup::wait() {
  // A group cancelled by a stop (on another thread) still has the tasks
  // this thread queued in its deque: take them back rather than wait.
  if (is_cancelled()) take_back_queued();
  // acquire: pairs with finish_one()'s release.
  if (!done(state_.load(std::memory_order_acquire))) {
    // Only a wait that would block can be one from inside: the calling task
    // itself is still pending.
    if (running_on_this_thread())
      throw std::logic_error(
          "weft::TaskGroup::wait() called from one of its own tasks (it would wait for itself; "
          "wait in the code that run() the tasks, outside the group)");
    detail::block_on(state_, &TaskGroup::done, kWaiter, detail::on_worker_thread());
  }
  std::uint32_t w = kWaiter;
  // relaxed: clears our bit when nothing is pending; if a run() raced in,
  // the bit stays and only costs a spare wake call.
  state_.compare_exchange_strong(w, 0, std::memory_order_relaxed, std::memory_order_relaxed);
  // relaxed: the count reaching zero (acquire above) ordered every skip
  // before us, and the group is quiet now. A load first: the common wait
  // skipped nothing and writes nothing.
  const bool skipped = skipped_.load(std::memory_order_relaxed);
  if (skipped) skipped_.store(false, std::memory_order_relaxed);
  if (error_claimed_.load(std::memory_order_acquire)) {  // acquire: pairs with record()
    std::exception_ptr e = std::exchange(error_, nullptr);
    error_claimed_.store(false, std::memory_order_relaxed);  // relaxed: the group is quiet now
    std::rethrow_exception(e);
  }
  if (skipped) throw cancelled();
}

TaskGroup::~TaskGroup() {
  if (is_cancelled()) take_back_queued();
  if (!done(state_.load(std::memory_order_acquire)))  // acquire: as in wait()
    detail::block_on(state_, &TaskGroup::done, kWaiter, detail::on_worker_thread());
  if (error_claimed_.load(std::memory_order_acquire) && error_) {
    report_error("weft::TaskGroup destroyed with an exception nobody wait()ed for", error_);
  }
}

}  // namespace weft
