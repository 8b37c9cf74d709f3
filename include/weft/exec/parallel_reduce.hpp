/// @file
/// weft/exec/parallel_reduce.hpp — reduce a range in parallel.
///
///   double s = weft::parallel_reduce(pool, v.begin(), v.end(), 0.0, std::plus<>{});
///   double q = weft::parallel_transform_reduce(pool, v.begin(), v.end(), 0.0, std::plus<>{},
///                                              [](double x) { return x * x; });
///   // index space, no iterators: body(lo, hi) reduces [lo, hi) itself
///   long c = weft::parallel_reduce(pool, 0L, n, 0L, std::plus<>{},
///                                  [&](long lo, long hi) { return count_in(lo, hi); });
///   double t = weft::parallel_reduce(pool, v.begin(), v.end(), 0.0, std::plus<>{}, stop);  // stoppable
///
/// The range is halved recursively down to the grain: the MOST elements a
/// leaf holds (a range of at most `grain` is one leaf, so leaves hold
/// between grain/2 and grain). That is what oneTBB's grainsize means under
/// its simple_partitioner; under its default auto_partitioner grainsize is
/// only a floor (larger ranges may stay whole), and OpenMP's chunk is an
/// exact size. The two halves run in parallel (parallel_invoke: the left
/// one on this thread, the right one offered to idle workers) and their
/// results combine as op(left, right). A leaf folds blocks of 8 elements,
/// each a balanced tree b = op(op(op(t0, t1), op(t2, t3)), op(op(t4, t5),
/// op(t6, t7))), from left to right: op(op(b0, b1), b2)..., then the leftover
/// elements (fewer than 8) one by one, op(acc, t(x)); a leaf shorter than 8
/// is a plain left fold from its first element. The blocks' inner
/// combinations do not wait on the running total, so the CPU overlaps them
/// (a plain left fold waits on one op per element). In the index form a
/// leaf is the body's result. init is combined once, at the root: op(init, tree).
/// `op` must be associative (as for std::reduce); it need not be commutative,
/// since operands are never swapped.
///
/// Determinism: for the same input, op, transform and grain, the result is
/// bitwise the same on every run, whatever the number of workers, the timing
/// or which thread stole what: the split tree depends only on the length of
/// the range and the grain, a leaf's blocks depend only on its length, and
/// every combination happens in tree order. So a floating-point sum gives
/// the same bits on 1 worker or 64 (not the bits of std::accumulate, whose
/// one long left fold is a different tree). This
/// costs nothing extra: the partial results live in the stack frames of the
/// recursion (no per-split allocation beyond the fork-join's task), and no
/// extra pass or buffer is needed. The default grain (grain = 0) is a
/// function of the length alone, for the same reason.
///
/// Requirements: random-access iterators (halving must be O(1)); T is
/// move-constructible and move-assignable, constructible from transform's
/// result, and needs no default constructor.
///
/// Exceptions from op, transform or body reach the caller, after every
/// running part has stopped; the pool stays usable. A call from inside a
/// pool task works (waits help run other tasks), even on one worker.
///
/// Stopping: every form takes an optional std::stop_token last (after the
/// grain, if one is given). Once a stop is requested no new leaf starts and
/// no node splits further; running leaves finish. If any leaf was skipped
/// the call throws weft::cancelled (a partial result would be a silent
/// wrong answer); a stop that came after the last leaf started changes
/// nothing, and the result is returned. A token already stopped runs no
/// leaf. An empty range has no leaf: it returns init, stop or not. An
/// exception from op, transform or body takes precedence over cancelled.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/exec/on_workers.hpp"
#include "weft/detail/exec/stop_gate.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

namespace detail {

// A leaf should be worth a task hand-off (~1 us of cheap ops) ...
inline constexpr std::size_t kReduceMinGrain = 2048;
// ... and a long range splits into about this many leaves: 8 or more per
// worker up to 32 workers, so uneven leaves still balance.
inline constexpr std::size_t kReduceLeaves = 256;

// A function of n alone, never of the pool size: see "Determinism".
constexpr std::size_t reduce_grain(std::size_t n, std::size_t grain) noexcept {
  if (grain > 0) return grain;
  const std::size_t even = n / kReduceLeaves + (n % kReduceLeaves != 0);
  return even > kReduceMinGrain ? even : kReduceMinGrain;
}

// A leaf folds blocks of this many elements, each as a balanced tree: the
// tree's inner combinations are independent of the running total, so the
// CPU overlaps them, where a plain left fold waits on one op per element.
inline constexpr std::size_t kFoldBlock = 8;

// ((x0 x1)(x2 x3))((x4 x5)(x6 x7)) over t(x) of the kFoldBlock elements at p.
template <class T, class It, class Op, class Transform>
T fold_block(It p, Op& op, Transform& transform) {
  auto pair = [&](std::iter_difference_t<It> i) -> T { return op(static_cast<T>(transform(p[i])), transform(p[i + 1])); };
  T low = op(pair(0), pair(2));
  T high = op(pair(4), pair(6));
  return op(std::move(low), std::move(high));
}

// A leaf's fold of the non-empty [it, end): op(acc, block) for each whole
// block of kFoldBlock elements, acc starting from the first block, then
// op(acc, t(x)) for each element of the tail. A leaf shorter than a block
// is a plain left fold from t(x0).
template <class T, class It, class Op, class Transform>
T fold_run(It it, const It end, Op& op, Transform& transform) {
  constexpr auto kWidth = static_cast<std::iter_difference_t<It>>(kFoldBlock);
  auto first = [&]() -> T {
    if (end - it < kWidth) return static_cast<T>(transform(*it++));
    T block = fold_block<T>(it, op, transform);
    it += kWidth;
    return block;
  };
  T acc = first();
  for (; end - it >= kWidth; it += kWidth) acc = op(std::move(acc), fold_block<T>(it, op, transform));
  for (; it != end; ++it) acc = op(std::move(acc), transform(*it));
  return acc;
}

// Reduces the non-empty [lo, hi): leaf(lo, hi) at or below the grain, else
// the two halves in parallel, combined as op(left, right). Empty once the
// gate is stopped before a leaf or a split: the skip reaches the root.
template <class T, class Leaf, class Op>
std::optional<T> reduce_tree(ThreadPool& pool, std::size_t lo, std::size_t hi, std::size_t grain, Leaf& leaf, Op& op,
                             StopGate& gate) {
  if (!gate.enter()) return std::nullopt;
  if (hi - lo <= grain) return leaf(lo, hi);
  const std::size_t mid = lo + (hi - lo) / 2;
  std::optional<T> left;
  std::optional<T> right;
  parallel_invoke(
      pool, [&] { left = reduce_tree<T>(pool, lo, mid, grain, leaf, op, gate); },
      [&] { right = reduce_tree<T>(pool, mid, hi, grain, leaf, op, gate); });
  if (!left || !right) return std::nullopt;
  return op(std::move(*left), std::move(*right));
}

template <class T, class Leaf, class Op>
T reduce_root(ThreadPool& pool, std::size_t n, std::size_t grain, T init, Leaf& leaf, Op& op, std::stop_token stop) {
  if (n == 0) return init;
  // On a worker only (on_workers.hpp): the tree's threads are the pool's.
  return on_workers(pool, [&]() -> T {
    StopGate gate(std::move(stop));
    std::optional<T> tree = reduce_tree<T>(pool, 0, n, reduce_grain(n, grain), leaf, op, gate);
    if (!tree) throw cancelled{};
    return op(std::move(init), std::move(*tree));
  });
}

}  // namespace detail

///@{
/// op(init, op(op(t(x0), t(x1)), ...)) in the fixed tree order described above.
template <std::random_access_iterator It, class T, class Reduce, class Transform>
T parallel_transform_reduce(ThreadPool& pool, It first, It last, T init, Reduce reduce, Transform transform,
                            std::size_t grain = 0, std::stop_token stop = {}) {
  using Diff = std::iter_difference_t<It>;
  auto leaf = [&](std::size_t lo, std::size_t hi) {
    return detail::fold_run<T>(first + static_cast<Diff>(lo), first + static_cast<Diff>(hi), reduce, transform);
  };
  const auto n = static_cast<std::size_t>(last - first);
  return detail::reduce_root<T>(pool, first < last ? n : 0, grain, std::move(init), leaf, reduce, std::move(stop));
}
template <std::random_access_iterator It, class T, class Reduce, class Transform>
T parallel_transform_reduce(ThreadPool& pool, It first, It last, T init, Reduce reduce, Transform transform,
                            std::stop_token stop) {
  return parallel_transform_reduce(pool, first, last, std::move(init), std::move(reduce), std::move(transform), 0,
                                   std::move(stop));
}
///@}

///@{
/// op(init, op(op(x0, x1), ...)) in the fixed tree order described above.
template <std::random_access_iterator It, class T, class Reduce>
T parallel_reduce(ThreadPool& pool, It first, It last, T init, Reduce reduce, std::size_t grain = 0,
                  std::stop_token stop = {}) {
  return parallel_transform_reduce(pool, first, last, std::move(init), std::move(reduce), std::identity{}, grain,
                                   std::move(stop));
}
template <std::random_access_iterator It, class T, class Reduce>
T parallel_reduce(ThreadPool& pool, It first, It last, T init, Reduce reduce, std::stop_token stop) {
  return parallel_reduce(pool, first, last, std::move(init), std::move(reduce), 0, std::move(stop));
}
///@}

///@{
/// Index space: body(lo, hi) returns the reduction of [lo, hi), a sub-range
/// of at most `grain` indices; results combine as above.
template <std::integral I, class T, class Reduce, class Body>
  requires std::invocable<Body&, I, I>
T parallel_reduce(ThreadPool& pool, I first, I last, T init, Reduce reduce, Body body, std::size_t grain = 0,
                  std::stop_token stop = {}) {
  using U = std::make_unsigned_t<I>;
  // Offsets are added in the unsigned type: the range may be wider than I's positive half.
  auto at = [first](std::size_t off) { return static_cast<I>(static_cast<U>(static_cast<U>(first) + static_cast<U>(off))); };
  auto leaf = [&](std::size_t lo, std::size_t hi) -> T { return body(at(lo), at(hi)); };
  const std::size_t n = first < last ? static_cast<std::size_t>(static_cast<U>(last) - static_cast<U>(first)) : 0;
  return detail::reduce_root<T>(pool, n, grain, std::move(init), leaf, reduce, std::move(stop));
}
template <std::integral I, class T, class Reduce, class Body>
  requires std::invocable<Body&, I, I>
T parallel_reduce(ThreadPool& pool, I first, I last, T init, Reduce reduce, Body body, std::stop_token stop) {
  return parallel_reduce(pool, first, last, std::move(init), std::move(reduce), std::move(body), 0, std::move(stop));
}
///@}

/// The same on default_pool().
WEFT_ON_DEFAULT_POOL(parallel_reduce)
WEFT_ON_DEFAULT_POOL(parallel_transform_reduce)

}  // namespace weft
