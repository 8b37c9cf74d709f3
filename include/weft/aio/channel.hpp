/// @file
/// weft/aio/channel.hpp — a bounded channel between coroutines: many
/// producers, many consumers, and no thread blocked while one waits.
///
///   weft::Channel<Msg> ch(64);
///   weft::Task<> producer() {
///     for (Msg m : work) if (!co_await ch.push(std::move(m))) break;   // false: closed
///     ch.close();
///   }
///   weft::Task<> consumer() {
///     while (std::optional<Msg> m = co_await ch.pop()) handle(*m);     // nullopt: closed and drained
///   }
///
/// Contract
/// - push(v) stores v if there is room, hands it straight to a waiting
///   pop(), or suspends until one of them is possible; it yields true, or
///   false once the channel is closed — then v was not taken (a push of an
///   lvalue copied it at the call; of an rvalue, the caller's object is
///   moved from only on true). pop() suspends while the channel is empty
///   and yields nullopt once it is closed and drained. Capacity 0 is a
///   rendezvous: every push waits for its pop.
/// - Waiters are served first come, first served, so values keep each
///   producer's order and a waiting push is never overtaken by a later one.
/// - Every value pushed is popped exactly once or is still in the channel
///   when it is destroyed (and is destroyed then).
/// - close() wakes every waiter; pushes after it yield false, pops drain
///   what is left, then yield nullopt. Closing twice is harmless.
/// - A waiting coroutine resumes on its pool (a weft::Task's own, else
///   ThreadPool::current(), else the default pool); a push or pop that need not
///   wait goes on without suspending. Each takes a stop token (the one
///   given, else the Task's own): a stop while waiting takes the waiter out
///   of the line and the co_await throws weft::cancelled (a push's value
///   stays with the caller); a stop that comes after the value moved has no
///   effect.
/// - try_push()/try_pop() never wait, for threads that are not coroutines.
/// - T must be nothrow move constructible (values move under the lock).
///   Destroying a channel that coroutines still wait on is a bug: it is
///   reported to weft's error handler and those coroutines never resume.
///
/// The hand-off between a waiter and its counterpart is modelled in
/// tests/model/aio_waiter.pml.
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/aio/waiter.hpp"
#include "weft/error.hpp"

namespace weft {

template <class T>
/// A bounded multi-producer multi-consumer channel for coroutines; see above.
class Channel {
  static_assert(std::is_nothrow_move_constructible_v<T>,
                "weft::Channel<T>: T must be nothrow move constructible (values move under the channel's lock)");

  struct PushWaiter : detail::aio::Waiter {
    T* src = nullptr;
    bool ok = false;
  };
  struct PopWaiter : detail::aio::Waiter {
    std::optional<T> value;
  };

 public:
  /// A channel that holds up to `capacity` values (0: a rendezvous).
  explicit Channel(std::size_t capacity)
      : cap_(capacity), ring_(capacity > 0 ? std::make_unique<std::optional<T>[]>(capacity) : nullptr) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() {
    if (!pushers_.empty() || !poppers_.empty())
      report_error("weft::Channel destroyed while coroutines wait on it (they will never resume)",
                   std::make_exception_ptr(std::logic_error("weft::Channel: destroyed with waiters")));
  }

  /// What co_await ch.push(v) suspends on; yields true, or false if closed.
  class [[nodiscard]] PushAwaiter : public detail::aio::QueuedAwaiter<PushAwaiter, PushWaiter> {
   public:
    /// The awaiter protocol's last step (the others are never ready, and
    /// queue the push unless it completes in place).
    bool await_resume() const {
      this->w_.check_cancelled();
      return this->w_.ok;
    }

   private:
    friend class Channel;
    friend detail::aio::QueuedAwaiter<PushAwaiter, PushWaiter>;
    PushAwaiter(Channel* ch, T* src, std::stop_token stop)
        : detail::aio::QueuedAwaiter<PushAwaiter, PushWaiter>(std::move(stop)), ch_(ch) {
      this->w_.src = src;
    }
    PushAwaiter(Channel* ch, const T& v, std::stop_token stop)
        : detail::aio::QueuedAwaiter<PushAwaiter, PushWaiter>(std::move(stop)), ch_(ch), copy_(v) {
      this->w_.src = &*copy_;
    }
    bool queue_waiter(PushWaiter& w) { return ch_->push_or_queue(w); }
    Channel* ch_;
    std::optional<T> copy_;
  };

  /// What co_await ch.pop() suspends on; yields a value, or nullopt once
  /// the channel is closed and empty.
  class [[nodiscard]] PopAwaiter : public detail::aio::QueuedAwaiter<PopAwaiter, PopWaiter> {
   public:
    /// The awaiter protocol's last step (the others are never ready, and
    /// queue the pop unless it completes in place).
    std::optional<T> await_resume() {
      this->w_.check_cancelled();
      return std::move(this->w_.value);
    }

   private:
    friend class Channel;
    friend detail::aio::QueuedAwaiter<PopAwaiter, PopWaiter>;
    PopAwaiter(Channel* ch, std::stop_token stop)
        : detail::aio::QueuedAwaiter<PopAwaiter, PopWaiter>(std::move(stop)), ch_(ch) {}
    bool queue_waiter(PopWaiter& w) { return ch_->pop_or_queue(w); }
    Channel* ch_;
  };

  ///@{
  /// co_await push(v): see above. The rvalue form moves from `v` only if the
  /// value is taken; the lvalue form copies it at the call.
  PushAwaiter push(T&& v, std::stop_token stop = {}) { return PushAwaiter(this, &v, std::move(stop)); }
  PushAwaiter push(const T& v, std::stop_token stop = {}) { return PushAwaiter(this, v, std::move(stop)); }
  ///@}
  /// co_await pop(): see above.
  PopAwaiter pop(std::stop_token stop = {}) { return PopAwaiter(this, std::move(stop)); }

  /// Takes `v` if the channel is open and has room (or a pop waits): true;
  /// else false and `v` is left alone. Never waits.
  bool try_push(T&& v) {
    PushWaiter w;
    w.src = &v;
    std::unique_lock lock(mu_);
    return !closed_ && give(w, lock);
  }
  /// try_push() of a copy of `v`.
  bool try_push(const T& v) {
    T copy(v);
    return try_push(std::move(copy));
  }
  /// A value if one is there (or a push waits), else nullopt. Never waits.
  std::optional<T> try_pop() {
    PopWaiter w;
    std::unique_lock lock(mu_);
    take(w, lock);
    return std::move(w.value);
  }

  /// Closes the channel and wakes every waiter; see above.
  void close() {
    detail::aio::WakeList wake;
    {
      std::lock_guard lock(mu_);
      closed_ = true;
      while (auto* w = static_cast<PushWaiter*>(pushers_.pop_front())) {
        w->ok = false;
        wake.claim(w);
      }
      while (detail::aio::Waiter* w = poppers_.pop_front()) wake.claim(w);
    }
    wake.resume();
  }

  /// True once close() was called.
  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }
  /// The values stored now (not counting pushes that wait).
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return count_;
  }
  /// The most values it stores.
  std::size_t capacity() const noexcept { return cap_; }

 private:
  // Gives *w.src to a waiting pop or the ring; false if neither can take it.
  // Drops the lock before resuming the popper.
  bool give(PushWaiter& w, std::unique_lock<std::mutex>& lock) noexcept {
    if (auto* p = static_cast<PopWaiter*>(poppers_.pop_front())) {
      p->value.emplace(std::move(*w.src));
      w.ok = true;
      const bool resume = p->claim();
      lock.unlock();
      if (resume) p->resume();
      return true;
    }
    if (count_ == cap_) return false;
    ring_[(head_ + count_) % cap_].emplace(std::move(*w.src));
    ++count_;
    w.ok = true;
    return true;
  }

  // Takes the oldest value (from the ring, refilled from a waiting push, or
  // straight from a waiting push at capacity 0) into w.value.
  void take(PopWaiter& w, std::unique_lock<std::mutex>& lock) noexcept {
    PushWaiter* p = nullptr;
    if (count_ > 0) {
      std::optional<T>& slot = ring_[head_];
      w.value.emplace(std::move(*slot));
      slot.reset();
      head_ = (head_ + 1) % cap_;
      --count_;
      if ((p = static_cast<PushWaiter*>(pushers_.pop_front())) != nullptr) {
        ring_[(head_ + count_) % cap_].emplace(std::move(*p->src));
        ++count_;
      }
    } else if ((p = static_cast<PushWaiter*>(pushers_.pop_front())) != nullptr) {
      w.value.emplace(std::move(*p->src));
    }
    if (p == nullptr) return;
    p->ok = true;
    const bool resume = p->claim();
    lock.unlock();
    if (resume) p->resume();
  }

  // co_await push: true if it queued `w` (the caller arms), false if done.
  bool push_or_queue(PushWaiter& w) {
    std::unique_lock lock(mu_);
    if (closed_ || give(w, lock)) return false;
    queue(w);
    return true;
  }
  bool pop_or_queue(PopWaiter& w) {
    std::unique_lock lock(mu_);
    if (count_ > 0 || !pushers_.empty() || closed_) {
      take(w, lock);
      return false;
    }
    queue(w);
    return true;
  }
  void queue(PushWaiter& w) noexcept {
    w.owner = this;
    w.on_stop = &on_stop<true>;
    pushers_.push_back(&w);
  }
  void queue(PopWaiter& w) noexcept {
    w.owner = this;
    w.on_stop = &on_stop<false>;
    poppers_.push_back(&w);
  }

  // The stop callback of a waiting push (Push) or pop.
  template <bool Push>
  static void on_stop(detail::aio::Waiter* w) noexcept {
    auto* self = static_cast<Channel*>(w->owner);
    bool resume = false;
    {
      std::lock_guard lock(self->mu_);
      if (!w->linked) return;  // served or woken by close() first
      (Push ? self->pushers_ : self->poppers_).erase(w);
      w->cancelled = true;
      resume = w->claim();
    }
    if (resume) w->resume();
  }

  const std::size_t cap_;
  std::unique_ptr<std::optional<T>[]> ring_;
  mutable std::mutex mu_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  bool closed_ = false;
  detail::aio::WaitList pushers_;
  detail::aio::WaitList poppers_;
};

}  // namespace weft
