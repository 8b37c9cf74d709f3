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
/// Design: two passes, p = the pool's workers. Pass 1 covers the first
/// p/(p+1) of the range in chunks (kScanChunksPerWorker per worker): the
/// calling worker scans chunks from the front, carrying its running total,
/// while the others fold chunks from the back to their totals, each taking
/// the next chunk from a shared pair of ends, until the two ends meet. So
/// they meet wherever their speeds put them: a fold reads, a scan reads
/// and writes, and their ratio differs by host and type (a fold ran at
/// 0.5-0.65 of a scan's time per element here). A serial fold of the
/// chunks' totals then gives each folded chunk its carry-in; pass 2 scans
/// them, shared out one at a time, while the calling worker first scans
/// the last 1/(p+1), whose carry is the whole of pass 1's. On 2 workers
/// that is 0.6-0.67 of a serial scan's time at the fold/scan ratios above
/// (fixed p + 1 blocks: 0.67 at best, and a descheduled worker stalled
/// its whole pass). Folded chunks are read twice, the rest once. Short
/// ranges (under two chunks of kScanMinBlock elements, i.e. below 32,768)
/// and one-worker pools scan serially. There is no grain argument (unlike
/// oneTBB's parallel_scan): the chunk count is fixed by the pool's size,
/// so a short range of costly elements is scanned serially.
///
/// Exceptions from op (or the iterators) reach the caller once the pass it
/// was thrown in has stopped (no chunk is taken after it); the output is
/// then partly written. A call from inside
/// a pool task works, even on one worker.
///
/// Stopping: every form takes an optional std::stop_token last. A chunk is
/// one chunk of a pass (the whole range when it scans serially). Once a
/// stop is requested no new chunk starts; if one was skipped, pass 2 does
/// not start and the call throws weft::cancelled, with the output partly
/// written (some prefixes missing: a silent wrong answer otherwise). A stop
/// after the last chunk started changes nothing. An empty range returns
/// d_first, stop or not. An exception from op takes precedence.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/detail/exec/stop_gate.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

namespace detail {

// A chunk should dwarf a task hand-off and a cache line's false sharing at
// its edges.
inline constexpr std::size_t kScanMinBlock = std::size_t{1} << 14;
// Pass 1's chunks per worker: how finely the scanner and the folders meet,
// and pass 2's folded chunks are shared out.
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
  // Pass 1 covers [0, m), in chunks: this thread scans from the front,
  // the others fold chunks from the back to their totals, until they meet.
  const std::size_t m = n / (workers + 1) * workers;
  const std::size_t chunks = std::max<std::size_t>(1, std::min(m / kScanMinBlock, kScanChunksPerWorker * workers));
  auto begin_of = [&](std::size_t c) { return c * (m / chunks) + std::min(c, m % chunks); };
  std::vector<std::optional<T>> totals(chunks);  // a folded chunk's total
  // The chunks not yet taken, [lo, hi), as lo | hi << 32; chunk 0 is this
  // thread's from the start (it holds the scan's start).
  std::atomic<std::uint64_t> ends{std::uint64_t{1} | std::uint64_t{chunks} << 32};
  // Set by a throw or a stop: nobody takes another chunk.
  std::atomic<bool> failed{false};
  auto identity = std::identity{};
  // Runs `mine` here and `theirs` on up to `others` other workers; returns
  // when all have returned, rethrowing a thrown exception (a task's first).
  auto on_takers = [&](std::size_t others, auto&& mine, auto&& theirs) {
    TaskGroup g(pool);
    std::exception_ptr error;
    try {
      for (std::size_t t = 0; t < others; ++t) g.run(theirs);
      mine();
    } catch (...) {
      error = std::current_exception();  // still wait: the tasks reference this frame
    }
    g.wait();
    if (error) std::rethrow_exception(error);
  };
  // Wraps a taker: a throw stops the others' claims, then goes on up.
  auto stopping_all = [&failed](auto&& body) {
    try {
      body();
    } catch (...) {
      failed.store(true, std::memory_order_relaxed);  // relaxed: only stops claims sooner
      throw;
    }
  };
  // The claims are relaxed: each hands out chunk numbers only, and the
  // values the chunks produce are read after the join (TaskGroup::wait()),
  // which orders every taker's writes before it.
  auto claim = [&](bool front, std::size_t& c) {
    std::uint64_t w = ends.load(std::memory_order_relaxed);
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return false;
      const std::uint64_t lo = w & 0xffff'ffffu;
      const std::uint64_t hi = w >> 32;
      if (lo >= hi) return false;
      const std::uint64_t next = front ? w + 1 : w - (std::uint64_t{1} << 32);
      if (ends.compare_exchange_weak(w, next, std::memory_order_relaxed)) {
        c = static_cast<std::size_t>(front ? lo : hi - 1);
        if (gate.enter()) return true;
        failed.store(true, std::memory_order_relaxed);  // relaxed: as above; the gate remembers the skip
        return false;
      }
    }
  };
  std::optional<T> carry;  // into the first chunk this thread has not scanned
  std::size_t scanned = 0;
  on_takers(
      std::min(workers - 1, chunks - 1),
      [&] {
        stopping_all([&] {
          if (!gate.enter()) {
            failed.store(true, std::memory_order_relaxed);  // relaxed: as below
            return;
          }
          carry.emplace(scan_first(begin_of(1)));
          scanned = 1;
          for (std::size_t c; claim(true, c); scanned = c + 1) {
            const std::size_t lo = begin_of(c);
            carry.emplace(scan_run<kExclusive>(first + static_cast<Diff>(lo), begin_of(c + 1) - lo,
                                               d_first + static_cast<OutDiff>(lo), std::move(*carry), op));
          }
        });
      },
      [&] {
        stopping_all([&] {
          for (std::size_t c; claim(false, c);)
            totals[c].emplace(fold_run<T>(first + static_cast<Diff>(begin_of(c)),
                                          first + static_cast<Diff>(begin_of(c + 1)), op, identity));
        });
      });
  gate.throw_if_skipped();  // a chunk was skipped: a carry is missing
  // Met without a throw or a stop: every chunk from `scanned` on was folded.
  // Each one's carry, and the rest's, [m, n).
  const std::size_t left = chunks - scanned;
  std::vector<std::optional<T>> carries(left + 1);
  carries[0] = std::move(carry);
  for (std::size_t i = 0; i < left; ++i) carries[i + 1].emplace(op(*carries[i], std::move(*totals[scanned + i])));
  // Pass 2: this thread scans the rest, then with the others the folded chunks.
  std::atomic<std::size_t> next{0};
  auto scan_folded = [&] {
    stopping_all([&] {
      for (;;) {
        if (failed.load(std::memory_order_relaxed)) return;                  // relaxed: as above
        const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);  // relaxed: as the claims
        if (i >= left) return;
        if (!gate.enter()) {
          failed.store(true, std::memory_order_relaxed);  // relaxed: as above
          return;
        }
        const std::size_t lo = begin_of(scanned + i);
        scan_run<kExclusive>(first + static_cast<Diff>(lo), begin_of(scanned + i + 1) - lo,
                             d_first + static_cast<OutDiff>(lo), std::move(*carries[i]), op);
      }
    });
  };
  on_takers(
      std::min(workers - 1, left),
      [&] {
        stopping_all([&] {
          if (!gate.enter()) return;
          scan_run<kExclusive>(first + static_cast<Diff>(m), n - m, d_first + static_cast<OutDiff>(m),
                               std::move(*carries[left]), op);
        });
        scan_folded();
      },
      scan_folded);
  gate.throw_if_skipped();
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
