// weft/detail/exec/promise.hpp — the promise behind weft::Task<T> and the
// nodes that start tasks on the pool (weft/exec/coro.hpp).
//
// A task's frame (the promise is in it) comes from weft's per-thread
// PoolResource, like a queued task: a coroutine that awaits a child or
// spawns one takes a block from its thread's free list, and the thread
// that destroys the frame hands it back (remotely if it is another thread).
//
// When a task finishes it leaves through its final suspend point to
// exactly one of:
//   continuation_   the coroutine that awaited it;
//   completion_     a node that started it (spawn(), sync_wait(), a
//                   when_all child slot), which publishes the result and
//                   names the coroutine, if any, to run next.
//
// Symmetric transfer by hand: every weft resumption goes through
// resume_here(), a loop on the resuming thread, and an await_suspend that
// hands over to another coroutine (the child it awaits, the parent it
// finishes into) only names it to that loop and returns. Returning the
// handle from await_suspend instead relies on the compiler making the
// resume a tail call, which g++ 12 does not do under ASan: a chain of
// 10^6 awaits then overflowed the stack. The loop keeps it flat whatever
// the compiler does.
//
//   Trampoline   meaning
//   armed        the loop just resumed a coroutine on this thread and takes
//                the first handle named by transfer() as the next to run
//   not armed    no loop is waiting for a handle (none runs, or this
//                resumption already named one): transfer() runs its own
//                loop in place
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <new>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/exec/task.hpp"
#include "weft/exec/future.hpp"

namespace weft {

template <class T>
class Task;

namespace detail {

// The meeting point of a when_all over tasks (weft/exec/coro.hpp): the
// last child to finish resumes `parent`.
//
// The owner's chain. The thread that starts the join runs child 0 in
// place and queues the rest on its own deque. While it goes on running
// the join's children one after another on this thread — each finishing
// without suspending, the next one taken back off the bottom of its deque
// before a thief took it — it counts their finishes in `local`, a field
// only it touches: no RMW. The join sits on this loop's chain
// (Trampoline::chain) meanwhile, and `remaining` holds one unit more than
// there are children: the owner's reservation, so that no other thread
// can bring it to zero and resume the parent (whose frame holds the join)
// while the owner may still touch the join. The owner publishes with one
// fetch_sub(local + 1) the moment the chain can go no further: the next
// child is not at the bottom of its deque (stolen, or another task above
// it), or a resumption in the chain ended without naming a successor (a
// coroutine suspended: break_chain()). Either way, if that fetch_sub was
// the last, the owner resumes the parent: a suspended child may have been
// resumed on another thread and finished before the owner's loop saw the
// suspension. A child finished anywhere else — a thief, or this thread
// outside the chain — takes 1 off `remaining` as before. So whoever
// brings `remaining` to zero resumes the parent, and a join all of whose
// children ran in the chain resumes it with no RMW at all.
// tests/model/coro_join.pml.
struct Join {
  std::atomic<std::size_t> remaining{0};
  std::coroutine_handle<> parent;
  // The owner's chain (only the owning thread reads or writes these while
  // the join is on its chain): children finished in it and not yet
  // published, the count of children, where their slots begin (to
  // recognise one at the bottom of the deque), and the next join down the
  // chain.
  std::size_t local = 0;
  std::size_t n = 0;
  const TaskNode* first_kid = nullptr;
  Join* below = nullptr;
};
// Publishes the local count and the reservation of every join on a chain
// that a suspension broke, innermost first. Returns the parent to resume
// if one of them was the last to finish (at most one can be: each join's
// parent is an unfinished child of the join below it), else a null handle
// (help.cpp).
std::coroutine_handle<> break_chain(Join* top) noexcept;

struct Trampoline {
  std::coroutine_handle<> next;
  bool armed = false;
  // The joins whose children this loop is running one after another
  // (weft/exec/coro.hpp, "the owner's chain"), innermost first. When a
  // resumption ends without naming a successor the chain is broken: each
  // of them publishes what it counted (break_chain()).
  Join* chain = nullptr;
  // The hand-off slot: a coroutine another one just woke on this worker (a
  // channel's receiver, a semaphore's next holder: weft/detail/aio/
  // waiter.hpp), run by this loop as soon as the running coroutine
  // suspends, on this thread, before anything else. Message passing
  // between two coroutines then stays on one worker, with no queueing and
  // no wake-up, the way Go's and Tokio's schedulers keep a "run next" slot.
  // `active`: a resume_here() loop is running on this thread (only then is
  // the slot read); `handoffs`: slots it has taken, capped so that a pair
  // bouncing messages forever still lets the worker's queue run.
  // A wait (block_on) that finds nothing left to help with queues the
  // slot's coroutine on its pool (handoff_node, handoff_pool) and clears
  // `active` before it sleeps: the slot would otherwise run only once the
  // waiting coroutine suspends. (While it helps, a coroutine parked in the
  // slot is run by a nested loop, or queued by that step; only delayed.)
  std::coroutine_handle<> handoff;
  TaskNode* handoff_node = nullptr;
  PoolCore* handoff_pool = nullptr;
  bool active = false;
  unsigned handoffs = 0;
};
inline constexpr unsigned kMaxHandoffs = 64;
// constinit: constant-initialized, so every access is a plain TLS load (no
// lazy-init wrapper call, which an inline thread_local otherwise gets).
inline thread_local constinit Trampoline trampoline{};

// Runs `h` and every coroutine handed over from it on this thread, until
// one suspends without naming a successor. Saves and restores an outer
// loop's state: a task may sync_wait(), or a waiting worker run other
// tasks, in the middle of a resumption.
//
// A loop also runs the coroutine left in the hand-off slot once the one it
// resumed suspends without naming a successor; it never ends with one left
// there. A nested loop (a wait inside a resumption helping with other
// tasks) may run the outer one's: sooner, on the same thread.
inline void resume_here(std::coroutine_handle<> h) {
  Trampoline& t = trampoline;
  const std::coroutine_handle<> outer_next = t.next;
  const bool outer_armed = t.armed;
  const bool outer_active = t.active;
  Join* const outer_chain = t.chain;
  t.active = true;
  t.chain = nullptr;
  while (h) {
    t.next = {};
    t.armed = true;
    h.resume();
    h = t.next;
    if (!h) {
      if (t.chain != nullptr) h = break_chain(std::exchange(t.chain, nullptr));
      if (!h) h = std::exchange(t.handoff, {});
    }
  }
  t.next = outer_next;
  t.armed = outer_armed;
  t.active = outer_active;
  t.chain = outer_chain;
  t.handoffs = 0;
}

// Called last in an await_suspend: `h` (if any) runs next on this thread.
inline void transfer(std::coroutine_handle<> h) {
  if (!h) return;
  Trampoline& t = trampoline;
  if (t.armed) {
    t.armed = false;
    t.next = h;
  } else {
    resume_here(h);
  }
}

// What a task that no coroutine awaits calls when it finishes. It returns
// the coroutine to run next on this thread (a null handle for none).
// It may destroy the finished task's frame.
struct Completion {
  std::coroutine_handle<> (*done)(Completion*) noexcept = nullptr;
};

struct PromiseBase {
  std::coroutine_handle<> continuation_;
  Completion* completion_ = nullptr;
  std::stop_token stop_;
  // The pool the task belongs to: the one spawn() queued it on or the last
  // schedule() moved it to, else its awaiter's (children inherit it);
  // when_all queues children there. nullptr: none named (a root started by
  // sync_wait(task)): ThreadPool::current(), else the default pool.
  PoolCore* pool_ = nullptr;

  // always_inline: a frame's allocation on every call of a task, which
  // g++ otherwise keeps out of line (weft/detail/exec/task.hpp).
  [[gnu::always_inline]] static void* operator new(std::size_t size) {
    return allocate_task(size, __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  }
  [[gnu::always_inline]] static void operator delete(void* p, std::size_t size) noexcept {
    free_task(p, size, __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  }

  std::suspend_always initial_suspend() const noexcept { return {}; }

  struct FinalAwaiter {
    bool await_ready() const noexcept { return false; }
    // The completion may destroy the frame: nothing reads `p` after it.
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) const noexcept {
      PromiseBase& p = h.promise();
      transfer(p.completion_ != nullptr ? p.completion_->done(p.completion_) : p.continuation_);
    }
    void await_resume() const noexcept {}
  };
  FinalAwaiter final_suspend() const noexcept { return {}; }

  // A child awaited (or joined) without a stop token of its own sees its
  // parent's, and belongs to its parent's pool.
  void inherit(const PromiseBase& parent) {
    if (!stop_.stop_possible()) stop_ = parent.stop_;
    pool_ = parent.pool_;
  }
};

template <class T>
struct TaskPromise : PromiseBase {
  ResultSlot<T> result_;

  weft::Task<T> get_return_object() noexcept;
  void unhandled_exception() noexcept { result_.error = std::current_exception(); }
  template <class U = T>
  void return_value(U&& v) {
    ::new (static_cast<void*>(result_.storage)) T(std::forward<U>(v));
    result_.has_value = true;
  }
};

template <>
struct TaskPromise<void> : PromiseBase {
  ResultSlot<void> result_;

  weft::Task<void> get_return_object() noexcept;
  void unhandled_exception() noexcept { result_.error = std::current_exception(); }
  void return_void() const noexcept {}
};

// Opens a weft::Task's frame to weft's awaiters and starters.
struct TaskAccess {
  template <class T>
  static std::coroutine_handle<TaskPromise<T>> handle(const weft::Task<T>& t) noexcept {
    return t.h_;
  }
  template <class T>
  static std::coroutine_handle<TaskPromise<T>> release(weft::Task<T>& t) noexcept {
    return std::exchange(t.h_, {});
  }
};

// Where a task started by spawn() or sync_wait() publishes its result: a
// future node whose task is the coroutine's first resumption.
//
//   state (future.hpp's word)  meaning here
//   Pending | kBlocked         queued, not started; kBlocked keeps a waiter
//                              from running it in place as a callable
//   Claimed                    started: the frame runs or is suspended
//   Ready                      finished; the result moved into the node,
//                              the frame destroyed
//   Cancelled                  cancel() (or a refused push) won the claim:
//                              the frame was destroyed unstarted
//
// The queue's reference is held from the push until the frame finishes
// (not until the first resumption returns), so the node outlives the
// coroutine even when the future is dropped.
template <class T>
struct SpawnState final : FutureState<T>, Completion {
  std::coroutine_handle<TaskPromise<T>> h;

  SpawnState(std::coroutine_handle<TaskPromise<T>> coro, PoolCore* p) noexcept : h(coro) {
    // relaxed: not yet shared; the push (or the starting call) publishes it.
    this->state.store(FutureState<T>::kPending | FutureState<T>::kBlocked, std::memory_order_relaxed);
    this->execute = &execute_impl;
    this->discard = &discard_impl;
    this->invoke = &invoke_impl;
    this->destroy = &destroy_impl;
    this->pool = p;
    this->done = &done_impl;
    h.promise().completion_ = this;
    h.promise().pool_ = p;  // spawn()'s pool (nullptr from sync_wait(task))
  }
  SpawnState(const SpawnState&) = delete;
  SpawnState& operator=(const SpawnState&) = delete;

  static void execute_impl(TaskNode* t) noexcept {
    auto* self = static_cast<SpawnState*>(t);
    if (self->claim_blocked())
      resume_here(self->h);  // done_impl drops the queue's reference
    else
      self->release();  // cancelled while queued
  }
  // Only cancel() calls it (run == false): kBlocked keeps run_claimed() away.
  static void invoke_impl(FutureState<T>* s, bool) noexcept {
    auto* self = static_cast<SpawnState*>(s);
    std::exchange(self->h, {}).destroy();
  }
  static void discard_impl(TaskNode* t) noexcept {
    auto* self = static_cast<SpawnState*>(t);
    self->cancel();
    self->release();
  }
  static std::coroutine_handle<> done_impl(Completion* c) noexcept {
    auto* self = static_cast<SpawnState*>(c);
    ResultSlot<T>& from = self->h.promise().result_;
    auto take = [&from] { return from.take(); };
    self->result.run(take);
    std::exchange(self->h, {}).destroy();
    sched_point();
    // acq_rel: as FutureState::run_claimed(): release publishes the result
    // to waiters; acquire reads the `next` an attacher wrote.
    self->finished(self->state.exchange(FutureState<T>::kReady, std::memory_order_acq_rel));
    self->release();
    return {};
  }
  static void destroy_impl(FutureState<T>* s) noexcept { delete_task(static_cast<SpawnState*>(s)); }
};

}  // namespace detail
}  // namespace weft
