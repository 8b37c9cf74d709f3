/// @file
/// weft/exec/parallel_for.hpp — a body for every index, element or block of
/// a range, in parallel.
///
///   weft::parallel_for(pool, 0, n, [&](int i) { out[i] = work(i); });
///   weft::parallel_for(pool, 0, n, 1024, body);             // grain: split no further than 1024
///   weft::parallel_for(pool, v.begin(), v.end(), [](double& x) { x *= 2; });
///   weft::parallel_for(pool, weft::BlockedRange2d<int>{0, rows, 8, 0, cols, 64},
///                      [&](const weft::BlockedRange2d<int>& b) { ... });  // weft/exec/blocked_range.hpp
///   weft::parallel_for(pool, 0, n, body, weft::static_partition);        // weft/exec/partitioner.hpp
///   weft::parallel_for(pool, 0, n, body, weft::fixed_grain(256), stop);  // stop: a std::stop_token
///   weft::parallel_for(0, n, body);                          // no pool: runs on weft::default_pool()
///
/// Forms: integer indices [first, last) with f(i); random-access iterators
/// [first, last) with f(*it); a BlockedRange2d with f(sub-rectangle). The
/// 1-D forms take an optional grain before the body: a chunk of at most that
/// many is never split (default 1; below 1 means 1). After the body come an
/// optional partitioner (weft::adaptive by default, weft::static_partition,
/// weft::fixed_grain(g); partitioner.hpp says how each splits) and an
/// optional std::stop_token.
///
/// Work spreads by fork-join: a piece split off is handed to the pool (an
/// idle worker takes it) while this thread goes on with the rest. At most
/// the pool's P threads compute: a call from a thread outside the pool
/// computes as one of them while a parked worker sits out (the pool's seat),
/// or, when none is parked or another outside thread is seated, goes to the
/// pool as one task while the caller waits without computing
/// (weft/detail/exec/on_workers.hpp); a call from inside a pool task runs
/// there, even on a pool of one worker, because waits run other tasks.
///
/// Exceptions: every index (element, block) runs even if some throw; the
/// first exception is rethrown when all are done, and the pool stays usable.
///
/// Stopping: once the stop token is requested, no new chunk starts: chunks
/// already running finish, the rest are skipped, and parallel_for returns
/// normally (the caller tells a stopped loop from a finished one by asking
/// its stop_source). A chunk is a run of at most 1024 indices of a 1-D leaf,
/// or one 2-D block; a token requested before the call runs nothing.
///
/// Integer ranges may be any the type can hold (-2e9..2e9 in int, all of
/// uint8_t): the split arithmetic is done on unsigned offsets.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <iterator>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/exec/loop.hpp"
#include "weft/exec/blocked_range.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/partitioner.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

namespace detail {

// The number of indices in [lo, hi), lo <= hi, in the unsigned type of I's
// width: hi - lo in I itself overflows once the range is wider than I's
// maximum (-2e9..2e9 in int), while modulo-2^N subtraction is exact.
template <class I>
constexpr std::make_unsigned_t<I> range_size(I lo, I hi) noexcept {
  using U = std::make_unsigned_t<I>;
  return static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
}

// The index `off` places after `first`, added modulo 2^N so that an offset
// beyond I's maximum (but inside the range) lands where it should.
template <class I>
constexpr I index_at(I first, Offset off) noexcept {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(static_cast<U>(first) + static_cast<U>(off)));
}

// [lo, hi) of I as offsets from lo, with a grain of at least 1.
template <class I>
constexpr Span1 index_span(I lo, I hi, I grain) noexcept {
  const Offset n = lo < hi ? Offset{range_size(lo, hi)} : 0;
  return Span1{0, n, grain < 1 ? Offset{1} : static_cast<Offset>(grain)};
}

}  // namespace detail

///@{
/// f(i) for every i in [first, last), in parallel; grain, partitioner and
/// stop token as this file's opening comment says.
template <std::integral I, class F, class... Opts>
  requires std::invocable<const F&, I> && detail::LoopOptions<Opts...>
void parallel_for(ThreadPool& pool, I first, I last, I grain, const F& f, const Opts&... opts) {
  auto leaf = [first, &f](const detail::Span1& s) {
    detail::visit_all(detail::index_at(first, s.lo), detail::index_at(first, s.hi), f);
  };
  detail::run_loop(pool, detail::index_span(first, last, grain), leaf, opts...);
}

template <std::integral I, class F, class... Opts>
  requires std::invocable<const F&, I> && detail::LoopOptions<Opts...>
void parallel_for(ThreadPool& pool, I first, I last, const F& f, const Opts&... opts) {
  parallel_for(pool, first, last, I{1}, f, opts...);
}
///@}

///@{
/// f(*it) for every element of [first, last), in parallel.
template <std::random_access_iterator It, class F, class... Opts>
  requires std::invocable<const F&, std::iter_reference_t<It>> && detail::LoopOptions<Opts...>
void parallel_for(ThreadPool& pool, It first, It last, std::iter_difference_t<It> grain, const F& f,
                  const Opts&... opts) {
  using Diff = std::iter_difference_t<It>;
  auto leaf = [first, &f](const detail::Span1& s) {
    detail::visit_all(first + static_cast<Diff>(s.lo), first + static_cast<Diff>(s.hi), [&f](const It& it) { f(*it); });
  };
  const detail::Offset n = first < last ? static_cast<detail::Offset>(last - first) : 0;
  detail::run_loop(pool, detail::Span1{0, n, grain < 1 ? detail::Offset{1} : static_cast<detail::Offset>(grain)},
                   leaf, opts...);
}

template <std::random_access_iterator It, class F, class... Opts>
  requires std::invocable<const F&, std::iter_reference_t<It>> && detail::LoopOptions<Opts...>
void parallel_for(ThreadPool& pool, It first, It last, const F& f, const Opts&... opts) {
  parallel_for(pool, first, last, std::iter_difference_t<It>{1}, f, opts...);
}
///@}

/// f(sub) for sub-rectangles that tile `range` (blocked_range.hpp); every
/// block runs even if another threw.
template <std::integral I, class F, class... Opts>
  requires std::invocable<const F&, const BlockedRange2d<I>&> && detail::LoopOptions<Opts...>
void parallel_for(ThreadPool& pool, const BlockedRange2d<I>& range, const F& f, const Opts&... opts) {
  auto leaf = [&range, &f](const detail::Span2& s) {
    const BlockedRange2d<I> sub{detail::index_at(range.row_lo, s.rows.lo), detail::index_at(range.row_lo, s.rows.hi),
                                range.row_grain,
                                detail::index_at(range.col_lo, s.cols.lo), detail::index_at(range.col_lo, s.cols.hi),
                                range.col_grain};
    f(sub);
  };
  const detail::Span2 whole{detail::index_span(range.row_lo, range.row_hi, range.row_grain),
                            detail::index_span(range.col_lo, range.col_hi, range.col_grain)};
  detail::run_loop(pool, whole, leaf, opts...);
}

/// The same on default_pool().
WEFT_ON_DEFAULT_POOL(parallel_for)

}  // namespace weft
