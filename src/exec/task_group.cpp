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

void TaskGroup::finish_one() noexcept {
  detail::sched_point();
  // acq_rel: release publishes the task's effects to wait()'s acquire; the
  // old value says whether this was the last task and someone sleeps. The
  // group may be destroyed as soon as the count is zero: the wake call only
  // uses the word's address.
  if (state_.fetch_sub(2, std::memory_order_acq_rel) == (2 | kWaiter)) detail::futex_wake(state_, detail::kWakeAll);
}

void TaskGroup::wait() {
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
  if (!done(state_.load(std::memory_order_acquire)))  // acquire: as in wait()
    detail::block_on(state_, &TaskGroup::done, kWaiter, detail::on_worker_thread());
  if (error_claimed_.load(std::memory_order_acquire) && error_) {
    report_error("weft::TaskGroup destroyed with an exception nobody wait()ed for", error_);
  }
}

}  // namespace weft
