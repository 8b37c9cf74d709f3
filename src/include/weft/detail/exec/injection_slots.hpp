// weft/detail/exec/injection_slots.hpp — the injection deques of the outside
// threads that submit to a pool, and the bits that say which may hold work.
//
// Each outside thread that submits holds one slot: a Chase–Lev deque it
// alone pushes to. A thread gives its slot back when it exits, and a later
// thread reuses it (tasks left in it are still stolen and run once). Slots
// come in groups of 64; a thief finds the ones that may hold work through a
// two-level bitmap (a summary word of groups, a ready word per group), so
// its search costs a load or two per slot that holds work, not one per
// thread that ever submitted. The protocol and its argument:
// docs/design/pool.md ("Injection slots"); its model:
// tests/model/injection.pml.
//
//   bit state (slot s)   set by                            cleared by
//   ready[g] bit s        mark(): the owner after a push     a thief that found s empty,
//                         a thief that saw s refill          which then looks again
//   summary bit g         mark(), when it was clear          a thief that cleared the last
//                         a thief that saw ready[g] refill   ready bit of g, which then looks again
//
// The table is shared (std::shared_ptr) by its pool and by the threads that
// hold a slot in it: a thread that outlives the pool gives its slot back to
// a table nobody else uses any more; a pool that outlives the thread gets
// its slot back.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <mutex>
#include <vector>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/exec/deque.hpp"

namespace weft::detail {

// A deque plus the count of tasks pushed into it, both written only by the
// deque's owner (a worker, or the outside thread holding the slot).
struct alignas(kCacheLine) Source {
  WorkStealingDeque deque;
  // Tasks ever pushed here, by every owner the slot had; owner-written
  // (relaxed store of its own value plus one), read by wait_idle().
  alignas(kCacheLine) std::atomic<std::uint64_t> pushed{0};
  // An outside thread's slot: true while its owner is inside
  // PoolCore::push(), from before its push to its last use of the pool.
  // The task may run, and the thread waiting for it return and destroy the
  // pool, before the pusher has run the wake rule (a timer's or an
  // io_uring completion's continuation, pushed by the service's thread):
  // shutdown() waits for it (InjectionSlots::wait_for_pushers()).
  // Owner-written, on the owner's line.
  std::atomic<bool> pushing{false};
};

class InjectionSlots {
 public:
  static constexpr int kGroupSlots = 64;
  static constexpr int kGroups = 64;
  static constexpr int kMaxSlots = kGroupSlots * kGroups;

  InjectionSlots() = default;
  InjectionSlots(const InjectionSlots&) = delete;
  InjectionSlots& operator=(const InjectionSlots&) = delete;
  ~InjectionSlots();

  // A free slot for the calling thread (a released one first, else a new
  // one); throws std::length_error when kMaxSlots threads hold one.
  int acquire();
  // Gives a slot back; tasks still in its deque stay there and are stolen.
  // Never allocates (a thread's exit calls it).
  void release(int slot) noexcept;

  // Returns once no slot's owner is inside PoolCore::push() (Source::pushing),
  // for shutdown(), after every pushed task has completed.
  void wait_for_pushers() const noexcept;

  // The slot's deque; `slot` was acquired (by anyone, ever).
  Source& source(int slot) const noexcept {
    // acquire: see the Source acquire() published.
    return *groups_[group_of(slot)].load(std::memory_order_acquire)->sources[bit_of(slot)].load(
        std::memory_order_acquire);
  }

  // The owner, after a push to `slot` and a seq_cst fence: shows that the
  // slot may hold work. Returns whether it set a bit; if it did, it fenced
  // (seq_cst) after it, so the caller's next read of the idle word follows
  // the bit as it follows the push.
  bool mark(int slot) noexcept;

  // A thief: steals a batch from a slot that may hold work (up to `max`,
  // half of what the slot holds rounded up: WorkStealingDeque::
  // steal_batch(), into out[0, taken)), trying slots from a place picked by
  // `start`, as Go's and Tokio's schedulers take from their global queues:
  // one CAS for many tasks, and the submitter's push stays a store and a
  // fence. The slot's owner takes back with pop_batched(). If `clear`, a
  // slot found empty loses its bit
  // and is looked at again; one that refilled meanwhile is marked again and
  // `rearmed` set: the caller wakes a sleeper as after a push (whoever set
  // a bit again fenced after it, as mark() does).
  // (Without `clear` stale bits stay: they only cost a look.)
  Steal steal(std::uint64_t start, TaskNode** out, std::int64_t max, std::int64_t& taken, bool& rearmed,
              bool clear) noexcept;

  // Calls f(source) for every slot whose bits say it may hold work, until f
  // returns true (then returns true). Exact for the sleep protocol: see
  // docs/design/pool.md.
  template <class F>
  bool any_marked(F&& f) const noexcept {
    // seq_cst: the loads of the bitmap take part in the Dekker pairs with
    // mark() and the thieves' clears.
    for (std::uint64_t gs = summary_.load(std::memory_order_seq_cst); gs != 0; gs &= gs - 1) {
      // acquire: see the group and its Sources built (acquire()'s releases).
      const Group& g = *groups_[static_cast<std::size_t>(std::countr_zero(gs))].load(std::memory_order_acquire);
      for (std::uint64_t bits = g.ready.load(std::memory_order_seq_cst); bits != 0; bits &= bits - 1)
        if (f(*g.sources[static_cast<std::size_t>(std::countr_zero(bits))].load(std::memory_order_acquire)))
          return true;
    }
    return false;
  }

  // Tasks ever pushed into every slot there has been (wait_idle()).
  std::uint64_t pushed() const noexcept;

 private:
  struct alignas(kCacheLine) Group {
    std::atomic<std::uint64_t> ready{0};  // bit s: slot s of the group may hold work
    alignas(kCacheLine) std::array<std::atomic<Source*>, kGroupSlots> sources{};
  };
  static std::size_t group_of(int slot) noexcept { return static_cast<std::size_t>(slot / kGroupSlots); }
  static std::size_t bit_of(int slot) noexcept { return static_cast<std::size_t>(slot % kGroupSlots); }
  // A thief that emptied group g's ready word: clears g's summary bit, then
  // looks at the word again; true if it refilled (the summary bit is set again).
  bool retire_group(std::size_t g) noexcept;

  // Bit g: group g may hold work. Read by every thief's search: its own line.
  alignas(kCacheLine) std::atomic<std::uint64_t> summary_{0};
  std::array<std::atomic<Group*>, kGroups> groups_{};
  // Slots made so far, [0, made_); published (release) after the Source.
  std::atomic<int> made_{0};
  std::mutex mutex_;     // acquire() and release()
  std::vector<int> free_;  // released slots, guarded by mutex_; capacity for every slot made
};

}  // namespace weft::detail
