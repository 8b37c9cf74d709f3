/// @file
/// weft/sync/parker.hpp — a one-owner permit: park until someone unparks.
///
/// One thread, the owner, calls park(); any thread calls unpark(). unpark()
/// makes a single permit available (permits do not accumulate) and wakes the
/// owner if it sleeps; park() consumes the permit, waiting for one if none is
/// there. So an unpark() that comes before park() is not lost, and spurious
/// futex wake-ups are absorbed (park returns only with the permit).
/// park() spins within WaitOptions before it sleeps (wait_options.hpp).
///
/// Preconditions: only the owner parks (no two park() calls at once).
/// Destruction: safe once park() has returned the last permit and no
/// unpark() is still running.
///
/// Memory ordering: everything a thread did before unpark() happens before
/// everything the owner does after the park() that consumed that permit.
///
/// State (one 32-bit word, on a cache line of its own):
///
///   state      meaning                     park() by the owner      unpark() by anyone
///   ---------  --------------------------  -----------------------  ----------------------
///   kEmpty     no permit, owner awake      -> kParked, sleep        -> kNotified
///   kNotified  a permit is waiting         -> kEmpty, return        stays kNotified
///   kParked    owner asleep on the futex   (owner is asleep)        -> kNotified + futex wake
///
/// park() moves kNotified->kEmpty and kEmpty->kParked with one fetch_sub
/// (ParkerWord's encoding makes that work), so the owner either takes the permit
/// or announces that it sleeps, atomically: an unpark() cannot slip between
/// the owner's check and its sleep. unpark() exchanges in kNotified and makes
/// the futex call only when it saw kParked, so unparking an awake owner costs
/// one atomic exchange and no system call. The values are detail::ParkerWord's
/// (weft/detail/sync/word_states.hpp); the waiting side is src/sync/parker.cpp,
/// over the engine in weft/detail/sync/wait.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/word_states.hpp"
#include "weft/sync/wait_options.hpp"

namespace weft {

/// One thread's permit to sleep and be woken: this file's opening comment has the contract.
class Parker {
 public:
  Parker() = default;
  Parker(const Parker&) = delete;
  Parker& operator=(const Parker&) = delete;

  /// Returns once a permit is available, consuming it.
  void park(const WaitOptions& opts = {}) noexcept {
    detail::sched_point();
    // Fast path: a permit is already there. acquire: pairs with unpark()'s
    // release so the unparker's writes are visible after we return.
    std::uint32_t expected = W::kNotified;
    if (state_.compare_exchange_strong(expected, W::kEmpty, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      return;
    }
    park_slow(opts, std::chrono::nanoseconds::zero());
  }

  /// As park(), but gives up after `timeout`; true if a permit was consumed.
  bool park_for(std::chrono::nanoseconds timeout, const WaitOptions& opts = {}) noexcept {
    std::uint32_t expected = W::kNotified;
    // acquire: as in park().
    if (state_.compare_exchange_strong(expected, W::kEmpty, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      return true;
    }
    if (timeout <= std::chrono::nanoseconds::zero()) return false;
    return park_slow(opts, timeout);
  }

  /// Makes the permit available; wakes the owner if it sleeps.
  void unpark() noexcept {
    detail::sched_point();
    // release: publishes the unparker's writes to the owner's acquire in
    // park(). The exchange (not a plain store) tells us whether the owner
    // announced sleep, so the system call is made only then.
    if (state_.exchange(W::kNotified, std::memory_order_release) == W::kParked) wake_slow();
  }

  /// Whether a permit is waiting (a snapshot, for tests and diagnostics).
  [[nodiscard]] bool notified() const noexcept {
    return state_.load(std::memory_order_relaxed) == W::kNotified;
  }

 private:
  using W = detail::ParkerWord;

  bool park_slow(const WaitOptions& opts, std::chrono::nanoseconds timeout) noexcept;
  void wake_slow() noexcept;

  alignas(detail::kCacheLine) std::atomic<std::uint32_t> state_{W::kEmpty};
};

}  // namespace weft

// The alignas on the word rounds the object up to a whole line, so
// neighbouring data cannot share it.
static_assert(sizeof(weft::Parker) == weft::detail::kCacheLine && alignof(weft::Parker) == weft::detail::kCacheLine);
