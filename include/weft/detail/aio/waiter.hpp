// weft/detail/aio/waiter.hpp — one suspended coroutine waiting for an event
// (a timer, a channel, a semaphore, a file operation), and the hand-shake
// that resumes it exactly once on its pool.
//
// Three parties may race for a waiter:
//   the arming coroutine   its await_suspend, after it queued the waiter
//                          and registered the stop callback;
//   the completer          the one that satisfies the wait (a timer thread,
//                          a pusher, a release(), a file completion), always
//                          under the lock of the queue the waiter sits in;
//   the stop callback      a stop request, which unlinks the waiter under the
//                          same lock and completes it as cancelled.
// The completer and the stop callback decide between themselves under that
// lock: whoever finds the waiter still queued unlinks it and claims it.
// claim() then decides with the arming coroutine, through one atomic word:
//
//   state bits   kArmed (await_suspend is done with the waiter)
//                kClaimed (an event was given to it)
//   claim()      sets kClaimed; if kArmed was set, the claimer resumes the
//                coroutine (queues it on its pool), else arm() will
//   arm()        sets kArmed; if kClaimed was set, await_suspend returns
//                false and the coroutine goes on in place
//
// So the coroutine resumes exactly once, never while its await_suspend is
// still running, and nobody touches the waiter after the resumption is
// handed on. tests/model/aio_waiter.pml checks it, with broken variants.
#pragma once

#include <atomic>
#include <coroutine>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/exec/promise.hpp"
#include "weft/detail/exec/task.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/future.hpp"

namespace weft::detail::aio {

struct Waiter;

// The stop callback: the owner of the queue unlinks the waiter (if it is
// still queued) and completes it as cancelled.
struct StopHook {
  Waiter* w;
  void operator()() const noexcept;
};

struct Waiter : TaskNode {
  static constexpr unsigned kArmed = 1;
  static constexpr unsigned kClaimed = 2;

  std::coroutine_handle<> h;
  PoolCore* home = nullptr;  // where the coroutine resumes
  std::atomic<unsigned> state{0};
  bool cancelled = false;  // written by the claimer before claim()
  // The intrusive queue the waiter sits in (WaitList), and who owns it.
  Waiter* prev = nullptr;
  Waiter* next = nullptr;
  bool linked = false;
  // Called by the stop callback: unlinks under the owner's lock and, if it
  // found the waiter queued, claims it as cancelled.
  void (*on_stop)(Waiter*) noexcept = nullptr;
  void* owner = nullptr;
  std::optional<std::stop_callback<StopHook>> stop_cb;

  Waiter() noexcept : TaskNode{&execute_impl, &execute_impl} {}
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // The waiting coroutine's pool (a weft Task's own, else
  // ThreadPool::current(), else the default pool) and its stop token (the one given, else
  // a weft Task's own).
  template <class P>
  void bind(std::coroutine_handle<P> coro, std::stop_token& stop) {
    h = coro;
    if constexpr (std::is_base_of_v<PromiseBase, P>) {
      home = coro.promise().pool_;
      if (!stop.stop_possible()) stop = coro.promise().stop_;
    }
    if (home == nullptr) home = &current_or_default_pool();
  }

  // The await_suspend every aio wait shares: binds the coroutine; on a
  // token already stopped goes on at once (await_resume throws
  // weft::cancelled); else `queue()` either completes the wait in place
  // (false) or queues the waiter (true), and then it arms — with the stop
  // callback when `stoppable`. True: stay suspended.
  template <class P, class Queue>
  bool suspend(std::coroutine_handle<P> coro, std::stop_token& stop, Queue&& queue, bool stoppable = true) {
    bind(coro, stop);
    if (stop.stop_requested()) {
      cancelled = true;
      return false;
    }
    if (!queue()) return false;
    return arm(stoppable ? stop : std::stop_token{});
  }

  // Registers the stop callback (it may run at once, on this thread) and
  // arms: true to stay suspended, false to go on in place.
  bool arm(const std::stop_token& stop) {
    if (stop.stop_possible()) stop_cb.emplace(stop, StopHook{this});
    // acq_rel: release publishes stop_cb (and the queueing) to a claimer
    // that sees kArmed and resumes us elsewhere; acquire sees what a
    // claimer that came first wrote (the event, `cancelled`).
    return (state.fetch_or(kArmed, std::memory_order_acq_rel) & kClaimed) == 0;
  }

  // Gives the waiter its event; the caller holds the owner's lock and has
  // just unlinked it. True: the caller must resume() it (after dropping
  // the lock); false: its await_suspend goes on in place.
  [[nodiscard]] bool claim() noexcept {
    // acq_rel: release publishes the event to the resumed coroutine (through
    // arm()'s acquire or the pool's queue); acquire orders this after arm()'s
    // writes when it was first.
    return (state.fetch_or(kClaimed, std::memory_order_acq_rel) & kArmed) != 0;
  }

  // Queues the coroutine's resumption on its pool: into this thread's
  // hand-off slot (detail/exec/promise.hpp) when a coroutine of the same
  // pool is running here and the slot is free, so the woken coroutine runs
  // on this worker as soon as the running one suspends; else on the pool's
  // queues. `may_hand_off` false: the running coroutine goes on rather than
  // suspend (its own file operation completed in the same submission), and
  // no other worker can take from the slot, so the woken one would wait
  // there for as long as the running one runs: the queues instead. Nothing
  // touches the waiter afterwards: it lives in the coroutine's frame.
  void resume(bool may_hand_off = true) noexcept {
    Trampoline& t = trampoline;
    if (may_hand_off && t.active && !t.handoff && t.handoffs < kMaxHandoffs && on_worker_of(*home)) {
      ++t.handoffs;
      t.handoff = h;
      t.handoff_node = this;
      t.handoff_pool = home;
      return;
    }
    push_continuation(*home, this);
  }

  // After resumption: throws weft::cancelled if a stop came first.
  void check_cancelled() const {
    if (cancelled) throw weft::cancelled();
  }

  // Pool refused (shut down): resumed on the completing thread instead.
  static void execute_impl(TaskNode* t) noexcept { resume_here(static_cast<Waiter*>(t)->h); }
};

inline void StopHook::operator()() const noexcept { w->on_stop(w); }

// The awaiter of a wait that queues a waiter of type W (a semaphore's
// acquire, a channel's push and pop): never ready; await_suspend is
// Waiter::suspend() with Derived::queue_waiter(w), which completes the wait
// in place (false) or queues `w` (true). Derived adds await_resume(): it
// calls w_.check_cancelled(), then reads what the wait gave `w_`, and it
// befriends this base, which calls its private queue_waiter().
template <class Derived, class W>
class QueuedAwaiter {
 public:
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> coro) {
    return w_.suspend(coro, stop_, [this] { return static_cast<Derived&>(*this).queue_waiter(w_); });
  }

 protected:
  explicit QueuedAwaiter(std::stop_token stop) noexcept : stop_(std::move(stop)) {}
  std::stop_token stop_;
  W w_;
};

// Resumes every waiter of a chain (linked through Waiter::next, each
// already claimed, in the order they should run; src/aio/resume_all.cpp).
// Waiters of one pool go to it as one task, which a worker of that pool
// runs, queueing each on its own deque: from a thread that is not the
// pool's worker (the timer thread, the file completion thread) that is one
// pool injection instead of one (and often a futex wake) per coroutine. On
// a worker of their pool they are resumed one by one (Waiter::resume(),
// passed `may_hand_off`).
void resume_all(Waiter* chain, bool may_hand_off = true) noexcept;

// The waiters a completer claims under its lock and resumes once the lock
// is dropped, in the order claimed. Waiters whose await_suspend is still
// running (claim() false) go on in place and are not listed.
class WakeList {
 public:
  WakeList() = default;
  WakeList(const WakeList&) = delete;
  WakeList& operator=(const WakeList&) = delete;
  // Claims `w`, just unlinked from its queue (its `next` is free).
  void claim(Waiter* w) noexcept {
    if (!w->claim()) return;
    w->next = nullptr;
    *tail_ = w;
    tail_ = &w->next;
  }
  // After the lock is dropped: nothing touches the waiters afterwards.
  void resume(bool may_hand_off = true) noexcept { resume_all(std::exchange(head_, nullptr), may_hand_off); }

 private:
  Waiter* head_ = nullptr;
  Waiter** tail_ = &head_;
};

// A FIFO of waiters, linked through the waiters themselves: queueing and a
// cancelled waiter's unlinking allocate nothing and take O(1). Guarded by
// its owner's lock.
class WaitList {
 public:
  bool empty() const noexcept { return head_ == nullptr; }
  Waiter* front() const noexcept { return head_; }
  void push_back(Waiter* w) noexcept {
    w->prev = tail_;
    w->next = nullptr;
    (tail_ != nullptr ? tail_->next : head_) = w;
    tail_ = w;
    w->linked = true;
  }
  Waiter* pop_front() noexcept {
    Waiter* w = head_;
    if (w != nullptr) erase(w);
    return w;
  }
  void erase(Waiter* w) noexcept {
    (w->prev != nullptr ? w->prev->next : head_) = w->next;
    (w->next != nullptr ? w->next->prev : tail_) = w->prev;
    w->prev = w->next = nullptr;
    w->linked = false;
  }

 private:
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
};

}  // namespace weft::detail::aio
