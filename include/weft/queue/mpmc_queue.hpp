/// @file
/// weft/queue/mpmc_queue.hpp — a bounded multi-producer multi-consumer queue.
///
/// Dmitry Vyukov's bounded MPMC array queue: each slot carries a sequence
/// number that says whose turn it is (a producer's for lap k when it equals
/// the position, a consumer's when it equals position + 1). A producer claims
/// a position with one compare-exchange on the shared enqueue index, then
/// fills the slot and hands it over with a release store of its sequence;
/// consumers mirror this. No locks; a slow thread delays only the slot it
/// holds. FIFO per producer; items from different producers interleave.
///
/// try_push/try_pop never block; push/pop spin within WaitOptions, then sleep
/// until the other side makes room or adds an item (see detail/queue/wait_slot.hpp).
/// push(v, stop_token)/pop(stop_token) also return once a stop is requested
/// on the token (false / an empty optional), woken by the request itself.
///
/// Memory ordering: constructing an item in try_push happens before the
/// try_pop that returns it.
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
/// A bounded queue any number of threads push to and pop from (this
/// file's opening comment has the contract).
class MpmcQueue : public detail::BlockingQueueOps<MpmcQueue<T>, T> {
  using Blocking = detail::BlockingQueueOps<MpmcQueue<T>, T>;

 public:
  /// Capacity rounded up to a power of two; at least 2.
  explicit MpmcQueue(std::size_t capacity) {
    const std::size_t c = detail::ring_capacity("weft::MpmcQueue", capacity);
    mask_ = c - 1;
    slots_ = std::make_unique<Slot[]>(c);
    // relaxed: not shared yet.
    for (std::size_t i = 0; i < c; ++i) slots_[i].seq.store(i, std::memory_order_relaxed);
  }
  MpmcQueue(const MpmcQueue&) = delete;
  MpmcQueue& operator=(const MpmcQueue&) = delete;
  ~MpmcQueue() {
    while (try_pop()) {
    }
  }

  /// Builds an element in place at the tail; false (nothing built) when full.
  template <class... Args>
  bool try_emplace(Args&&... args) {
    std::size_t pos = enqueue_.value.load(std::memory_order_relaxed);  // relaxed: validated by the slot's seq
    for (;;) {
      detail::sched_point();
      Slot& s = slots_[pos & mask_];
      // acquire: the consumer that freed this slot (its destructor call)
      // happens before we construct into it.
      const std::size_t seq = s.seq.load(std::memory_order_acquire);
      const auto dif = static_cast<std::intptr_t>(seq) - static_cast<std::intptr_t>(pos);
      if (dif == 0) {
        // relaxed: the claim only has to be unique; the slot's seq orders the data.
        if (enqueue_.value.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          ::new (s.raw()) T(std::forward<Args>(args)...);
          detail::sched_point();
          s.seq.store(pos + 1, std::memory_order_release);  // release: publishes the item to its consumer
          this->not_empty_.notify();
          return true;
        }
      } else if (dif < 0) {
        return false;  // the slot still holds last lap's item: full
      } else {
        pos = enqueue_.value.load(std::memory_order_relaxed);  // relaxed: another producer moved on; retry
      }
    }
  }
  ///@{
  /// Copies or moves `v` to the tail; false (`v` untouched) when full.
  bool try_push(const T& v) { return try_emplace(v); }
  bool try_push(T&& v) { return try_emplace(std::move(v)); }
  ///@}

  /// The head element, or nothing when empty.
  std::optional<T> try_pop() {
    std::size_t pos = dequeue_.value.load(std::memory_order_relaxed);  // relaxed: validated by the slot's seq
    for (;;) {
      detail::sched_point();
      Slot& s = slots_[pos & mask_];
      const std::size_t seq = s.seq.load(std::memory_order_acquire);  // acquire: pairs with the push's release
      const auto dif = static_cast<std::intptr_t>(seq) - static_cast<std::intptr_t>(pos + 1);
      if (dif == 0) {
        // relaxed: as in try_emplace.
        if (dequeue_.value.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          T* p = s.get();
          std::optional<T> out(std::move(*p));
          p->~T();
          detail::sched_point();
          s.seq.store(pos + mask_ + 1, std::memory_order_release);  // release: the slot is free for next lap
          this->not_full_.notify();
          return out;
        }
      } else if (dif < 0) {
        return std::nullopt;  // empty
      } else {
        pos = dequeue_.value.load(std::memory_order_relaxed);  // relaxed: as above
      }
    }
  }

  /// Blocking forms: wait while full / empty (with a std::stop_token: or
  /// until a stop is requested).
  using Blocking::pop;
  using Blocking::push;

  /// The number of slots (the requested capacity rounded up to a power of two).
  [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }
  ///@{
  /// Snapshots: stale as soon as another thread pushes or pops.
  [[nodiscard]] std::size_t size() const noexcept {
    // acquire on both: a waiter deciding it may proceed sees the other side's claims.
    const std::size_t d = dequeue_.value.load(std::memory_order_acquire);
    const std::size_t e = enqueue_.value.load(std::memory_order_acquire);
    return e > d ? e - d : 0;
  }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] bool full() const noexcept { return size() >= capacity(); }
  ///@}

 private:
  struct Slot {
    std::atomic<std::size_t> seq;
    alignas(T) unsigned char bytes[sizeof(T)];
    void* raw() noexcept { return bytes; }
    T* get() noexcept { return std::launder(reinterpret_cast<T*>(bytes)); }
  };
  struct alignas(detail::kCacheLine) Index {
    std::atomic<std::size_t> value{0};
  };

  Index enqueue_;  // claimed by producers (CAS)
  Index dequeue_;  // claimed by consumers (CAS)
  std::size_t mask_ = 0;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace weft
