// weft/detail/exec/pipeline_gate.hpp — how items enter a pipeline stage
// without any thread waiting for another (the protocol behind
// weft/exec/pipeline.hpp; model: tests/model/pipeline.pml).
//
// Every item that reaches a stage calls arrive(); whoever gets an item back
// runs it in the stage, then calls pass(), which hands it the next item the
// stage owes a run (or nullptr: the stage is free, or its next item has not
// arrived and will be run by whoever brings it). An item that cannot run yet
// stays parked in the gate; no thread blocks on it.
//
//   parallel             arrive(x) -> x; pass -> nullptr.
//   serial_out_of_order  a Combiner: a count of items owed a run plus a
//                        stack of parked items. The arrival that lifts the
//                        count from 0 holds the stage until a pass() brings
//                        it back to 0.
//   serial_in_order      a ring of slots indexed by sequence number and a
//                        turn (the sequence number allowed to run):
//
//     slot word   meaning                     set by               cleared by
//     0           nothing parked              -                    -
//     s + 1       item s parked, not taken    arrive(s) (store)    CAS s+1 -> 0 by arrive(s)
//                                                                  or by pass(s - 1)
//     turn == s   item s may run              pass(s - 1) (store)  pass(s)
//
//   arrive(s): if turn == s, run it (the runner of s - 1 has passed, and
//   found the slot empty or will). Otherwise park: store s + 1 in the slot,
//   then look at the turn again; if it became s meanwhile, race pass(s - 1)
//   for the slot with a CAS. pass(s): publish turn = s + 1, then re-check
//   slot s + 1 with the same CAS. Store-then-load on both sides (seq_cst)
//   means at least one of them sees the other, and the CAS means exactly one
//   runs the item. The word holds the sequence number, not a pointer, so a
//   stale CAS cannot take a later item parked in the same slot (the ring
//   holds as many slots as there are tokens, so item s + size can only
//   exist after item s has left this stage).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "weft/detail/cache_line.hpp"

namespace weft {

// How a stage of weft::parallel_pipeline runs its items.
enum class StageMode {
  serial_in_order,      // one at a time, in the order the first stage made them
  serial_out_of_order,  // one at a time, in any order
  parallel,             // any number at once
};

namespace detail {

// What the gates know of an item. Written by the thread that holds it; the
// gates' release/acquire hand-offs carry it (and the value around it) from
// thread to thread.
struct PipeItem {
  std::uint64_t seq = 0;      // its rank in the first stage's output
  PipeItem* next = nullptr;   // link while parked in a Combiner
  bool dropped = false;       // a stage threw: later stages skip it
};

// A count of items owed a run and a stack of the parked ones; one holder at
// a time. Used for serial_out_of_order stages and for the first stage,
// whose parked items are the free ones (a returned item is a token).
class Combiner {
 public:
  // `held` items' worth of count that the constructing thread holds, with
  // no item parked (the first stage starts with every token).
  explicit Combiner(std::size_t held = 0) noexcept : count_(held) {}

  // Parks x; true if the caller now holds the combiner.
  bool add(PipeItem* x) noexcept;
  // Holder only: a parked item, or nullptr when the count held is made of
  // tokens never turned into items (the first stage's start).
  PipeItem* take() noexcept;
  // Holder only: gives back one unit of the count; true if another is owed
  // a run, which the caller still holds.
  bool leave() noexcept;
  // Holder only: parks x without counting it (an item the holder took and
  // did not use).
  void put_back(PipeItem* x) noexcept;

 private:
  // Written by every add() and by the holder's leave().
  alignas(kCacheLine) std::atomic<std::size_t> count_;
  // Pushed by add() on any thread, emptied by the holder.
  alignas(kCacheLine) std::atomic<PipeItem*> inbox_{nullptr};
  // The holder's FIFO of items taken from inbox_ (oldest first).
  alignas(kCacheLine) PipeItem* local_ = nullptr;
};

class StageGate {
 public:
  // `tokens`: the most items alive at once (sizes the in-order ring).
  StageGate(StageMode mode, std::size_t tokens);

  // x reaches the stage. Returns the item the caller must run in the stage
  // now (x, or for serial_out_of_order another parked one), or nullptr.
  PipeItem* arrive(PipeItem* x) noexcept;
  // The caller ran `done` in the stage (it keeps `done`). Returns the next
  // item the caller must run here, or nullptr.
  PipeItem* pass(const PipeItem* done) noexcept;

 private:
  struct Slot {
    std::atomic<std::uint64_t> word{0};  // seq + 1 of the parked item, or 0
    PipeItem* item = nullptr;            // written before word, read after taking it
  };
  bool take_slot(std::uint64_t seq, PipeItem*& out) noexcept;

  StageMode mode_;
  std::uint64_t mask_ = 0;  // ring size - 1 (a power of two)
  std::unique_ptr<Slot[]> ring_;
  // Written only by the item running the stage, read by every arrival.
  alignas(kCacheLine) std::atomic<std::uint64_t> turn_{0};
  Combiner unordered_;
};

}  // namespace detail
}  // namespace weft
