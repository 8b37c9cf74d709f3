// The engine under every parallel_for form: ranges of offsets, and the
// three partitioners that split them (weft/exec/partitioner.hpp says what
// each promises). A public form maps its indices, iterators or 2-D bounds
// to offsets from the start (unsigned 64-bit, so any integer range fits)
// and hands a leaf that runs one sub-range.
#pragma once

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <exception>
#include <memory>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/exec/stop_gate.hpp"
#include "weft/detail/exec/on_workers.hpp"
#include "weft/exec/partitioner.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft::detail {

using Offset = std::uint64_t;

// n * part / parts rounded down, for part <= parts, without forming the
// product: parts is a worker count, so (n % parts) * part stays small.
constexpr Offset scale(Offset n, Offset part, Offset parts) noexcept {
  return n / parts * part + n % parts * part / parts;
}

// [lo, hi) with its grain (>= 1): divisible while it holds more than it.
struct Span1 {
  Offset lo = 0;
  Offset hi = 0;
  Offset grain = 1;

  [[nodiscard]] Offset size() const noexcept { return hi - lo; }
  [[nodiscard]] bool empty() const noexcept { return hi == lo; }
  [[nodiscard]] bool divisible() const noexcept { return size() > grain; }
  // Keeps the first part/parts of the range and returns the rest.
  Span1 split(Offset part = 1, Offset parts = 2) noexcept {
    const Offset mid = lo + scale(size(), part, parts);
    const Span1 rest{mid, hi, grain};
    hi = mid;
    return rest;
  }
  // Removes and returns the first n offsets (fewer if the range is shorter).
  Span1 take_front(Offset n) noexcept {
    const Offset end = lo + std::min(n, size());
    const Span1 front{lo, end, grain};
    lo = end;
    return front;
  }
};

// Rows x columns; splits the dimension that holds more grains.
struct Span2 {
  Span1 rows;
  Span1 cols;

  // Cells, saturating: only compared against a fixed grain.
  [[nodiscard]] Offset size() const noexcept {
    const Offset r = rows.size();
    const Offset c = cols.size();
    return c != 0 && r > ~Offset{0} / c ? ~Offset{0} : r * c;
  }
  [[nodiscard]] bool empty() const noexcept { return rows.empty() || cols.empty(); }
  [[nodiscard]] bool divisible() const noexcept { return rows.divisible() || cols.divisible(); }
  Span2 split(Offset part = 1, Offset parts = 2) noexcept {
    if (split_rows()) return Span2{rows.split(part, parts), cols};
    return Span2{rows, cols.split(part, parts)};
  }

 private:
  [[nodiscard]] bool split_rows() const noexcept {
    if (!cols.divisible()) return true;
    if (!rows.divisible()) return false;
    return rows.size() / rows.grain >= cols.size() / cols.grain;
  }
};

// The options a parallel_for takes after its body: a partitioner, a
// std::stop_token, or both in that order.
template <class... Opts>
inline constexpr bool kLoopOptions = false;
template <>
inline constexpr bool kLoopOptions<> = true;
template <class O>
inline constexpr bool kLoopOptions<O> = Partitioner<O> || std::same_as<O, std::stop_token>;
template <class P, class S>
inline constexpr bool kLoopOptions<P, S> = Partitioner<P> && std::same_as<S, std::stop_token>;
template <class... Opts>
concept LoopOptions = kLoopOptions<std::remove_cvref_t<Opts>...>;

// f(i) for every i from `i` to `end`; every one runs even if some throw,
// and the first exception is rethrown after the last.
template <class Cursor, class Visit>
void visit_all(Cursor i, const Cursor end, const Visit& visit) {
  std::exception_ptr first_error;
  for (; i != end; ++i) {
    try {
      visit(i);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

// 1-D ranges run in steps, with a stop check (and, adaptive, a look for
// idle workers) between them. Adaptive steps start short, so a slow body
// soon offers work to an idle worker, and double up to the cap, so a
// trivial body pays one check per ~a thousand elements.
inline constexpr Offset kFirstStep = 16;
inline constexpr Offset kMaxStep = 1024;

// Adaptive pieces cut up front per thread that takes part, when more than
// one does. More than one each: a piece can be split only by the thread
// running it, so one held by a thread the OS has descheduled (more threads
// than CPUs: the caller and the workers on a 2-CPU machine) would wait for
// it; pieces still queued can be taken by whoever is free. (One each made
// weft pfor's 1 us items 20% slower on 2 CPUs; eight leaves per worker
// was the eager split this replaces.)
inline constexpr unsigned kAdaptivePiecesPerThread = 4;

// One parallel_for call: its pool, body and stop gate, and the task group
// that every piece but the caller's runs in. Lives on the caller's stack
// until every piece has finished.
template <class Range, class Leaf>
class Loop {
 public:
  Loop(ThreadPool& pool, const Leaf& leaf, std::stop_token stop) noexcept
      : pool_(pool), group_(pool), leaf_(leaf), gate_(std::move(stop)) {}

  // Runs `whole` with partitioner `part`; returns when every piece has
  // run, rethrowing the first exception.
  template <class P>
  void run(const Range& whole, [[maybe_unused]] const P& part) {
    std::exception_ptr mine;
    try {
      if constexpr (std::is_same_v<P, AdaptivePartition>) {
        // The caller takes part; a worker caller is already one of size().
        // run_loop() runs us on a worker: the pool's threads are all there are.
        const unsigned threads = static_cast<unsigned>(pool_.size());
        adaptive(whole, threads > 1 ? threads * kAdaptivePiecesPerThread : 1);
      } else if constexpr (std::is_same_v<P, StaticPartition>) {
        static_blocks(whole);
      } else {
        fixed(whole, std::max<Offset>(part.grain, 1));
      }
    } catch (...) {
      mine = std::current_exception();  // still wait: the tasks reference this loop
    }
    group_.wait();  // rethrows a task's exception
    if (mine) std::rethrow_exception(mine);
  }

 private:
  // Asked once before each chunk. parallel_for returns normally when
  // stopped, so nobody reads what the gate counts as skipped.
  [[nodiscard]] bool stopped() noexcept { return !gate_.enter(); }

  // adaptive: `pieces` up front (proportional cuts, so they are equal),
  // then splits only on demand.
  void adaptive(Range r, unsigned pieces) {
    while (pieces > 1 && r.divisible()) {
      const unsigned right = pieces / 2;
      offer(r.split(pieces - right, pieces), right);
      pieces -= right;
    }
    run_piece(r, true);
  }

  // Runs r a chunk at a time, checking the stop token before each: a 1-D
  // range in steps (which an adaptive piece starts short, doubling up to
  // kMaxStep, and between which it offers the rest to an idle worker), a
  // 2-D range in one call, since a body that takes a whole block cannot be
  // split once it runs. A throwing step does not stop the steps after it.
  void run_piece(Range r, bool on_demand) {
    if constexpr (requires { r.take_front(Offset{}); }) {
      std::exception_ptr first_error;
      Offset step = on_demand ? kFirstStep : kMaxStep;
      while (!r.empty() && !stopped()) {
        if (on_demand && r.divisible() && wanted()) {
          offer(r.split(), 1);
          continue;
        }
        try {
          leaf_(r.take_front(step));
        } catch (...) {
          if (!first_error) first_error = std::current_exception();
        }
        step = std::min(step * 2, kMaxStep);
      }
      if (first_error) std::rethrow_exception(first_error);
    } else {
      while (on_demand && r.divisible() && wanted()) offer(r.split(), 1);
      if (!r.empty() && !stopped()) leaf_(r);
    }
  }

  // Someone could take a piece now: a worker is idle and no offered piece
  // is still waiting for one. Both reads are hints; a stale one costs one
  // split too many or one too few.
  [[nodiscard]] bool wanted() const noexcept {
    return offered_.load(std::memory_order_relaxed) == 0 && pool_.idle_worker_count() > 0;  // relaxed: a hint
  }

  void offer(const Range& r, unsigned pieces) {
    offered_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a hint; the push publishes the piece
    group_.run([this, r, pieces] {
      offered_.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a hint
      adaptive(r, pieces);
    });
  }

  // static_partition: block k of size() to worker k.
  void static_blocks(const Range& whole) {
    blocks_ = pool_.size();
    whole_ = whole;
    claimed_ = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(blocks_));
    // run_loop() runs us on one of the pool's workers (on_workers.hpp).
    const int me = ThreadPool::current_worker_index();
    // Our own block is claimed before any token can run: a worker that runs
    // two tokens claims its own block with the first and the first free one
    // with the second, which could otherwise be ours, leaving a block that
    // no claimant takes. Then the blocks_ - 1 tokens claim the rest.
    claim(me);
    for (int k = 1; k < blocks_; ++k) group_.run([this] { static_token(); });
    run_block(me);
  }

  // Run by a worker: its own block if still free, else the first free one.
  // Each of the size() claimants (the tokens, plus the worker that runs the
  // loop) claims exactly one block, so every block is claimed once.
  void static_token() {
    const int me = ThreadPool::current_worker_index();
    if (me >= 0 && me < blocks_ && claim(me)) return run_block(me);
    for (int k = 0; k < blocks_; ++k) {
      if (claim(k)) return run_block(k);
    }
  }

  bool claim(int k) noexcept {
    // relaxed: the flag only arbitrates who runs block k; the block's data
    // is the caller's, published by the task push and read back by wait().
    return !claimed_[static_cast<std::size_t>(k)].exchange(true, std::memory_order_relaxed);
  }

  // Block k of blocks_: the range halved in proportion to the block counts
  // on each side, the same cuts on every call. A range that is no longer
  // divisible stays whole in the first block of its side.
  void run_block(int k) {
    Range r = whole_;
    int lo = 0;
    int hi = blocks_;
    while (hi - lo > 1) {
      if (!r.divisible()) {
        if (k != lo) return;
        break;
      }
      const int mid = lo + (hi - lo) / 2;
      Range right = r.split(static_cast<Offset>(mid - lo), static_cast<Offset>(hi - lo));
      if (k < mid) {
        hi = mid;
      } else {
        r = right;
        lo = mid;
      }
    }
    run_piece(r, false);
  }

  // fixed_grain: halves down to g, handing every right half to the pool.
  void fixed(Range r, Offset g) {
    while (r.size() > g && r.divisible()) {
      const Range right = r.split();
      group_.run([this, right, g] { fixed(right, g); });
    }
    run_piece(r, false);
  }

  ThreadPool& pool_;
  TaskGroup group_;
  const Leaf& leaf_;
  StopGate gate_;
  // adaptive: pieces offered to the pool and not yet started; read and
  // written by every thread running a piece, only when it splits or starts.
  alignas(kCacheLine) std::atomic<std::uint32_t> offered_{0};
  // static_partition: set before the tokens are pushed, read-only after.
  int blocks_ = 0;
  Range whole_{};
  std::unique_ptr<std::atomic<bool>[]> claimed_;
};

template <class Range, class Leaf, Partitioner P>
void run_loop(ThreadPool& pool, const Range& whole, const Leaf& leaf, const P& part, std::stop_token stop) {
  if (whole.empty() || stop.stop_requested()) return;
  // On a worker only (on_workers.hpp): the loop's threads are the pool's.
  on_workers(pool, [&] {
    Loop<Range, Leaf> loop(pool, leaf, std::move(stop));
    loop.run(whole, part);
  });
}
template <class Range, class Leaf, Partitioner P>
void run_loop(ThreadPool& pool, const Range& whole, const Leaf& leaf, const P& part) {
  run_loop(pool, whole, leaf, part, std::stop_token{});
}
template <class Range, class Leaf>
void run_loop(ThreadPool& pool, const Range& whole, const Leaf& leaf, std::stop_token stop) {
  run_loop(pool, whole, leaf, adaptive, std::move(stop));
}
template <class Range, class Leaf>
void run_loop(ThreadPool& pool, const Range& whole, const Leaf& leaf) {
  run_loop(pool, whole, leaf, adaptive, std::stop_token{});
}

}  // namespace weft::detail
