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
/// Design: two passes over p + 1 blocks, p = the pool's workers. Pass 1
/// scans block 0 outright while the others reduce blocks 1..p-1 to their
/// totals (block p's total is never needed); a serial fold of those p
/// totals gives each block its carry-in; pass 2 scans blocks 1..p from
/// their carries. Each pass is p parallel pieces of n/(p+1) elements, so
/// the span is 2n/(p+1): 1.5x the serial speed on 2 workers, (p+1)/2 on p.
/// More, smaller blocks would balance better but read the input more (a
/// reduced block is read twice, block 0 once); with p + 1 the extra work is
/// the least that still keeps every worker busy in both passes. Short
/// ranges (under two blocks of kScanMinBlock elements, i.e. below 32,768)
/// and one-worker pools scan serially. There is no grain argument (unlike
/// oneTBB's parallel_scan): the block count is fixed by the pool's size,
/// so a short range of costly elements is scanned serially.
///
/// Exceptions from op (or the iterators) reach the caller after both passes'
/// running parts stop; the output is then partly written. A call from inside
/// a pool task works, even on one worker.
///
/// Stopping: every form takes an optional std::stop_token last. A chunk is
/// one block of a pass (the whole range when it scans serially). Once a
/// stop is requested no new block starts; if one was skipped, pass 2 does
/// not start and the call throws weft::cancelled, with the output partly
/// written (some prefixes missing: a silent wrong answer otherwise). A stop
/// after the last block started changes nothing. An empty range returns
/// d_first, stop or not. An exception from op takes precedence.
#pragma once

#include <algorithm>
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
#include "weft/exec/thread_pool.hpp"

namespace weft {

namespace detail {

// A block should dwarf a task hand-off and a cache line's false sharing at
// its edges.
inline constexpr std::size_t kScanMinBlock = std::size_t{1} << 14;

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
  const std::size_t blocks = std::min(workers + 1, n / kScanMinBlock);
  auto begin_of = [&](std::size_t b) { return b * (n / blocks) + std::min(b, n % blocks); };
  // carry[b]: block b's total in pass 1, then the carry into block b + 1.
  std::vector<std::optional<T>> carry(blocks - 1);
  auto identity = std::identity{};
  parallel_for(pool, std::size_t{0}, blocks - 1, std::size_t{1}, [&](std::size_t b) {
    if (!gate.enter()) return;
    if (b == 0)
      carry[0].emplace(scan_first(begin_of(1)));
    else
      carry[b].emplace(
          fold_run<T>(first + static_cast<Diff>(begin_of(b)), first + static_cast<Diff>(begin_of(b + 1)), op, identity));
  });
  gate.throw_if_skipped();  // a carry is missing
  for (std::size_t b = 1; b + 1 < blocks; ++b) *carry[b] = op(*carry[b - 1], std::move(*carry[b]));
  parallel_for(pool, std::size_t{1}, blocks, std::size_t{1}, [&](std::size_t b) {
    if (!gate.enter()) return;
    const std::size_t lo = begin_of(b);
    scan_run<kExclusive>(first + static_cast<Diff>(lo), begin_of(b + 1) - lo, d_first + static_cast<OutDiff>(lo),
                         std::move(*carry[b - 1]), op);
  });
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
