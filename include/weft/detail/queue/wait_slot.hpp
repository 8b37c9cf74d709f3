// weft/detail/queue/wait_slot.hpp — where a blocked queue operation sleeps.
//
// A queue operation that cannot proceed (pop on empty, push on full) waits
// through the engine (weft/detail/sync/wait.hpp): it spins within
// WaitOptions, then sleeps on `seq` with a 1 ms time limit and looks again.
// The other side calls notify() after it changed the queue: when someone
// sleeps it bumps `seq` and wakes them. notify() reads `waiters` without a
// fence (one relaxed load on the hot path), so a sleeper that announced
// itself just as the other side looked can miss that wake-up; the 1 ms
// limit bounds what that costs, and the queue's contents are never at risk,
// only the latency of that one wake-up.
//
// A wait may carry a std::stop_token: a stop requested on it bumps `seq`
// (a release RMW) and wakes the sleepers through the engine's stop
// callback, so the stopped operation returns at once, not after the 1 ms
// slice; the others see a spurious wake-up.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <utility>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sync/wait.hpp"

namespace weft::detail {

struct alignas(kCacheLine) WaitSlot {
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint32_t> waiters{0};

  void notify() noexcept {
    // relaxed: a hint; a missed sleeper wakes within 1 ms (see above).
    if (waiters.load(std::memory_order_relaxed) != 0) {
      seq.fetch_add(1, std::memory_order_release);  // release: pairs with the sleeper's acquire of seq
      futex_wake(seq, kWakeAll);
    }
  }

  template <class Ready>
  void wait(Ready&& ready, const WaitOptions& opts) noexcept {
    Protocol<Ready> p{{}, *this, ready};
    wait_until(p, opts);
  }
  // False if a stop was requested on `stop` before ready() held.
  template <class Ready>
  bool wait(Ready&& ready, const WaitOptions& opts, const std::stop_token& stop) noexcept {
    Protocol<Ready> p{{}, *this, ready};
    return wait_until(p, opts, Deadline{}, stop);
  }

 private:
  template <class Ready>
  struct Protocol : WaitProtocolBase {
    WaitSlot& slot;
    Ready& ready;

    bool poll() noexcept { return ready(); }
    WaitStep announce() noexcept {
      if (ready()) return WaitStep::done();
      // relaxed: a count; the futex call rechecks seq atomically.
      slot.waiters.fetch_add(1, std::memory_order_relaxed);
      const std::uint32_t s = slot.seq.load(std::memory_order_acquire);  // acquire: pairs with notify()
      if (!ready()) return WaitStep::sleep(s);
      slot.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: as above
      return WaitStep::done();
    }
    void woke() noexcept { slot.waiters.fetch_sub(1, std::memory_order_relaxed); }  // relaxed: as above
    bool give_up() noexcept { return ready(); }
    void stop_wake() noexcept {
      // release: see wait.hpp (the engine's stop contract); seq only grows.
      slot.seq.fetch_add(1, std::memory_order_release);
      futex_wake(slot.seq, kWakeAll);
    }
    std::atomic<std::uint32_t>& word() noexcept { return slot.seq; }
    static std::chrono::nanoseconds max_sleep() noexcept { return std::chrono::milliseconds(1); }
  };
};

// The blocking push and pop of both queues, over the queue's try_push /
// try_pop and full() / empty() (CRTP): wait on the other side's notify()
// while full / empty. The queue calls not_empty_.notify() after a push and
// not_full_.notify() after a pop.
template <class Queue, class T>
class BlockingQueueOps {
 public:
  void push(T v, const WaitOptions& opts = {}) {
    while (!self().try_push(std::move(v))) not_full_.wait([this] { return !self().full(); }, opts);
  }
  T pop(const WaitOptions& opts = {}) {
    for (;;) {
      if (auto v = self().try_pop()) return std::move(*v);
      not_empty_.wait([this] { return !self().empty(); }, opts);
    }
  }

  // Forms a stop can end (docs/guide/cancellation.md). An operation that
  // can complete at once completes, stop or not; one that has to wait
  // returns as soon as a stop is requested on `stop`: push() false, with
  // `v` left as it was (an rvalue is not moved from), pop() an empty
  // optional. No polling: the request wakes the sleeper.
  bool push(T&& v, std::stop_token stop, const WaitOptions& opts = {}) {
    return push_or_stop(std::move(v), stop, opts);
  }
  bool push(const T& v, std::stop_token stop, const WaitOptions& opts = {}) { return push_or_stop(v, stop, opts); }
  std::optional<T> pop(std::stop_token stop, const WaitOptions& opts = {}) {
    for (;;) {
      if (auto v = self().try_pop()) return v;
      if (!not_empty_.wait([this] { return !self().empty(); }, opts, stop)) return std::nullopt;
    }
  }

 protected:
  WaitSlot not_empty_;
  WaitSlot not_full_;

 private:
  Queue& self() noexcept { return static_cast<Queue&>(*this); }
  template <class U>
  bool push_or_stop(U&& v, const std::stop_token& stop, const WaitOptions& opts) {
    // try_push constructs from `v` only when it claimed a slot, so a failed
    // attempt leaves `v` whole for the next one.
    while (!self().try_push(std::forward<U>(v)))
      if (!not_full_.wait([this] { return !self().full(); }, opts, stop)) return false;
    return true;
  }
};

}  // namespace weft::detail
