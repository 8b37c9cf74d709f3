#include "weft/detail/exec/injection_slots.hpp"

#include <stdexcept>
#include <string>
#include <thread>

namespace weft::detail {

InjectionSlots::~InjectionSlots() {
  for (auto& g : groups_) {
    Group* group = g.load(std::memory_order_relaxed);  // relaxed: nobody else uses the table any more
    if (group == nullptr) continue;
    for (auto& s : group->sources) delete s.load(std::memory_order_relaxed);  // relaxed: as above
    delete group;
  }
}

int InjectionSlots::acquire() {
  std::lock_guard lock(mutex_);
  if (!free_.empty()) {
    const int slot = free_.back();
    free_.pop_back();
    return slot;
  }
  const int slot = made_.load(std::memory_order_relaxed);  // relaxed: written under this lock
  if (slot == kMaxSlots)
    throw std::length_error("weft::ThreadPool: " + std::to_string(kMaxSlots) +
                            " outside threads already hold an injection slot; one more cannot submit "
                            "until one of them exits");
  free_.reserve(static_cast<std::size_t>(slot) + 1);  // so that release() never allocates
  std::atomic<Group*>& g = groups_[group_of(slot)];
  Group* group = g.load(std::memory_order_relaxed);  // relaxed: written under this lock
  if (group == nullptr) {
    group = new Group;
    g.store(group, std::memory_order_release);  // release: thieves and source() see it built
  }
  // release: thieves that find the slot's bit, and wait_idle(), see it built.
  group->sources[bit_of(slot)].store(new Source, std::memory_order_release);
  made_.store(slot + 1, std::memory_order_release);  // release: pushed() sees the new Source
  return slot;
}

void InjectionSlots::release(int slot) noexcept {
  std::lock_guard lock(mutex_);
  free_.push_back(slot);
}

bool InjectionSlots::mark(int slot) noexcept {
  Group& g = *groups_[group_of(slot)].load(std::memory_order_acquire);  // acquire: see it built
  const std::uint64_t bit = std::uint64_t{1} << bit_of(slot);
  // seq_cst: this load, after the caller's push and fence, pairs with a
  // thief's clear-fence-look (Dekker): either it sees the clear and sets the
  // bit again, or the thief's look sees the push. A bit already set stays
  // set until a thief clears it, and that thief looks again.
  if ((g.ready.load(std::memory_order_seq_cst) & bit) != 0) return false;
  g.ready.fetch_or(bit, std::memory_order_seq_cst);  // seq_cst: then the summary, as above one level up
  const std::uint64_t gbit = std::uint64_t{1} << group_of(slot);
  // seq_cst: the summary's Dekker pair with retire_group().
  if ((summary_.load(std::memory_order_seq_cst) & gbit) == 0) summary_.fetch_or(gbit, std::memory_order_seq_cst);
  // seq_cst fence: the bits set are part of the caller's push, which the
  // caller's read of the idle word next must follow (the Dekker pair of
  // PoolCore::push() with a sleeper's announcement and rescan).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return true;
}

bool InjectionSlots::retire_group(std::size_t g) noexcept {
  const std::uint64_t gbit = std::uint64_t{1} << g;
  summary_.fetch_and(~gbit, std::memory_order_seq_cst);  // seq_cst: a clear before the look (see mark())
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // seq_cst: the look after the clear; mark() sets a ready bit, then reads the summary.
  if (groups_[g].load(std::memory_order_acquire)->ready.load(std::memory_order_seq_cst) == 0) return false;
  summary_.fetch_or(gbit, std::memory_order_seq_cst);  // seq_cst: as a mark()
  // seq_cst fence: the bit set again is a push, as in mark(): the caller's
  // read of the idle word next must follow it.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return true;
}

Steal InjectionSlots::steal(std::uint64_t start, TaskNode** out, std::int64_t max, std::int64_t& taken, bool& rearmed,
                            bool clear) noexcept {
  // Thieves start at different groups and slots so that they do not all
  // fight over the first one.
  const auto g0 = static_cast<int>(start % kGroups);
  const auto s0 = static_cast<int>((start / kGroups) % kGroupSlots);
  bool retry = false;
  // seq_cst: see any_marked().
  for (std::uint64_t gs = std::rotr(summary_.load(std::memory_order_seq_cst), g0); gs != 0; gs &= gs - 1) {
    const auto g = static_cast<std::size_t>((std::countr_zero(gs) + g0) % kGroups);
    Group& group = *groups_[g].load(std::memory_order_acquire);  // acquire: see it built
    std::uint64_t bits = std::rotr(group.ready.load(std::memory_order_seq_cst), s0);  // seq_cst: as above
    if (bits == 0) {
      if (clear && retire_group(g)) {
        rearmed = true;
        retry = true;
      }
      continue;
    }
    for (; bits != 0; bits &= bits - 1) {
      const auto s = static_cast<std::size_t>((std::countr_zero(bits) + s0) % kGroupSlots);
      Source& src = *group.sources[s].load(std::memory_order_acquire);  // acquire: see it built
      const Steal r = src.deque.steal_batch(out, max, taken);
      if (r == Steal::success) return r;
      if (r == Steal::retry) {
        retry = true;
        continue;
      }
      if (!clear) continue;
      // Empty: clear the bit, fence, look again. A push the look misses
      // came after the fence, and its owner's mark() sees the clear.
      const std::uint64_t bit = std::uint64_t{1} << s;
      // seq_cst: the clear of the Dekker pair with mark().
      const std::uint64_t before = group.ready.fetch_and(~bit, std::memory_order_seq_cst);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (!src.deque.empty()) {
        mark(static_cast<int>(g) * kGroupSlots + static_cast<int>(s));
        rearmed = true;
        retry = true;  // the caller searches again and takes it
      } else if (before == bit && retire_group(g)) {
        rearmed = true;
        retry = true;
      }
    }
  }
  return retry ? Steal::retry : Steal::empty;
}

void InjectionSlots::wait_for_pushers() const noexcept {
  const int made = made_.load(std::memory_order_acquire);  // acquire: see the Sources made
  for (int slot = 0; slot < made; ++slot) {
    // acquire: pairs with the pusher's release as it leaves push(), so its
    // uses of the pool happen before the caller frees it. A push whose task
    // completed set the flag before the task was pushed, which happens
    // before the completion the caller waited for: a true that is still to
    // come is never missed.
    while (source(slot).pushing.load(std::memory_order_acquire)) std::this_thread::yield();
  }
}

std::uint64_t InjectionSlots::pushed() const noexcept {
  std::uint64_t n = 0;
  const int made = made_.load(std::memory_order_acquire);  // acquire: see the Sources made
  for (int slot = 0; slot < made; ++slot)
    n += source(slot).pushed.load(std::memory_order_acquire);  // acquire: as quiescent()'s other counts
  return n;
}

}  // namespace weft::detail
