/// @file
/// weft/exec/future.hpp — the result of ThreadPool::submit.
///
/// A Future<T> is move-only and shares one allocation with its task (the
/// callable, the result and a 32-bit state word live together), so submit()
/// costs one pool-allocated block, not a task plus a std::promise state.
///
/// get() returns the value (or rethrows the task's exception) once; after it
/// the future is no longer valid(). wait()/wait_for() only wait.
///
/// A wait that finds the task not yet started runs it in place, on the
/// waiting thread (like oneTBB's task_group::wait): a submit followed at once
/// by get() then costs a function call, not a cross-thread round trip, and a
/// pool of one worker cannot deadlock on nested submit+get.
/// A wait on a worker thread runs other queued tasks while the result is not
/// ready; elsewhere it spins within WaitOptions and then sleeps on a futex.
///
/// Destroying a Future does not wait: the task still runs and its result is
/// dropped (its exception too; use get() to see it).
///
/// cancel() stops a task that has not started: it will never run, its
/// callable is destroyed at once, and get() throws weft::cancelled. It
/// returns false (and changes nothing) when the task is running or done.
/// Whatever the race with a worker taking the task, exactly one of "ran"
/// and "cancelled" happens: both begin with the same compare-exchange from
/// Pending, and only its winner goes on.
///
/// then(f) consumes the future and returns the future of f(value) (f() for
/// Future<void>), run as a task on the same pool once the value is ready, or
/// submitted at once if it already is. If the antecedent threw (or was
/// cancelled), f is not called and the continued future rethrows that
/// exception: f takes the value, never a future (oneTBB's and folly's
/// choice; it keeps f free of error handling, and a chain stops at the first
/// failure). The continuation's task is one block holding f, the consumed
/// antecedent and the hook the antecedent fires: no allocation besides it.
/// A continued future can be cancelled like any other until f starts; a
/// continuation whose pool was shut down before it could run is cancelled.
/// The pool must outlive the continuations it is to run, as it must
/// outlive what is submitted to it.
/// when_all and when_any (weft/exec/when_all.hpp) build on the same hook.
///
/// Memory ordering: everything the task did happens before get(), wait() or
/// ready() returning true in the waiting thread, and before a continuation
/// attached to it runs.
///
/// State word:
///
///   bits 0-1   kPending (not started), kClaimed (running), kReady (done),
///              kCancelled (done, never ran)
///   bit 2      kWaiter: some thread may sleep on the word
///   bit 3      kContinuation: `next` holds a continuation to fire once done
///   bit 4      kBlocked: a continuation or when_all/when_any node whose
///              inputs are not all done, or a spawned coroutine's node not
///              yet started; no waiter may claim it or run it in place
///
///   transition                by                               how
///   Pending -> Claimed        the worker that pops it, or a    compare-exchange (one wins;
///                             waiter running it in place       the loser leaves it alone);
///                                                              refused while kBlocked
///   Pending -> Claimed        cancel(), or a continuation's    the same compare-exchange (one
///     -> Cancelled            push refused by a shut-down pool wins); the winner destroys the
///                                                              callable, stores weft::cancelled as
///                                                              the error, then exchanges in
///                                                              kCancelled and wakes/fires as above
///   Claimed -> Ready          the thread that ran it           exchange; futex wake if kWaiter was
///                                                              set, fire `next` if kContinuation
///   kBlocked cleared          the antecedent's continuation    fetch_and; then push the task if
///                                                              still Pending, else drop it (a
///                                                              cancel() claimed it)
///   not done |= kContinuation attach(): then(), when_all,      compare-exchange after writing
///                             when_any, a coroutine awaiter    `next`; fails once done, and the
///                                                              attacher goes on at once instead
///   not done |= kWaiter       a waiter about to sleep          compare-exchange, then futex wait
///
/// tests/model/future.pml checks cancel, claim, attach and complete racing
/// on this word: exactly one of "ran" and "cancelled", the continuation
/// fired exactly once and only after the result (docs/design/futures.md).
///
/// The continuation hook (for weft's own awaiters): a detail::Continuation
/// attached with detail::FutureLink::state(f)->attach(&c) is fired exactly
/// once, on the thread that completes (or cancels) the future, right after
/// the result is published; attach() returns false instead when the future
/// is already done, and then never fires it. A coroutine's awaiter embeds a
/// Continuation whose fire() pushes the coroutine's resumption to the pool;
/// await_suspend returns attach()'s result (false: resume at once, without
/// suspending), await_resume calls get(). Nothing blocks, and the wake-up
/// cannot be lost: the attach and the completion meet on the state word.
/// One continuation per future.
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
#include "weft/exec/cancelled.hpp"

namespace weft {

/// @cond internal
class ThreadPool;
template <class T>
class Future;
/// @endcond

namespace detail {

// Opens Future's waits to weft's own tools (weft/detail/exec/remote_wait.hpp).
struct FutureAccess;
// Opens a Future's state to then(), when_all, when_any and awaiters.
struct FutureLink;

class PoolCore;

// Queues a continuation's task on `pool`. A pool that refuses it (shut
// down) discards it, which cancels a continuation's task.
void push_continuation(PoolCore& pool, TaskNode* t) noexcept;
// ThreadPool::current()'s pool, else the process's default pool: where a
// node that no pool produced (when_all of nothing) sends its
// continuations, and where a TaskGroup that names no pool runs.
PoolCore& current_or_default_pool();
// While a thread outside every pool runs one of `pool`'s tasks in place
// (Future::get() of a task no worker has started), that task still belongs
// to `pool`: ThreadPool::current() names it, so the groups and joins it makes
// without naming a pool run there, not on the default pool. On a worker
// (or in a seat) the thread's own pool still comes first. Nests; null
// changes nothing.
class RunningInPlace {
 public:
  explicit RunningInPlace(PoolCore* pool) noexcept;
  ~RunningInPlace();
  RunningInPlace(const RunningInPlace&) = delete;
  RunningInPlace& operator=(const RunningInPlace&) = delete;

 private:
  PoolCore* saved_;
};
PoolCore& core_of(ThreadPool& pool) noexcept;
// True on a worker thread of `pool`.
bool on_worker_of(const PoolCore& pool) noexcept;

// What a future fires once its result is ready: see "The continuation hook"
// above. It must stay alive until fired.
struct Continuation {
  void (*fire)(Continuation*) noexcept = nullptr;
};

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
struct FutureState : TaskNode {
  static constexpr std::uint32_t kPending = 0, kClaimed = 1, kReady = 2, kCancelled = 3, kStateMask = 3,
                                 kWaiter = 4, kContinuation = 8, kBlocked = 16;
  static_assert(kReady > kClaimed && kCancelled > kReady, "is_ready() reads 'done' as state >= kReady");

  std::atomic<std::uint32_t> state{kPending};
  std::atomic<std::uint32_t> refs{2};  // the queue's and the future's
  // run: calls the callable into `result`; otherwise only destroys it (cancelled).
  void (*invoke)(FutureState*, bool run) noexcept = nullptr;
  void (*destroy)(FutureState*) noexcept = nullptr;  // frees the node
  PoolCore* pool = nullptr;                          // where continuations of this future run
  Continuation* next;  // read only after kContinuation, which attach() sets after writing it
  ResultSlot<T> result;

  static bool is_ready(std::uint32_t w) noexcept { return (w & kStateMask) >= kReady; }

  bool claim() noexcept { return claim_unless(kBlocked); }
  // A when_all/when_any node's own completion, and cancel(), claim it
  // though still kBlocked.
  bool claim_blocked() noexcept { return claim_unless(0); }

  bool claim_unless(std::uint32_t refusing) noexcept {
    sched_point();
    // relaxed: only a first guess for the compare-exchange, which re-reads.
    std::uint32_t w = state.load(std::memory_order_relaxed);
    while ((w & kStateMask) == kPending && (w & refusing) == 0) {
      // acquire: the claimer reads the callable the submitter wrote (the
      // queue's release/acquire already orders it for workers; a waiter
      // running it in place got the node through the future it holds).
      if (state.compare_exchange_weak(w, (w & ~(kStateMask | kBlocked)) | kClaimed, std::memory_order_acquire,
                                      std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  void run_claimed() noexcept {
    invoke(this, true);
    sched_point();
    // acq_rel: release publishes the result to waiters' acquire loads;
    // acquire reads the `next` an attacher wrote before setting its bit.
    finished(state.exchange(kReady, std::memory_order_acq_rel));
  }
  // Pending -> Claimed -> Cancelled; false if it had started (or was done).
  // The claim (taken even while kBlocked) decides the race with a worker;
  // the callable is then destroyed unrun and the future completes with
  // weft::cancelled as its error.
  bool cancel() noexcept {
    if (!claim_unless(0)) return false;
    invoke(this, false);
    result.error = std::make_exception_ptr(cancelled());
    sched_point();
    // acq_rel: as in run_claimed().
    finished(state.exchange(kCancelled, std::memory_order_acq_rel));
    return true;
  }
  // True if `c` will be fired once the future is done; false if it already
  // is (the caller goes on at once; `c` is never fired).
  bool attach(Continuation* c) noexcept {
    next = c;
    // acquire: a caller told "already done" goes on to read the result.
    std::uint32_t w = state.load(std::memory_order_acquire);
    while (!is_ready(w)) {
      sched_point();
      // release: publishes `next` to the completer's acq_rel exchange;
      // acquire (failure too): as the load above.
      if (state.compare_exchange_weak(w, w | kContinuation, std::memory_order_release, std::memory_order_acquire))
        return true;
    }
    return false;
  }
  void finished(std::uint32_t old) noexcept {
    if (old & (kWaiter | kContinuation)) notify(old);  // rare: one test on the fast path
  }
  void notify(std::uint32_t old) noexcept {
    if (old & kWaiter) wake_waiters();
    if (old & kContinuation) next->fire(next);
  }
  void wake_waiters() noexcept;
  void release() noexcept {
    sched_point();
    // acq_rel: the last holder must see the other's writes before freeing.
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(this);
  }
};

template <class T, class F>
struct FutureTask : FutureState<T> {
  union {
    F fn;  // destroyed right after it runs or is cancelled (or with the node if it never ran)
  };
  bool fn_alive = true;

  template <class G>
  FutureTask(G&& g, PoolCore* p) : fn(std::forward<G>(g)) {
    this->execute = &execute_impl;
    this->discard = &discard_impl;
    this->invoke = &invoke_impl;
    this->destroy = &destroy_impl;
    this->pool = p;
  }
  FutureTask(const FutureTask&) = delete;
  FutureTask& operator=(const FutureTask&) = delete;
  static void discard_impl(TaskNode* t) noexcept { static_cast<FutureTask*>(t)->release(); }
  ~FutureTask() {
    if (fn_alive) fn.~F();
  }
  // A worker that pops a cancelled task only drops its reference.
  static void execute_impl(TaskNode* t) noexcept {
    auto* self = static_cast<FutureTask*>(t);
    if (self->claim()) self->run_claimed();
    self->release();
  }
  static void invoke_impl(FutureState<T>* s, bool run) noexcept {
    auto* self = static_cast<FutureTask*>(s);
    if (run) self->result.run(self->fn);
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
/// The result of a task on a pool: get() it once, or wait, cancel, or chain
/// then(); this file's opening comment has the contract.
class Future {
 public:
  /// An invalid future (valid() is false), to be assigned.
  Future() = default;
  ///@{
  /// Moves the result's ownership; `o` becomes invalid.
  Future(Future&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Future& operator=(Future&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  ///@}
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;
  ~Future() { reset(); }

  /// Whether the future owns a result: false when default-built, moved
  /// from, or after get() or then().
  [[nodiscard]] bool valid() const noexcept { return s_ != nullptr; }

  /// True once get() would not wait: the result is in, or the task was cancelled.
  // acquire: pairs with the completing exchange.
  [[nodiscard]] bool ready() const noexcept {
    check();
    return detail::FutureState<T>::is_ready(s_->state.load(std::memory_order_acquire));
  }

  /// Waits until ready(): runs the task here if it has not started yet,
  /// helps the pool when called on a worker, else spins, then sleeps.
  void wait() const { wait_impl(true); }

  /// True if the result is ready within `timeout` (never runs the task in place).
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    check();
    if (ready()) return true;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
    if (ns <= std::chrono::nanoseconds::zero()) return false;
    return detail::block_on(s_->state, &detail::FutureState<T>::is_ready, detail::FutureState<T>::kWaiter,
                            false, ns);
  }

  /// The value, or the task's exception rethrown, or weft::cancelled.
  /// Leaves the future invalid.
  T get() { return get_impl(true); }

  /// True if the task had not started: it never will, and get() throws
  /// weft::cancelled. False if it is running or done. The future stays valid.
  bool cancel() {
    check();
    return s_->cancel();
  }

  /// The future of f(value) (f() for Future<void>), run on the pool once
  /// this one is ready; see the header comment. Leaves this future invalid.
  template <class F>
  auto then(F&& f) &&;

 private:
  friend class ThreadPool;
  friend struct detail::FutureAccess;
  friend struct detail::FutureLink;
  explicit Future(detail::FutureState<T>* s) noexcept : s_(s) {}

  // allow_inline = false leaves a queued task to the pool (a forced
  // cross-thread round trip, for measurements); on a worker thread it is
  // ignored, since refusing to run the task there could wait for itself.
  void wait_impl(bool allow_inline) const {
    check();
    if (ready()) return;
    const bool may_inline = allow_inline || detail::on_worker_thread();
    // Not a spawned coroutine's node (kBlocked until a worker starts it):
    // its tree must run on the pool it was spawned on, and its when_all
    // children would follow this thread instead (weft/exec/coro.hpp).
    // relaxed: kBlocked is set before the push this thread made and only a
    // worker's claim clears it, after which the node is no longer queued.
    const bool spawned_coroutine =
        (s_->state.load(std::memory_order_relaxed) & detail::FutureState<T>::kBlocked) != 0;
    // Either way, a task run here from outside the pool is still the
    // pool's (RunningInPlace; run_if_still_queued() sets it itself).
    if (may_inline && !spawned_coroutine && detail::run_if_still_queued(s_) && ready()) return;
    if (may_inline && s_->claim()) {
      const detail::RunningInPlace here(s_->pool);
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

namespace detail {

struct FutureLink {
  template <class T>
  static FutureState<T>* state(const Future<T>& f) noexcept {
    return f.s_;
  }
  template <class T>
  static Future<T> adopt(FutureState<T>* s) noexcept {
    return Future<T>(s);
  }
};

// then()'s callable: the consumed antecedent and f. It runs only once the
// antecedent is done, so get() returns at once (or rethrows, skipping f).
template <class T, class F>
struct ThenFn {
  Future<T> antecedent;
  F f;
  auto operator()() {
    if constexpr (std::is_void_v<T>) {
      antecedent.get();
      return f();
    } else {
      return f(antecedent.get());
    }
  }
};

// A then() task: blocked until the antecedent fires `this` as its
// continuation, which clears kBlocked and pushes the task to the pool.
template <class U, class Fn>
struct ThenTask final : FutureTask<U, Fn>, Continuation {
  ThenTask(Fn&& f, PoolCore* p) : FutureTask<U, Fn>(std::move(f), p) {
    // relaxed: not yet shared; attach() publishes the node.
    this->state.store(FutureState<U>::kPending | FutureState<U>::kBlocked, std::memory_order_relaxed);
    this->discard = &discard_impl;
    this->destroy = &destroy_impl;
    this->fire = &fire_impl;
  }
  static void fire_impl(Continuation* c) noexcept {
    auto* self = static_cast<ThenTask*>(c);
    sched_point();
    // acq_rel: release lets a waiter that now claims it in place see the
    // antecedent's result; acquire pairs with a cancel() that came first.
    const std::uint32_t old = self->state.fetch_and(~FutureState<U>::kBlocked, std::memory_order_acq_rel);
    if ((old & FutureState<U>::kStateMask) != FutureState<U>::kPending) {
      self->release();  // cancelled while it waited: the queue's reference, never queued
      return;
    }
    push_continuation(*self->pool, self);
  }
  // The pool refused the push: the task never runs.
  static void discard_impl(TaskNode* t) noexcept {
    auto* self = static_cast<ThenTask*>(t);
    self->cancel();
    self->release();
  }
  static void destroy_impl(FutureState<U>* s) noexcept { delete_task(static_cast<ThenTask*>(s)); }
};

}  // namespace detail

/// @cond internal
template <class T>
template <class F>
auto Future<T>::then(F&& f) && {
  check();
  using Fn = detail::ThenFn<T, std::decay_t<F>>;
  using U = std::invoke_result_t<Fn&>;
  static_assert(!std::is_reference_v<U>, "weft::Future::then: the continuation must return a value, not a reference");
  detail::FutureState<T>* a = s_;
  auto* task = detail::new_task<detail::ThenTask<U, Fn>>(Fn{std::move(*this), std::forward<F>(f)}, a->pool);
  Future<U> continued = detail::FutureLink::adopt<U>(task);
  if (!a->attach(task)) task->fire(task);
  return continued;
}
/// @endcond

}  // namespace weft
