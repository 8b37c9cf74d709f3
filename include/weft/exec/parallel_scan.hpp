/// @file
/// weft/exec/parallel_scan.hpp — prefix sums in parallel.
///
///   weft::parallel_inclusive_scan(pool, in.begin(), in.end(), out.begin());            // + by default
///   weft::parallel_exclusive_scan(pool, v.begin(), v.end(), v.begin(), 0L, op);        // in place
///   weft::parallel_inclusive_scan(pool, in.begin(), in.end(), out.begin(), stop);      // stoppable
///
/// The same results as std::inclusive_scan / std::exclusive_scan for an
/// associative op (the grouping differs, so floating-point results may
/// differ in the last bits from the serial ones). d_first == first (in
/// place) works; other overlaps do not. Both ranges are random-access.
///
/// Design: p = the pool's workers; two windows, the first p/(p+1) of the
/// range and the rest, each in chunks. In a window the calling worker scans
/// chunks from the front, carrying its running total, while the others
/// fold chunks from the back to their totals, each taking the next chunk
/// from a shared pair of ends, until the two ends meet. So they meet
/// wherever their speeds put them: a fold reads, a scan reads and writes,
/// and their ratio differs by host and type (a fold ran at 0.5-0.65 of a
/// scan's time per element here). The folded chunks' carries follow from
/// their totals, and the next round scans them, shared out one at a time
/// (the others first, the calling worker once its own part is done), beside
/// the second window. A third round scans the second window's folded chunks
/// if it has any. On 2 workers that is 0.6-0.67 of a serial scan's time at
/// the ratios above (fixed p + 1 blocks: 0.67 at best), and a calling worker
/// that the kernel deschedules no longer holds up a fixed part: the others
/// fold in its place. Folded chunks are read twice, the rest once. Short
/// ranges (under two chunks of kScanMinBlock elements, i.e. below 32,768)
/// and one-worker pools scan serially. There is no grain argument (unlike
/// oneTBB's parallel_scan): the chunk count is fixed by the pool's size,
/// so a short range of costly elements is scanned serially.
///
/// Exceptions from op (or the iterators) reach the caller once the round it
/// was thrown in has stopped (no chunk is taken after it); the output is
/// then partly written. A call from inside
/// a pool task works, even on one worker.
///
/// Stopping: every form takes an optional std::stop_token last. A chunk is
/// one chunk of a round (the whole range when it scans serially). Once a
/// stop is requested no new chunk starts; if one was skipped, no later
/// round starts and the call throws weft::cancelled, with the output partly
/// written (some prefixes missing: a silent wrong answer otherwise). A stop
/// after the last chunk started changes nothing. An empty range returns
/// d_first, stop or not. An exception from op takes precedence.
#pragma once

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/detail/exec/on_workers.hpp"
#include "weft/detail/exec/stop_gate.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

namespace detail {

// A chunk should dwarf a task hand-off and a cache line's false sharing at
// its edges.
inline constexpr std::size_t kScanMinBlock = std::size_t{1} << 14;
// Window 1's chunks per worker (window 2 has this many in all): how finely
// the scanner and the folders meet, and the folded chunks are shared out.
inline constexpr std::size_t kScanChunksPerWorker = 32;

// Folds [it, it + len) into acc, writing each prefix to out: the exclusive
// form writes acc before folding the element in, the inclusive form after.
// Reads each element before writing its slot, so out may be it.
template <bool kExclusive, class T, class It, class Out, class Op>
T scan_run(It it, std::size_t len, Out out, T acc, Op& op) {
  for (; len > 0; --len, ++it, ++out) {
    if constexpr (kExclusive) {
      T next = op(acc, *it);
      *out = std::move(acc);
      acc = std::move(next);
    } else {
      acc = op(std::move(acc), *it);
      *out = acc;
    }
  }
  return acc;
}

// init: the exclusive scan's initial value, or the inclusive scan's if it
// has one (none: the first element starts the fold).
template <bool kExclusive, class T, std::random_access_iterator It, std::random_access_iterator Out, class Op>
Out scan_here(ThreadPool& pool, It first, It last, Out d_first, std::optional<T> init, Op& op, std::stop_token stop) {
  StopGate gate(std::move(stop));
  const auto n = static_cast<std::size_t>(last - first);
  using Diff = std::iter_difference_t<It>;
  using OutDiff = std::iter_difference_t<Out>;
  // Block 0, from init or from its first element; returns its carry-out.
  auto scan_first = [&](std::size_t len) -> T {
    if (init) return scan_run<kExclusive>(first, len, d_first, std::move(*init), op);
    T acc = static_cast<T>(*first);
    *d_first = acc;
    return scan_run<kExclusive>(first + 1, len - 1, d_first + 1, std::move(acc), op);
  };
  const auto workers = static_cast<std::size_t>(pool.size());
  if (workers < 2 || n < 2 * kScanMinBlock) {
    if (!gate.enter()) throw cancelled{};
    scan_first(n);
    return d_first + static_cast<OutDiff>(n);
  }
  // Two windows, [0, m) and [m, n), each in chunks. In a window this thread
  // scans chunks from the front while the others fold chunks from the back
  // to their totals, until they meet; the folded chunks are then scanned
  // by everyone from their carries, in the next round, beside the next
  // window. Round 1: window 1. Round 2: the folded chunks of round 1 (the
  // others first, this thread once its own scan is done) and window 2.
  // Round 3, only if window 2 was not scanned to its end: its folded chunks.
  const std::size_t m = n / (workers + 1) * workers;
  // relaxed, every atomic below: each hands out chunk numbers only, or
  // stops the taking sooner; the values the chunks produce are read after
  // the round's join (parallel_invoke_n()'s), which orders every taker's writes
  // before it.
  std::atomic<bool> failed{false};  // set by a throw or a stop: nobody takes another chunk
  auto identity = std::identity{};
  // Runs `mine` here and `theirs` as up to `others` handed-off calls
  // (parallel_invoke_n(): in this frame, taken back and run here if no
  // other worker takes them); returns when all have returned, rethrowing
  // one exception (a handed-off call's first).
  auto on_takers = [&](std::size_t others, auto&& mine, auto&& theirs) {
    parallel_invoke_n(pool, others + 1, [&](std::size_t i) {
      if (i == others)
        mine();
      else
        theirs();
    });
  };
  // Wraps a taker: a throw stops the others' taking, then goes on up.
  auto stopping_all = [&failed](auto&& body) {
    try {
      body();
    } catch (...) {
      failed.store(true, std::memory_order_relaxed);  // relaxed: see above
      throw;
    }
  };
  // A chunk may start: false once something failed or a stop was asked for.
  auto may_start = [&] {
    if (failed.load(std::memory_order_relaxed)) return false;  // relaxed: see above
    if (gate.enter()) return true;
    failed.store(true, std::memory_order_relaxed);  // relaxed: see above; the gate remembers the skip
    return false;
  };
  // A window [lo, lo + len) in `chunks` chunks, and the folded chunks of
  // the last round with their carries.
  struct Window {
    std::size_t lo = 0, len = 0, chunks = 0;
    std::size_t begin_of(std::size_t c) const { return lo + c * (len / chunks) + std::min(c, len % chunks); }
  };
  auto window = [](std::size_t lo, std::size_t len, std::size_t per) {
    return Window{lo, len, std::max<std::size_t>(1, std::min(len / kScanMinBlock, per))};
  };
  Window folded_in;                            // the window the folded chunks are in
  std::size_t folded_from = 0;                 // its first folded chunk
  std::vector<std::optional<T>> carries;       // carries[i]: into chunk folded_from + i
  std::optional<T> carry;                      // this thread's: into its next chunk
  // Scans the folded chunks, one at a time, shared with the other takers.
  auto scan_folded = [&](std::atomic<std::size_t>& next) {
    const std::size_t count = carries.size();
    // relaxed: see above (a number per taker, each chunk's carry set before the round).
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count && may_start();) {
      const std::size_t lo = folded_in.begin_of(folded_from + i);
      scan_run<kExclusive>(first + static_cast<Diff>(lo), folded_in.begin_of(folded_from + i + 1) - lo,
                           d_first + static_cast<OutDiff>(lo), std::move(*carries[i]), op);
    }
  };
  // One round: scans window w from the front here (its chunk 0 first: this
  // thread holds its carry) while the others fold from the back, and
  // everyone scans the last round's folded chunks (the others first).
  // Returns the chunks this thread scanned, [0, k); the others' totals are
  // in `totals`.
  auto run_round = [&](const Window& w, std::vector<std::optional<T>>& totals) {
    // The window's chunks not yet taken, [lo, hi), as lo | hi << 32.
    std::atomic<std::uint64_t> ends{std::uint64_t{1} | std::uint64_t{w.chunks} << 32};
    auto claim = [&](bool front, std::size_t& c) {
      std::uint64_t word = ends.load(std::memory_order_relaxed);  // relaxed: see above
      for (;;) {
        const std::uint64_t lo = word & 0xffff'ffffu;
        const std::uint64_t hi = word >> 32;
        if (lo >= hi || failed.load(std::memory_order_relaxed)) return false;  // relaxed: see above
        const std::uint64_t next = front ? word + 1 : word - (std::uint64_t{1} << 32);
        // relaxed: see above (the CAS alone makes each chunk one taker's).
        if (ends.compare_exchange_weak(word, next, std::memory_order_relaxed)) {
          c = static_cast<std::size_t>(front ? lo : hi - 1);
          return may_start();
        }
      }
    };
    std::atomic<std::size_t> next{0};
    std::size_t scanned = 0;
    const std::size_t others = std::min(workers - 1, (w.chunks > 0 ? w.chunks - 1 : 0) + carries.size());
    on_takers(
        others,
        [&] {
          stopping_all([&] {
            if (w.chunks > 0 && may_start()) {
              const std::size_t end0 = w.begin_of(1);
              if (w.lo == 0)
                carry.emplace(scan_first(end0));
              else
                carry.emplace(scan_run<kExclusive>(first + static_cast<Diff>(w.lo), end0 - w.lo,
                                                   d_first + static_cast<OutDiff>(w.lo), std::move(*carry), op));
              scanned = 1;
              for (std::size_t c; claim(true, c); scanned = c + 1) {
                const std::size_t lo = w.begin_of(c);
                carry.emplace(scan_run<kExclusive>(first + static_cast<Diff>(lo), w.begin_of(c + 1) - lo,
                                                   d_first + static_cast<OutDiff>(lo), std::move(*carry), op));
              }
            }
            scan_folded(next);
          });
        },
        [&] {
          stopping_all([&] {
            scan_folded(next);
            for (std::size_t c; claim(false, c);)
              totals[c].emplace(fold_run<T>(first + static_cast<Diff>(w.begin_of(c)),
                                            first + static_cast<Diff>(w.begin_of(c + 1)), op, identity));
          });
        });
    gate.throw_if_skipped();  // a chunk was skipped: a carry is missing
    return scanned;
  };
  // After a round: the window's chunks from `scanned` on were folded (the
  // ends met without a throw or a stop). Their carries, and this thread's
  // past them.
  auto carry_past = [&](const Window& w, std::size_t scanned, std::vector<std::optional<T>>& totals) {
    folded_in = w;
    folded_from = scanned;
    carries.clear();
    carries.resize(w.chunks - scanned);
    for (std::size_t i = 0; i < carries.size(); ++i) {
      carries[i] = std::move(carry);
      carry.emplace(op(*carries[i], std::move(*totals[scanned + i])));
    }
  };
  const Window w1 = window(0, m, kScanChunksPerWorker * workers);
  const Window w2 = window(m, n - m, kScanChunksPerWorker);
  std::vector<std::optional<T>> totals(std::max(w1.chunks, w2.chunks));
  carry_past(w1, run_round(w1, totals), totals);
  for (auto& t : totals) t.reset();
  const std::size_t scanned2 = run_round(w2, totals);
  carry_past(w2, scanned2, totals);
  if (!carries.empty()) run_round(Window{}, totals);
  return d_first + static_cast<OutDiff>(n);
}

// On a worker only (on_workers.hpp): the scan's threads are the pool's.
template <bool kExclusive, class T, std::random_access_iterator It, std::random_access_iterator Out, class Op>
Out scan(ThreadPool& pool, It first, It last, Out d_first, std::optional<T> init, Op& op, std::stop_token stop) {
  if (!(first < last)) return d_first;
  return on_workers(pool, [&] {
    return scan_here<kExclusive, T>(pool, first, last, d_first, std::move(init), op, std::move(stop));
  });
}

}  // namespace detail

///@{
/// out[i] = x0 op x1 op ... op xi; returns d_first + (last - first).
template <std::random_access_iterator It, std::random_access_iterator Out, class Op = std::plus<>>
Out parallel_inclusive_scan(ThreadPool& pool, It first, It last, Out d_first, Op op = {}, std::stop_token stop = {}) {
  return detail::scan<false, std::iter_value_t<It>>(pool, first, last, d_first, std::nullopt, op, std::move(stop));
}
template <std::random_access_iterator It, std::random_access_iterator Out>
Out parallel_inclusive_scan(ThreadPool& pool, It first, It last, Out d_first, std::stop_token stop) {
  return parallel_inclusive_scan(pool, first, last, d_first, std::plus<>{}, std::move(stop));
}
///@}

/// out[i] = init op x0 op ... op xi.
template <std::random_access_iterator It, std::random_access_iterator Out, class Op, class T>
Out parallel_inclusive_scan(ThreadPool& pool, It first, It last, Out d_first, Op op, T init,
                            std::stop_token stop = {}) {
  return detail::scan<false, T>(pool, first, last, d_first, std::optional<T>(std::move(init)), op, std::move(stop));
}

///@{
/// out[i] = init op x0 op ... op x(i-1); out[0] = init.
template <std::random_access_iterator It, std::random_access_iterator Out, class T, class Op = std::plus<>>
Out parallel_exclusive_scan(ThreadPool& pool, It first, It last, Out d_first, T init, Op op = {},
                            std::stop_token stop = {}) {
  return detail::scan<true, T>(pool, first, last, d_first, std::optional<T>(std::move(init)), op, std::move(stop));
}
template <std::random_access_iterator It, std::random_access_iterator Out, class T>
Out parallel_exclusive_scan(ThreadPool& pool, It first, It last, Out d_first, T init, std::stop_token stop) {
  return parallel_exclusive_scan(pool, first, last, d_first, std::move(init), std::plus<>{}, std::move(stop));
}
///@}

/// The same on default_pool().
WEFT_ON_DEFAULT_POOL(parallel_inclusive_scan)
WEFT_ON_DEFAULT_POOL(parallel_exclusive_scan)

}  // namespace weft
