// weft/exec/future.hpp — the result of ThreadPool::submit.
//
// A Future<T> is move-only and shares one allocation with its task (the
// callable, the result and a 32-bit state word live together), so submit()
// costs one pool-allocated block, not a task plus a std::promise state.
//
// get() returns the value (or rethrows the task's exception) once; after it
// the future is no longer valid(). wait()/wait_for() only wait.
//
// A wait that finds the task not yet started runs it in place, on the
// waiting thread (like oneTBB's task_group::wait): a submit followed at once
// by get() then costs a function call, not a cross-thread round trip, and a
// pool of one worker cannot deadlock on nested submit+get.
// A wait on a worker thread runs other queued tasks while the result is not
// ready; elsewhere it spins within WaitOptions and then sleeps on a futex.
//
// Destroying a Future does not wait: the task still runs and its result is
// dropped (its exception too; use get() to see it).
//
// Memory ordering: everything the task did happens before get(), wait() or
// ready() returning true in the waiting thread.
//
// State word:
//
//   bits 0-1   kPending (not started), kClaimed (running), kReady (done)
//   bit 2      kWaiter: some thread may sleep on the word
//
//   transition          by                               how
//   Pending -> Claimed  the worker that pops it, or a    compare-exchange (one wins;
//                       waiter running it in place       the loser leaves it alone)
//   Claimed -> Ready    the thread that ran it           exchange; futex wake if kWaiter was set
//   any     |= kWaiter  a waiter about to sleep          compare-exchange, then futex wait
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/exec/task.hpp"

namespace weft {

namespace detail {

// Opens Future's waits to weft's own tools (weft/detail/exec/remote_wait.hpp).
struct FutureAccess;

template <class T>
struct ResultSlot {
  alignas(T) unsigned char storage[sizeof(T)];
  bool has_value = false;
  std::exception_ptr error;
  template <class F>
  void run(F& f) noexcept {
    try {
      ::new (static_cast<void*>(storage)) T(f());
      has_value = true;
    } catch (...) {
      error = std::current_exception();
    }
  }
  T take() {
    if (error) std::rethrow_exception(error);
    return std::move(*std::launder(reinterpret_cast<T*>(storage)));
  }
  ~ResultSlot() {
    if (has_value) std::launder(reinterpret_cast<T*>(storage))->~T();
  }
};

template <>
struct ResultSlot<void> {
  std::exception_ptr error;
  template <class F>
  void run(F& f) noexcept {
    try {
      f();
    } catch (...) {
      error = std::current_exception();
    }
  }
  void take() {
    if (error) std::rethrow_exception(error);
  }
};

template <class T>
struct FutureState : Task {
  static constexpr std::uint32_t kPending = 0, kClaimed = 1, kReady = 2, kStateMask = 3, kWaiter = 4;

  std::atomic<std::uint32_t> state{kPending};
  std::atomic<std::uint32_t> refs{2};  // the queue's and the future's
  void (*invoke)(FutureState*) noexcept = nullptr;   // runs the callable into `result`
  void (*destroy)(FutureState*) noexcept = nullptr;  // frees the node
  ResultSlot<T> result;

  static bool is_ready(std::uint32_t w) noexcept { return (w & kStateMask) == kReady; }

  bool claim() noexcept {
    sched_point();
    // relaxed: only a first guess for the compare-exchange, which re-reads.
    std::uint32_t w = state.load(std::memory_order_relaxed);
    while ((w & kStateMask) == kPending) {
      // acquire: the claimer reads the callable the submitter wrote (the
      // queue's release/acquire already orders it for workers; a waiter
      // running it in place got the node through the future it holds).
      if (state.compare_exchange_weak(w, (w & ~kStateMask) | kClaimed, std::memory_order_acquire,
                                      std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  void run_claimed() noexcept {
    invoke(this);
    sched_point();
    // release: publishes the result to waiters' acquire loads; the exchange
    // tells whether one may sleep.
    if (state.exchange(kReady, std::memory_order_acq_rel) & kWaiter) wake_waiters();
  }
  void wake_waiters() noexcept;
  void release() noexcept {
    sched_point();
    // acq_rel: the last holder must see the other's writes before freeing.
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(this);
  }
};

template <class T, class F>
struct FutureTask final : FutureState<T> {
  union {
    F fn;  // destroyed right after it runs (or with the node if it never ran)
  };
  bool fn_alive = true;

  explicit FutureTask(F&& f) : fn(std::move(f)) {
    init();
  }
  explicit FutureTask(const F& f) : fn(f) { init(); }
  void init() noexcept {
    this->execute = &execute_impl;
    this->discard = &discard_impl;
    this->invoke = &invoke_impl;
    this->destroy = &destroy_impl;
  }
  static void discard_impl(Task* t) noexcept { static_cast<FutureTask*>(t)->release(); }
  ~FutureTask() {
    if (fn_alive) fn.~F();
  }
  static void execute_impl(Task* t) noexcept {
    auto* self = static_cast<FutureTask*>(t);
    if (self->claim()) self->run_claimed();
    self->release();
  }
  static void invoke_impl(FutureState<T>* s) noexcept {
    auto* self = static_cast<FutureTask*>(s);
    self->result.run(self->fn);
    self->fn.~F();
    self->fn_alive = false;
  }
  static void destroy_impl(FutureState<T>* s) noexcept { delete_task(static_cast<FutureTask*>(s)); }
};

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept;

template <class T>
void FutureState<T>::wake_waiters() noexcept {
  futex_wake_all(state);
}

}  // namespace detail

template <class T>
class Future {
 public:
  Future() = default;
  Future(Future&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Future& operator=(Future&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;
  ~Future() { reset(); }

  [[nodiscard]] bool valid() const noexcept { return s_ != nullptr; }

  // acquire: pairs with the completing exchange.
  [[nodiscard]] bool ready() const noexcept {
    check();
    return detail::FutureState<T>::is_ready(s_->state.load(std::memory_order_acquire));
  }

  void wait() const { wait_impl(true); }

  // True if the result is ready within `timeout` (never runs the task in place).
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    check();
    if (ready()) return true;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
    if (ns <= std::chrono::nanoseconds::zero()) return false;
    return detail::block_on(s_->state, &detail::FutureState<T>::is_ready, detail::FutureState<T>::kWaiter,
                            false, ns);
  }

  // The value, or the task's exception rethrown. Leaves the future invalid.
  T get() { return get_impl(true); }

 private:
  friend class ThreadPool;
  friend struct detail::FutureAccess;
  explicit Future(detail::FutureState<T>* s) noexcept : s_(s) {}

  // allow_inline = false leaves a queued task to the pool (a forced
  // cross-thread round trip, for measurements); on a worker thread it is
  // ignored, since refusing to run the task there could wait for itself.
  void wait_impl(bool allow_inline) const {
    check();
    if (ready()) return;
    const bool may_inline = allow_inline || detail::on_worker_thread();
    if (may_inline && detail::run_if_still_queued(s_)) return;
    if (may_inline && s_->claim()) {
      s_->run_claimed();
      return;
    }
    detail::block_on(s_->state, &detail::FutureState<T>::is_ready, detail::FutureState<T>::kWaiter,
                     detail::on_worker_thread());
  }

  T get_impl(bool allow_inline) {
    wait_impl(allow_inline);
    struct Release {
      Future* f;
      ~Release() { f->reset(); }
    } release{this};
    return s_->result.take();
  }
  void check() const {
    if (s_ == nullptr) throw std::future_error(std::future_errc::no_state);
  }
  void reset() noexcept {
    if (s_ != nullptr) std::exchange(s_, nullptr)->release();
  }

  detail::FutureState<T>* s_ = nullptr;
};

}  // namespace weft
