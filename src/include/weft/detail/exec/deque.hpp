// weft/detail/exec/deque.hpp — the Chase–Lev work-stealing deque.
//
// One owner pushes and pops at the bottom (LIFO: the task it just spawned is
// hot in its cache); any number of thieves steal at the top (FIFO: the
// oldest, usually largest piece of work). The algorithm and its orders follow
// Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing for
// Weak Memory Models" (PPoPP 2013), with one change: push publishes with a
// release store of `bottom_` instead of a release fence and a relaxed store
// (the same instruction on x86 and AArch64, and visible to ThreadSanitizer,
// which does not model fences).
//
// Roles are types: DequeOwner (push, pop) may be used by one thread at a
// time; DequeThief (steal) by any number. steal() says Empty, Success or
// Retry (lost a race with another thief or the owner): "nothing there" and
// "try again" are different answers.
//
// Data layout (each on its own cache line):
//   top_     written by thieves (CAS) and by the owner's pop of the last item
//   bottom_  written by the owner only; read by thieves
//   array_   written by the owner when it grows; read by thieves
// The array grows (doubling) when full; old arrays are kept until the deque
// dies, since a thief may still be reading one (memory is bounded by twice
// the largest size reached).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/exec/task.hpp"

namespace weft::detail {

enum class Steal { empty, success, retry };

class WorkStealingDeque {
 public:
  explicit WorkStealingDeque(std::int64_t capacity = 256);
  WorkStealingDeque(const WorkStealingDeque&) = delete;
  WorkStealingDeque& operator=(const WorkStealingDeque&) = delete;
  ~WorkStealingDeque();

  // Owner only. push_n() for one task, written out: through push_n() its
  // loop cost a fork-join fib 4 more instructions per fork (callgrind).
  void push(TaskNode* t) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    // acquire: pairs with thieves' CAS on top_, so slots they took are free to reuse.
    const std::int64_t t_ = top_.load(std::memory_order_acquire);
    Array* a = array_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    if (b - t_ > a->mask) a = grow(a, t_, b);
    sched_point();
    a->slot(b).store(t, std::memory_order_relaxed);  // relaxed: published by the release below
    sched_point();
    // release: a thief that reads the new bottom (acquire) sees the slot and the task's contents.
    bottom_.store(b + 1, std::memory_order_release);
  }

  // Owner only: pushes get(0), ..., get(n - 1), oldest first: what n
  // push()es leave, with one release of bottom_ for all of them (a thief
  // sees them together, never a part). Grows first if they do not fit, so
  // a growth that throws (std::bad_alloc) pushes none of them.
  template <class Get>
  void push_n(std::int64_t n, Get&& get) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    // acquire: pairs with thieves' CAS on top_, so slots they took are free to reuse.
    const std::int64_t t_ = top_.load(std::memory_order_acquire);
    Array* a = array_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    while (b + n - t_ > a->mask + 1) a = grow(a, t_, b);
    sched_point();
    // relaxed: published by the release below, as in push().
    for (std::int64_t i = 0; i < n; ++i) a->slot(b + i).store(get(i), std::memory_order_relaxed);
    sched_point();
    // release: a thief that reads the new bottom (acquire) sees the slots and the tasks' contents.
    bottom_.store(b + n, std::memory_order_release);
  }

  // Owner only: push_n() if the array holds n more without growing; false,
  // and nothing pushed, if it would have to grow (for a caller that must
  // not throw, putting back tasks it took: they fitted before).
  template <class Get>
  [[nodiscard]] bool try_push_n(std::int64_t n, Get&& get) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    // acquire: as in push(): slots thieves took are free to reuse.
    const std::int64_t t_ = top_.load(std::memory_order_acquire);
    const Array* a = array_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    if (b + n - t_ > a->mask + 1) return false;
    push_n(n, std::forward<Get>(get));  // fits: top_ only grows meanwhile
    return true;
  }

  // Owner only: the most recently pushed task, or nullptr.
  TaskNode* pop() {
    const Bottom r = reserve_bottom();
    if (r.empty()) return nullptr;
    const std::int64_t b = r.b;
    std::int64_t t = r.t;
    TaskNode* x = r.a->slot(b).load(std::memory_order_relaxed);  // relaxed: the owner wrote it
    if (t == b) {
      // The last item: race thieves for it through top_. seq_cst: part of the
      // same store-load protocol as the fence in reserve_bottom().
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        x = nullptr;
      bottom_.store(b + 1, std::memory_order_relaxed);  // relaxed: restores the owner's view only
    }
    return x;
  }

  // The most tasks one steal_batch() takes: the bound pop_batched() relies on.
  static constexpr std::int64_t kMaxBatch = 32;

  // Owner only, instead of pop() on a deque that thieves also take from with
  // steal_batch(). pop() takes a task below top_ without a CAS, which is
  // right against thieves that take one task each (a thief can only take
  // the top one, and the last is raced for through top_), but a batch thief
  // that read top_ and bottom_ before our pops may take a range that
  // reaches our task. So a task fewer than kMaxBatch above the top we read
  // is claimed through top_: every task from the top down to it is taken
  // with one CAS, and the others are pushed back (in their order). The
  // argument (under the seq_cst fences, an interleaving argument holds;
  // model: tests/model/batch_steal.pml), for a thief whose batch CAS from
  // top t succeeds and an owner's uncontested take of task x, x - t_o >=
  // kMaxBatch where t_o is the top the owner read after storing bottom = x:
  //  - the owner read top after the thief's CAS: t_o >= t + k, and what is
  //    below t_o, the batch included, is gone as far as the owner sees;
  //  - between the thief's read of top and its CAS: t_o = t, and the batch
  //    [t, t + k) with k <= kMaxBatch ends below x;
  //  - before the thief read top: then the thief's read of bottom (after its
  //    fence) sees our store of bottom = x or a later one, so its range ends
  //    at x at the most; a later push that refills slot x puts a new task
  //    there, which is the one the thief then reads.
  // Pushes stay as they are: a store and the release of bottom_.
  //
  // While it holds the tasks it pushes back, the deque looks empty to
  // everyone else: a thief may then decide there is nothing to take (and
  // clear the slot's ready bit, and sleep). So `pushed_back` says whether
  // it pushed any back, and an owner whose deque is found through bits must
  // then publish them as it does a push (PoolCore::republish()).
  TaskNode* pop_batched(bool& pushed_back) {
    const Bottom r = reserve_bottom();
    if (r.empty()) return nullptr;
    const std::int64_t b = r.b;
    std::int64_t t = r.t;
    Array* a = r.a;
    TaskNode* x = a->slot(b).load(std::memory_order_relaxed);  // relaxed: the owner wrote it
    if (b - t >= kMaxBatch) return x;  // no batch reaches it (see above)
    // Claim [t, b] through top_. seq_cst: the same total order as the
    // thieves' CAS. A failure reloads t (thieves took from the top); relaxed
    // on failure: the new top only says how far, and the slots we then read
    // are our own writes.
    while (!top_.compare_exchange_weak(t, b + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
      if (t > b) {  // thieves took everything, ours included
        bottom_.store(b + 1, std::memory_order_relaxed);  // relaxed: restores the owner's view only
        return nullptr;
      }
    }
    // Ours now: [t, b), fewer than kMaxBatch. Read them before the
    // push-backs reuse slots.
    std::array<TaskNode*, kMaxBatch> rest;
    const std::int64_t n = b - t;
    for (std::int64_t i = 0; i < n; ++i)
      rest[static_cast<std::size_t>(i)] = a->slot(t + i).load(std::memory_order_relaxed);  // relaxed: the owner wrote them
    bottom_.store(b + 1, std::memory_order_relaxed);  // relaxed: top_ == bottom_ now, an empty deque
    for (std::int64_t i = 0; i < n; ++i) push(rest[static_cast<std::size_t>(i)]);
    pushed_back = n > 0;
    return x;
  }

  // Any thread: takes up to `max` (at most kMaxBatch) of the oldest tasks,
  // half of those queued rounded up, with one CAS of top_; writes them to
  // `out` oldest first and sets `taken`. The owner must pop with
  // pop_batched(), not pop() (see there).
  Steal steal_batch(TaskNode** out, std::int64_t max, std::int64_t& taken) {
    // acquire: pairs with the CAS of other thieves (slots they emptied).
    std::int64_t t = top_.load(std::memory_order_acquire);
    sched_point();
    // seq_cst fence: as in steal().
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // acquire: pairs with push()'s release; the slots and the tasks are visible.
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return Steal::empty;
    const std::int64_t k = std::min({max, kMaxBatch, (b - t + 1) / 2});
    sched_point();
    // acquire: pairs with grow()'s release of a new array.
    Array* a = array_.load(std::memory_order_acquire);
    // relaxed: validated by the CAS below, as in steal(); a slot the owner
    // rewrote after a wrap-around can only be one whose top_ moved on.
    for (std::int64_t i = 0; i < k; ++i) out[i] = a->slot(t + i).load(std::memory_order_relaxed);
    sched_point();
    // seq_cst: the CAS decides between thieves and the owner's claims;
    // relaxed on failure: a failed CAS only says retry, nothing read is kept.
    if (!top_.compare_exchange_strong(t, t + k, std::memory_order_seq_cst, std::memory_order_relaxed))
      return Steal::retry;
    taken = k;
    return Steal::success;
  }

  // Owner only: the task pop() would return, without taking it (a thief may
  // still take it before the owner's pop()).
  [[nodiscard]] TaskNode* peek_bottom() const noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;  // relaxed: owner's own variable
    if (b < top_.load(std::memory_order_relaxed)) return nullptr;       // relaxed: a hint only
    return array_.load(std::memory_order_relaxed)->slot(b).load(std::memory_order_relaxed);
  }

  // Owner only: pops the newest task if `wanted(it)` holds for it, else
  // leaves the deque as it is; nullptr if it did not hold, or if a thief
  // took that task (the last one) first. Only the owner moves the bottom,
  // so the pop() after the peek returns the task peeked or nothing.
  // `wanted` sees a task a thief may take, run and free before the pop():
  // it should compare the pointer (to a task or a range of them) rather
  // than read the task.
  template <class Wanted>
  [[nodiscard]] TaskNode* pop_if(Wanted&& wanted) {
    TaskNode* const t = peek_bottom();
    if (t == nullptr || !wanted(t)) return nullptr;
    return pop() == t ? t : nullptr;
  }

  // Owner only: takes the newest k tasks (k >= 1) at once, with one fence,
  // if they are exactly expected(0), ..., expected(k - 1), oldest first,
  // and no thief can reach the oldest of them: true, and they are the
  // caller's to run; false, and the deque holds what it held less any task a
  // thief took meanwhile. pop() k times with one store of bottom_ and one
  // fence instead of k: the argument is pop()'s for its uncontested case,
  // with the bottom lowered past k tasks instead of one. After the fence,
  // top t < b - k means every thief's CAS can only take an index below
  // b - k (a thief that reads top >= b - k later reads bottom after its
  // fence, so sees ours, and the range empty). Not for a deque that
  // steal_batch() takes from (pop_batched() says why), and none of the k is
  // stealable until the caller has run them: the caller decides when that
  // is worth one fence instead of k (invoke_join(): nobody idle to steal).
  //
  // On false the lowered bottom is restored, and `restored` says so: while
  // it was lowered the tasks looked gone to a thief, which may have gone to
  // sleep, so a caller in a pool announces them as a push, as after
  // pop_exactly()'s push-back. Reads no task: compares the pointers in the
  // slots (the owner's own writes) with `expected`.
  template <class Expected>
  [[nodiscard]] bool take_newest_n(std::int64_t k, Expected&& expected, bool& restored) {
    restored = false;
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    const std::int64_t nb = b - k;
    // relaxed: a hint (the fence below decides): the oldest of the k is the
    // last queued one, which pop() would race for through top_.
    if (nb <= top_.load(std::memory_order_relaxed)) return false;
    Array* a = array_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    for (std::int64_t i = 0; i < k; ++i) {
      // relaxed: the owner wrote the slots; thieves only read them.
      if (a->slot(nb + i).load(std::memory_order_relaxed) != expected(i)) return false;
    }
    const Bottom r = reserve_bottom(k);
    if (r.t < r.b) return true;
    // A thief reached the oldest (or is racing for it): back as it was,
    // less what thieves took; the caller pops one at a time. (Where a thief
    // took it already, reserve_bottom() has restored the bottom.)
    // relaxed: the fence in reserve_bottom() is a release fence before this
    // store, so a thief whose acquire load reads it sees the slots (written
    // before the fence); tasks thieves took meanwhile stay taken (top_ is
    // past them).
    if (!r.empty()) bottom_.store(b, std::memory_order_relaxed);
    restored = true;
    return false;
  }

  // Owner only: pops the newest task and says whether it was `t` (the
  // common answer in a fork-join's join, which expects its own task back):
  // pop_if() without the look before the pop, whose loads the pop makes
  // again. Any other task popped instead (one queued above t) is pushed
  // back at the bottom, in its order (no growth: the pop made the room),
  // and `pushed_back` says so: while it was out the deque may have looked
  // empty to a thief, so a caller in a pool announces it as a push
  // (PoolCore::announce_own_push()). False with nothing pushed back if the
  // deque was empty or a thief took the last task first. Reads no task
  // (compares the pointer), as pop_if()'s wanted.
  [[nodiscard]] bool pop_exactly(const TaskNode* t, bool& pushed_back) {
    pushed_back = false;
    return pop_keep_if([t](const TaskNode* x) { return x == t; }, pushed_back) != nullptr;
  }

  // Owner only: pops the newest task, then keeps it if `wanted(it)` holds,
  // else pushes it back at the bottom, in its order (`pushed_back` says
  // so); nullptr if the deque was empty, a thief took the last task first,
  // or `wanted` said no. Unlike pop_if(), `wanted` may read the task: it is
  // the owner's while it looks (claimed by pop(), so no thief can take, run
  // and free it). The price is pop()'s fence on a "no" as well. While the
  // task was out the deque may have looked empty to a thief, which may
  // then have gone to sleep: a caller in a pool announces the pushed-back
  // task as it would a push (PoolCore::announce_own_push()). The push-back
  // cannot grow the array: the pop left the size below the capacity that
  // held the task before.
  template <class Wanted>
  [[nodiscard]] TaskNode* claim_bottom_if(Wanted&& wanted, bool& pushed_back) {
    pushed_back = false;
    if (peek_bottom() == nullptr) return nullptr;  // spares the fence on an empty deque (a hint: pop() decides)
    return pop_keep_if(wanted, pushed_back);
  }

  // Owner only: takes every task at once (one CAS of top_ against the
  // thieves) and offers each, oldest first, to `take` (bool(TaskNode*)): a task
  // it returns true for is the caller's now; the others go back in, in their
  // order. Returns how many it took. Thieves that read a slot of the taken
  // range fail their CAS (top_ moved past it), as against pop().
  template <class Take>
  std::int64_t take_all(Take&& take) {
    // acquire: pairs with thieves' CAS on top_, as in push().
    std::int64_t t = top_.load(std::memory_order_acquire);
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    // seq_cst: the same total order as the thieves' CAS and pop()'s.
    while (t < b && !top_.compare_exchange_weak(t, b, std::memory_order_seq_cst, std::memory_order_acquire)) {
    }
    if (t >= b) return 0;
    Array* a = array_.load(std::memory_order_relaxed);  // relaxed: only the owner writes it
    // Kept tasks are compacted to the front of the taken range (a write
    // never passes the read), so pushing them back, which writes slots from
    // b on, can only overwrite slots already read (b - t <= capacity).
    std::int64_t kept = t;
    for (std::int64_t i = t; i < b; ++i) {
      TaskNode* x = a->slot(i).load(std::memory_order_relaxed);  // relaxed: the owner wrote it
      if (!take(x)) a->slot(kept++).store(x, std::memory_order_relaxed);  // relaxed: private until pushed
    }
    for (std::int64_t i = t; i < kept; ++i) push(a->slot(i).load(std::memory_order_relaxed));  // relaxed: as above
    return b - t - (kept - t);
  }

  // Any thread.
  Steal steal(TaskNode*& out) {
    // acquire: pairs with the CAS of other thieves (slots they emptied).
    std::int64_t t = top_.load(std::memory_order_acquire);
    sched_point();
    // seq_cst fence: the load of top_ must precede the load of bottom_
    // (load-load across two variables, against pop()'s store-load).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // acquire: pairs with push()'s release; the slot and the task are visible.
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return Steal::empty;
    sched_point();
    // acquire: pairs with grow()'s release of a new array.
    Array* a = array_.load(std::memory_order_acquire);
    TaskNode* x = a->slot(t).load(std::memory_order_relaxed);  // relaxed: validated by the CAS below
    sched_point();
    // seq_cst: the CAS decides between thieves and the owner's pop of the last item.
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return Steal::retry;
    out = x;
    return Steal::success;
  }

  // Any thread; a snapshot (exact only when nobody pushes or takes).
  [[nodiscard]] bool empty() const noexcept {
    // acquire on both: a caller deciding to sleep must see pushes that
    // happened before its fence.
    const std::int64_t t = top_.load(std::memory_order_acquire);
    return bottom_.load(std::memory_order_acquire) <= t;
  }
  [[nodiscard]] std::int64_t size() const noexcept {
    const std::int64_t t = top_.load(std::memory_order_acquire);  // acquire: as in empty()
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    return b > t ? b - t : 0;
  }

 private:
  // pop(), then keeps the task if `wanted(it)` holds, else pushes it back
  // (pushed_back: true); the popped task or nullptr. claim_bottom_if() and
  // pop_exactly() are this with and without a look first.
  template <class Wanted>
  TaskNode* pop_keep_if(Wanted&& wanted, bool& pushed_back) {
    TaskNode* const t = pop();
    if (t == nullptr || wanted(t)) return t;
    push(t);
    pushed_back = true;
    return nullptr;
  }

  struct Array {
    std::int64_t mask;
    std::unique_ptr<std::atomic<TaskNode*>[]> slots;
    explicit Array(std::int64_t capacity)
        : mask(capacity - 1), slots(new std::atomic<TaskNode*>[static_cast<std::size_t>(capacity)]) {}
    std::atomic<TaskNode*>& slot(std::int64_t i) noexcept { return slots[static_cast<std::size_t>(i & mask)]; }
  };
  Array* grow(Array* a, std::int64_t t, std::int64_t b);

  // The first step of every owner pop: the newest k slots, from b =
  // bottom - k up, withdrawn from the thieves' view, and the top read after
  // it; when a thief has taken slot b already (t > b: for k = 1, an empty
  // deque) the bottom is restored (empty() then says so).
  struct Bottom {
    std::int64_t b;
    std::int64_t t;
    Array* a;
    [[nodiscard]] bool empty() const noexcept { return t > b; }
  };
  Bottom reserve_bottom(std::int64_t k = 1) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - k;  // relaxed: owner's own variable
    Array* a = array_.load(std::memory_order_relaxed);                    // relaxed: owner's own variable
    bottom_.store(b, std::memory_order_relaxed);  // relaxed: ordered against top_ by the fence below
    sched_point();
    // seq_cst fence: the store to bottom_ and the load of top_ must not be
    // reordered (store-load), or the owner and a thief could both take the
    // last item (and, against steal_batch(), one inside a batch).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::int64_t t = top_.load(std::memory_order_relaxed);  // relaxed: ordered by the fence
    sched_point();
    // relaxed: for k = 1 the deque is empty and this restores the owner's
    // view only; for more, tasks above t may still be queued, and the fence
    // above is a release fence before this store, so a thief whose acquire
    // load reads it sees their slots.
    if (t > b) bottom_.store(b + k, std::memory_order_relaxed);
    return {b, t, a};
  }

  alignas(kCacheLine) std::atomic<std::int64_t> top_{0};
  alignas(kCacheLine) std::atomic<std::int64_t> bottom_{0};
  alignas(kCacheLine) std::atomic<Array*> array_;
  std::vector<std::unique_ptr<Array>> arrays_;  // owner only: every array ever used
};

// The two roles, as types.
class DequeOwner {
 public:
  explicit DequeOwner(WorkStealingDeque& d) noexcept : d_(&d) {}
  void push(TaskNode* t) { d_->push(t); }
  TaskNode* pop() { return d_->pop(); }

 private:
  WorkStealingDeque* d_;
};

class DequeThief {
 public:
  explicit DequeThief(WorkStealingDeque& d) noexcept : d_(&d) {}
  Steal steal(TaskNode*& out) { return d_->steal(out); }
  [[nodiscard]] bool empty() const noexcept { return d_->empty(); }

 private:
  WorkStealingDeque* d_;
};

}  // namespace weft::detail
