/// @file
/// weft/queue/spsc_queue.hpp — a bounded single-producer single-consumer queue.
///
/// One thread pushes, one thread pops (each role may move between threads
/// only with a happens-before edge between the old and the new owner).
/// try_push/try_pop never block; push/pop spin within WaitOptions, then sleep
/// until the other side makes room or adds an item (see detail/queue/wait_slot.hpp:
/// a push wakes a sleeping pop at once; a try_push is noticed within 1 ms).
/// push(v, stop_token)/pop(stop_token) also return once a stop is requested
/// on the token (false / an empty optional), woken by the request itself.
///
/// Memory ordering: constructing an item in try_push happens before the
/// try_pop that returns it.
///
/// Layout: the producer's index and its cached copy of the consumer's index
/// share a line written only by the producer; the consumer's likewise. Each
/// side reads the other's index only when its cached copy says full/empty,
/// so in steady state a push or pop touches no line the other side writes
/// except the slot itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/queue/ring_capacity.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/queue/wait_slot.hpp"
#include "weft/sync/wait_options.hpp"

namespace weft {

template <class T>
/// A bounded queue between one producer thread and one consumer thread
/// (this file's opening comment has the contract).
class SpscQueue : public detail::BlockingQueueOps<SpscQueue<T>, T> {
  using Blocking = detail::BlockingQueueOps<SpscQueue<T>, T>;

 public:
  /// Capacity rounded up to a power of two; at least 2. Throws
  /// std::invalid_argument for 0 or more than 2^40 (detail::ring_capacity).
  explicit SpscQueue(std::size_t capacity) {
    const std::size_t c = detail::ring_capacity("weft::SpscQueue", capacity);
    mask_ = c - 1;
    slots_ = std::make_unique<Slot[]>(c);
  }
  SpscQueue(const SpscQueue&) = delete;
  SpscQueue& operator=(const SpscQueue&) = delete;
  ~SpscQueue() {
    // relaxed: no other thread may use the queue during destruction.
    for (std::size_t i = head_.value.load(std::memory_order_relaxed), t = tail_.value.load(std::memory_order_relaxed);
         i != t; ++i)
      slots_[i & mask_].get()->~T();
  }

  /// Producer only: builds an element in place at the tail; false (nothing
  /// built) when full.
  template <class... Args>
  bool try_emplace(Args&&... args) {
    detail::sched_point();
    const std::size_t t = tail_.value.load(std::memory_order_relaxed);  // relaxed: our own index
    if (t - tail_.cached_head == mask_ + 1) {
      // acquire: the consumer's pop of that slot (and its destructor call)
      // happens before we reuse it.
      tail_.cached_head = head_.value.load(std::memory_order_acquire);
      if (t - tail_.cached_head == mask_ + 1) return false;
    }
    ::new (slots_[t & mask_].raw()) T(std::forward<Args>(args)...);
    detail::sched_point();
    tail_.value.store(t + 1, std::memory_order_release);  // release: publishes the constructed item
    this->not_empty_.notify();
    return true;
  }
  ///@{
  /// Producer only: copies or moves `v` to the tail; false (`v` untouched) when full.
  bool try_push(const T& v) { return try_emplace(v); }
  bool try_push(T&& v) { return try_emplace(std::move(v)); }
  ///@}

  /// Consumer only: the head element, or nothing when empty.
  std::optional<T> try_pop() {
    detail::sched_point();
    const std::size_t h = head_.value.load(std::memory_order_relaxed);  // relaxed: our own index
    if (h == head_.cached_tail) {
      head_.cached_tail = tail_.value.load(std::memory_order_acquire);  // acquire: pairs with the push's release
      if (h == head_.cached_tail) return std::nullopt;
    }
    T* p = slots_[h & mask_].get();
    std::optional<T> out(std::move(*p));
    p->~T();
    detail::sched_point();
    head_.value.store(h + 1, std::memory_order_release);  // release: the slot is free for the producer
    this->not_full_.notify();
    return out;
  }

  /// Blocking forms: wait while full / empty (with a std::stop_token: or
  /// until a stop is requested).
  using Blocking::pop;
  using Blocking::push;

  /// The number of slots (the requested capacity rounded up to a power of two).
  [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }
  ///@{
  /// Snapshots, exact only when neither side is active.
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] bool full() const noexcept { return size() == capacity(); }
  [[nodiscard]] std::size_t size() const noexcept {
    // acquire on both: a waiter deciding it may proceed sees the other side's work.
    const std::size_t h = head_.value.load(std::memory_order_acquire);
    return tail_.value.load(std::memory_order_acquire) - h;
  }
  ///@}

 private:
  struct Slot {
    alignas(T) unsigned char bytes[sizeof(T)];
    void* raw() noexcept { return bytes; }
    T* get() noexcept { return std::launder(reinterpret_cast<T*>(bytes)); }
  };
  struct alignas(detail::kCacheLine) Producer {
    std::atomic<std::size_t> value{0};  // next slot to fill; written by the producer
    std::size_t cached_head = 0;        // producer's copy of head_.value
  };
  struct alignas(detail::kCacheLine) Consumer {
    std::atomic<std::size_t> value{0};  // next slot to empty; written by the consumer
    std::size_t cached_tail = 0;        // consumer's copy of tail_.value
  };

  Producer tail_;
  Consumer head_;
  std::size_t mask_ = 0;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace weft
