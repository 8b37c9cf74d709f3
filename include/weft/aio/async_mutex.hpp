/// @file
/// weft/aio/async_mutex.hpp — a semaphore and a mutex for coroutines: a
/// coroutine that waits for one suspends; no thread blocks.
///
///   weft::AsyncMutex mu;
///   weft::Task<> add(int v) {
///     auto lock = co_await mu.lock();   // released when `lock` goes
///     total += v;
///   }
///   weft::AsyncSemaphore sem(4);        // at most 4 inside at once
///   weft::Task<> fetch() { co_await sem.acquire(); ...; sem.release(); }
///
/// Contract
/// - First come, first served: release() hands the unit straight to the
///   longest-waiting coroutine (which resumes on its pool: a weft::Task's
///   own, else ThreadPool::current(), else the default pool), so nobody
///   overtakes a waiter and no wake-up is lost. try_acquire()/try_lock()
///   fail while anyone waits.
/// - Each wait takes a stop token (the one given, else the Task's own): a
///   stop takes the waiter out of the line and the co_await throws
///   weft::cancelled, holding nothing; a stop after the hand-off has no
///   effect.
/// - An acquire or lock that need not wait goes on without suspending.
/// - Errors: a negative count is std::invalid_argument; unlocking an
///   AsyncMutex that is not locked is std::logic_error. Destroying one that
///   coroutines still wait on is a bug, reported to weft's error handler.
#pragma once

#include <coroutine>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <utility>

#include "weft/detail/aio/waiter.hpp"

namespace weft {

/// A counting semaphore for coroutines; see above.
class AsyncSemaphore {
 public:
  /// `initial` units available; negative: std::invalid_argument.
  explicit AsyncSemaphore(std::ptrdiff_t initial);
  AsyncSemaphore(const AsyncSemaphore&) = delete;
  AsyncSemaphore& operator=(const AsyncSemaphore&) = delete;
  ~AsyncSemaphore();

  /// What co_await acquire() suspends on.
  class [[nodiscard]] Awaiter : public detail::aio::QueuedAwaiter<Awaiter, detail::aio::Waiter> {
   public:
    /// The awaiter protocol's last step (the others are never ready, and
    /// queue the acquire unless a unit is free).
    void await_resume() const { w_.check_cancelled(); }

   private:
    friend class AsyncSemaphore;
    friend detail::aio::QueuedAwaiter<Awaiter, detail::aio::Waiter>;
    Awaiter(AsyncSemaphore* s, std::stop_token stop) noexcept
        : detail::aio::QueuedAwaiter<Awaiter, detail::aio::Waiter>(std::move(stop)), sem_(s) {}
    bool queue_waiter(detail::aio::Waiter& w) { return sem_->take_or_queue(w); }
    AsyncSemaphore* sem_;
  };

  /// co_await acquire(): takes one unit, waiting in line if none is free.
  Awaiter acquire(std::stop_token stop = {}) noexcept { return Awaiter(this, std::move(stop)); }
  /// Takes a unit if one is free and nobody waits.
  bool try_acquire() noexcept;
  /// Returns `n` units, handing them to waiters first; negative n:
  /// std::invalid_argument.
  void release(std::ptrdiff_t n = 1);
  /// The free units now (0 while anyone waits).
  std::ptrdiff_t available() const noexcept;

 private:
  friend class AsyncMutex;
  bool take_or_queue(detail::aio::Waiter& w);
  // release(n) that refuses to raise the count above `limit`.
  void release_upto(std::ptrdiff_t n, std::ptrdiff_t limit, const char* who);
  static void on_stop(detail::aio::Waiter* w) noexcept;

  mutable std::mutex mu_;
  std::ptrdiff_t count_;
  detail::aio::WaitList waiters_;
};

/// A mutex for coroutines (a semaphore of one unit with an owner check);
/// see above.
class AsyncMutex {
 public:
  AsyncMutex() : sem_(1) {}

  /// Holds the mutex until it is destroyed or unlock()ed; movable.
  class [[nodiscard]] ScopedLock {
   public:
    /// Holds nothing.
    ScopedLock() = default;
    /// Adopts `m`, which the caller locked (try_lock()).
    explicit ScopedLock(AsyncMutex& m) noexcept : m_(&m) {}
    ///@{
    /// Moves the ownership; `o` holds nothing afterwards. Assigning over a
    /// lock that holds its mutex unlocks it first.
    ScopedLock(ScopedLock&& o) noexcept = default;
    ScopedLock& operator=(ScopedLock&& o) noexcept = default;
    ///@}
    /// Unlocks if it still holds the mutex.
    ~ScopedLock() = default;
    /// Unlocks now; std::logic_error if it holds no mutex (unlocked
    /// already, moved from, or empty).
    void unlock() {
      if (!m_) throw std::logic_error("weft::AsyncMutex::ScopedLock::unlock: holds no mutex");
      m_.release()->unlock();
    }
    /// True while it holds the mutex.
    bool owns_lock() const noexcept { return m_ != nullptr; }

   private:
    struct Unlock {
      void operator()(AsyncMutex* m) const noexcept { m->sem_.release_upto(1, 1, "weft::AsyncMutex::unlock"); }
    };
    std::unique_ptr<AsyncMutex, Unlock> m_;
  };

  /// What co_await lock() suspends on; yields the ScopedLock.
  class [[nodiscard]] LockAwaiter {
   public:
    ///@{
    /// The awaiter protocol.
    bool await_ready() const noexcept { return false; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> coro) {
      return inner_.await_suspend(coro);
    }
    ScopedLock await_resume() const {
      inner_.await_resume();
      return ScopedLock(*m_);
    }
    ///@}

   private:
    friend class AsyncMutex;
    LockAwaiter(AsyncMutex* m, std::stop_token stop) noexcept : m_(m), inner_(m->sem_.acquire(std::move(stop))) {}
    AsyncMutex* m_;
    AsyncSemaphore::Awaiter inner_;
  };

  /// co_await lock(): the mutex, held by the ScopedLock it yields.
  LockAwaiter lock(std::stop_token stop = {}) noexcept { return LockAwaiter(this, std::move(stop)); }
  /// The mutex if it is free and nobody waits (unlock() it, or adopt it
  /// with ScopedLock(mutex)).
  bool try_lock() noexcept { return sem_.try_acquire(); }
  /// Releases the mutex to the next waiter; std::logic_error if it is not locked.
  void unlock() { sem_.release_upto(1, 1, "weft::AsyncMutex::unlock"); }

 private:
  AsyncSemaphore sem_;
};

}  // namespace weft
