// One worker's trace (weft/exec/trace.hpp): a fixed ring of events written
// by one thread and copied by any other at any time.
//
// Roles: record() only on the owning worker; snapshot() from any thread,
// concurrently with record() and with other snapshot()s.
//
// Overwrite, not stop, when full: a trace is read after something went
// slow, so the last stretch is what matters (a flight recorder).
//
// Memory ordering: a seqlock per write. To write event k (which replaces
// event k - capacity in the same slot) the owner first publishes
// claimed_ = k + 1, then a release fence, then the slot, then
// written_ = k + 1 (release). A reader loads written_ (acquire: the slots
// below it are complete), copies the slots, and after an acquire fence
// loads claimed_. If it copied any part of a slot that event k wrote,
// its acquire fence synchronises with the writer's release fence, so
// claimed_ reads k + 1 or more, and the reader drops every event below
// claimed_ - capacity — the one it copied in pieces included. Every field is
// an atomic, so a torn copy is a discarded value, never a data race.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "weft/detail/cache_line.hpp"
#include "weft/exec/trace.hpp"

namespace weft::detail {

class TraceRing {
 public:
  // Holds the last `capacity` events, rounded up to a power of two (at least 2).
  explicit TraceRing(std::size_t capacity)
      : mask_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity) - 1), slots_(new Slot[mask_ + 1]) {}

  std::size_t capacity() const noexcept { return mask_ + 1; }

  // Owner only.
  void record(TraceKind kind, std::int64_t ns, std::int32_t peer = -1, StealRing ring = StealRing::smt) noexcept {
    const std::uint64_t k = written_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    claimed_.store(k + 1, std::memory_order_relaxed);  // relaxed: ordered before the slot by the fence
    std::atomic_thread_fence(std::memory_order_release);  // release: a reader that sees the slot sees the claim
    Slot& s = slots_[k & mask_];
    s.ns.store(ns, std::memory_order_relaxed);  // relaxed: published by written_
    s.what.store(pack(kind, peer, ring), std::memory_order_relaxed);  // relaxed: as above
    written_.store(k + 1, std::memory_order_release);  // release: the slot is complete below it
  }

  // Any thread: the events still held, oldest first; `dropped` gets how
  // many were recorded before the first of them.
  std::vector<TraceEvent> snapshot(std::uint64_t& dropped) const {
    const std::uint64_t end = written_.load(std::memory_order_acquire);  // acquire: see the slots below it
    const std::uint64_t cap = capacity();
    const std::uint64_t begin = end > cap ? end - cap : 0;
    std::vector<TraceEvent> out;
    out.reserve(static_cast<std::size_t>(end - begin));
    for (std::uint64_t k = begin; k < end; ++k) {
      const Slot& s = slots_[k & mask_];
      // relaxed: checked against claimed_ below.
      out.push_back(unpack(s.ns.load(std::memory_order_relaxed), s.what.load(std::memory_order_relaxed)));
    }
    std::atomic_thread_fence(std::memory_order_acquire);  // acquire: pairs with record()'s release fence
    const std::uint64_t claimed = claimed_.load(std::memory_order_relaxed);  // relaxed: ordered by the fence
    const std::uint64_t valid = claimed > cap ? claimed - cap : 0;  // slots below this may be rewritten
    const std::uint64_t first = valid > begin ? (valid < end ? valid : end) : begin;
    out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(first - begin));
    dropped = first;
    return out;
  }

 private:
  // what: kind in bits 0-7, ring in 8-15, peer (as 32 bits) in 32-63.
  static std::uint64_t pack(TraceKind kind, std::int32_t peer, StealRing ring) noexcept {
    return static_cast<std::uint64_t>(kind) | static_cast<std::uint64_t>(ring) << 8 |
           static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 32;
  }
  static TraceEvent unpack(std::int64_t ns, std::uint64_t what) noexcept {
    return {ns, static_cast<TraceKind>(what & 0xff), static_cast<std::int32_t>(static_cast<std::uint32_t>(what >> 32)),
            static_cast<StealRing>((what >> 8) & 0xff)};
  }

  struct Slot {
    std::atomic<std::int64_t> ns{0};
    std::atomic<std::uint64_t> what{0};
  };

  std::size_t mask_;
  std::unique_ptr<Slot[]> slots_;
  // Written by the owner on every event, read by snapshot(): apart from the
  // worker's other hot lines (the ring sits behind a pointer anyway).
  alignas(kCacheLine) std::atomic<std::uint64_t> written_{0};
  std::atomic<std::uint64_t> claimed_{0};
};

}  // namespace weft::detail
