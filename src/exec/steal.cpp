// How a worker finds a task: its own deque, then its victim rings nearest
// first, the seat's guest, and the outside threads' injection slots (a
// batch at a time); and the counts of what is queued that the sleep
// protocol reads (anything_queued(), queued_up_to()).
#include <array>
#include <cstddef>
#include <cstdint>

#include "pool_core.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/asymmetric_fence.hpp"

namespace weft::detail {

bool PoolCore::anything_queued() const noexcept {
  for (const auto& w : workers_)
    if (!w->source.deque.empty()) return true;
  if (!guest_->source.deque.empty()) return true;
  return injection_->any_marked([](const Source& s) { return !s.deque.empty(); });
}

std::uint32_t PoolCore::queued_up_to(std::uint32_t cap) const noexcept {
  std::uint64_t n = 0;
  auto add = [&](const Source& s) { return (n += static_cast<std::uint64_t>(s.deque.size())) >= cap; };
  for (const auto& w : workers_)
    if (add(w->source)) return cap;
  if (add(guest_->source)) return cap;
  return injection_->any_marked(add) ? cap : static_cast<std::uint32_t>(n);
}

namespace {
// A thief widens its search by one ring after this many searches in a row
// found nothing: bounded, so a task far away waits a few empty searches of
// the near rings (each a load or two per victim), not a park.
constexpr int kEmptySearchesPerRing = 2;

// A thief clears the injection bits of empty slots only after this many
// looks in a row at the injection slots found nothing (~1 us of spinning here): a submitter that
// waits for its task and posts the next one sooner finds its bit still set
// and pays a load, not two read-modify-writes and a fence against the
// thief's clear (+130 ns on the remote round trip when every search cleared).
constexpr int kPassesBeforeClearing = 16;

// The most tasks a worker takes from a submitter's deque at once (half of
// what is there, rounded up, up to this): a submitter that posts a burst
// costs the workers one CAS per batch, not one per task.
constexpr std::int64_t kInjectionBatch = 16;
static_assert(kInjectionBatch <= WorkStealingDeque::kMaxBatch, "steal_batch() takes at most kMaxBatch");

// A random index below n: xorshift64, scaled by a multiply rather than a
// division (a steal attempt costs a few ns; a 64-bit divide would be most
// of it). Good enough to spread thieves over a ring.
std::size_t random_below(std::uint64_t& state, std::size_t n) noexcept {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return static_cast<std::size_t>(((state >> 32) * static_cast<std::uint64_t>(n)) >> 32);
}
}  // namespace

TaskNode* PoolCore::steal_any(Worker& w) noexcept {
  for (int round = 0; round < 4; ++round) {
    bool retry = false;
    TaskNode* t = nullptr;
    // The rings in reach, nearest first, each from a random victim on.
    for (std::size_t r = 0; r < w.reach; ++r) {
      const std::vector<int>& ring = w.rings[r];
      const std::size_t n = ring.size();
      const std::size_t first = n == 1 ? 0 : random_below(w.rng, n);
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = first + k < n ? first + k : first + k - n;
        const Steal s = workers_[static_cast<std::size_t>(ring[i])]->source.deque.steal(t);
        if (s == Steal::success) {
          bump(w.counters.steals_by_ring[static_cast<std::size_t>(w.ring_kinds[r])]);
          trace_event(w, TraceKind::steal, ring[i], w.ring_kinds[r]);
          w.reach = r + 1;  // nothing nearer had work: this is where to look first next time
          w.empty_searches = 0;
          return t;
        }
        retry |= s == Steal::retry;
      }
    }
    // The seat's guest (an outside caller computing as a worker): the
    // farthest victim. An empty deque costs two loads.
    if (&w != guest_.get()) {
      const Steal s = guest_->source.deque.steal(t);
      if (s == Steal::success) {
        bump(w.counters.steals_by_ring[static_cast<std::size_t>(StealRing::remote)]);
        trace_event(w, TraceKind::steal, -1, StealRing::remote);  // -1: an outside thread's deque
        w.empty_searches = 0;
        return t;
      }
      retry |= s == Steal::retry;
    }
    bool rearmed = false;
    std::array<TaskNode*, kInjectionBatch> batch;
    std::int64_t taken = 0;
    const Steal r = injection_->steal(w.rng, batch.data(), kInjectionBatch, taken, rearmed,
                                      w.empty_passes >= kPassesBeforeClearing);
    // A bit set again is a push (see push()); whoever set it fenced after it.
    if (rearmed && idle_.notify_one()) count_wakes_sent(w);
    if (r == Steal::success) {
      bump(w.counters.steals_from_submitters, static_cast<std::uint64_t>(taken));
      // A steal event per task taken, as in the stats.
      if (w.trace) [[unlikely]]
        for (std::int64_t i = 0, ns = now_ns(); i < taken; ++i) trace_event_at(w, ns, TraceKind::steal);
      w.empty_passes = 0;
      // The oldest runs now; the rest go to our deque, newest first, so our
      // pops run them in the order they were submitted and thieves take the
      // newest. Not counted as pushed: the submitter's slot counted them
      // (wait_idle() sums both).
      if (taken > 1) {
        for (std::int64_t i = taken - 1; i >= 1; --i) w.source.deque.push(batch[static_cast<std::size_t>(i)]);
        sched_point();
        // These are pushes like push()'s, and so is what follows: our
        // stores before the read of the idle word, the light side of the
        // sleepers' heavy_fence() as in push(). (A searcher counts itself
        // searching here, so this wakes nobody; its found() then wakes
        // sleepers for what is queued, within the searchers' bound.)
        light_fence();
        if (idle_.notify_one()) count_wakes_sent(w);
      }
      return batch[0];
    }
    if (w.empty_passes < kPassesBeforeClearing) ++w.empty_passes;
    retry |= r == Steal::retry;
    if (!retry) break;
  }
  if (w.reach < w.rings.size() && ++w.empty_searches >= kEmptySearchesPerRing) {
    ++w.reach;
    w.empty_searches = 0;
  }
  bump(w.counters.failed_steal_rounds);
  return nullptr;
}

TaskNode* PoolCore::find_task(Worker& w) noexcept {
  if (TaskNode* t = w.source.deque.pop()) return t;
  return steal_any(w);
}

}  // namespace weft::detail
