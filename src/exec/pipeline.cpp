#include <bit>

#include "weft/detail/exec/pipeline_gate.hpp"
#include "weft/detail/sched_point.hpp"

namespace weft::detail {

bool Combiner::add(PipeItem* x) noexcept {
  // relaxed: a failed CAS retries with the fresh head; the success orders.
  PipeItem* head = inbox_.load(std::memory_order_relaxed);
  do {
    x->next = head;
    // release: publishes x (and the item around it) to the holder's exchange.
  } while (!inbox_.compare_exchange_weak(head, x, std::memory_order_release, std::memory_order_relaxed));
  sched_point();
  // acq_rel: release makes the push visible to a holder whose leave() reads
  // this count; acquire hands the last holder's writes (local_) to us if we
  // become the holder.
  return count_.fetch_add(1, std::memory_order_acq_rel) == 0;
}

PipeItem* Combiner::take() noexcept {
  if (local_ == nullptr) {
    // acquire: pairs with add()'s release push.
    PipeItem* pushed = inbox_.exchange(nullptr, std::memory_order_acquire);
    while (pushed != nullptr) {  // newest first: reverse into oldest first
      PipeItem* next = pushed->next;
      pushed->next = local_;
      local_ = pushed;
      pushed = next;
    }
  }
  PipeItem* x = local_;
  if (x != nullptr) local_ = x->next;
  return x;
}

bool Combiner::leave() noexcept {
  sched_point();
  // acq_rel: release hands local_ to the next holder; acquire makes the push
  // of every add() counted here visible to our take().
  return count_.fetch_sub(1, std::memory_order_acq_rel) != 1;
}

void Combiner::put_back(PipeItem* x) noexcept {
  x->next = local_;
  local_ = x;
}

StageGate::StageGate(StageMode mode, std::size_t tokens) : mode_(mode) {
  if (mode == StageMode::serial_in_order) {
    const std::uint64_t size = std::bit_ceil(static_cast<std::uint64_t>(tokens));
    mask_ = size - 1;
    ring_ = std::make_unique<Slot[]>(size);
  }
}

bool StageGate::take_slot(std::uint64_t seq, PipeItem*& out) noexcept {
  Slot& slot = ring_[seq & mask_];
  std::uint64_t parked = seq + 1;
  // seq_cst: the read half of the store-then-load pair in arrive() and
  // pass(); the CAS makes exactly one of them take the item.
  if (!slot.word.compare_exchange_strong(parked, 0, std::memory_order_seq_cst)) return false;
  out = slot.item;
  return true;
}

PipeItem* StageGate::arrive(PipeItem* x) noexcept {
  switch (mode_) {
    case StageMode::parallel:
      return x;
    case StageMode::serial_out_of_order:
      return unordered_.add(x) ? unordered_.take() : nullptr;
    case StageMode::serial_in_order:
      break;
  }
  const std::uint64_t seq = x->seq;
  // acquire: turn == seq means the runner of seq - 1 has passed; its
  // effects (and the stage's state) become ours.
  if (turn_.load(std::memory_order_acquire) == seq) return x;
  Slot& slot = ring_[seq & mask_];
  slot.item = x;
  // seq_cst: park, then look at the turn again; pass() publishes the turn,
  // then looks at the slot: one of the two sees the other (model: pipeline.pml).
  slot.word.store(seq + 1, std::memory_order_seq_cst);
  sched_point();
  PipeItem* mine = nullptr;
  if (turn_.load(std::memory_order_seq_cst) == seq && take_slot(seq, mine)) return mine;  // seq_cst: as above
  return nullptr;
}

PipeItem* StageGate::pass(const PipeItem* done) noexcept {
  switch (mode_) {
    case StageMode::parallel:
      return nullptr;
    case StageMode::serial_out_of_order:
      return unordered_.leave() ? unordered_.take() : nullptr;
    case StageMode::serial_in_order:
      break;
  }
  const std::uint64_t seq = done->seq + 1;
  // seq_cst: publish the turn, then re-check the slot (see arrive()).
  turn_.store(seq, std::memory_order_seq_cst);
  sched_point();
  PipeItem* next = nullptr;
  return take_slot(seq, next) ? next : nullptr;
}

}  // namespace weft::detail
