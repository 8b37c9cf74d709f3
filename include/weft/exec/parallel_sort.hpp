/// @file
/// weft/exec/parallel_sort.hpp — sort and stable sort in parallel.
///
///   weft::parallel_sort(pool, v.begin(), v.end());
///   weft::parallel_stable_sort(pool, v.begin(), v.end(), [](auto& a, auto& b) { return a.key < b.key; });
///   weft::parallel_sort(pool, v.begin(), v.end(), std::less<>{}, stop);   // stoppable (comp optional)
///
/// Random-access iterators; move-only elements are fine; comp is a strict
/// weak order (std::less<> by default). The results are those of std::sort
/// and std::stable_sort.
///
/// parallel_sort: quicksort whose two sides of each partition run as
/// separate tasks, down to a cutoff below which a range is sorted serially
/// the same way, down to runs of 16 sorted by insertion. The pivot is
/// the median of three medians of three (Tukey's ninther), swapped to the
/// front and kept there while the rest is partitioned, so elements are only
/// ever swapped (never copied). Runs of keys equal to the pivot are handled
/// the pdqsort way: a range whose pivot equals the pivot before it (which
/// bounds every element of the range from below) is split into "equal to
/// it" (done) and "greater", so many duplicates cost O(n), not O(n^2). A
/// range that has split more than 2 log2(n) times is heap-sorted, which
/// bounds the worst case by O(n log n). The partition itself is serial, so
/// the top split costs one pass of n on one thread: on p workers the span
/// is about 2n + (n log n) / p comparisons, like oneTBB's parallel_sort.
///
/// parallel_stable_sort: merge sort over a buffer of n elements (moved
/// into, never default-constructed). The range is halved to 2^L leaves, L
/// odd, so each leaf, sorted in place by std::stable_sort, moves its result
/// into the buffer, and merges alternate between buffer and range, ending
/// in the range. Both halves of a split and both halves of each large merge
/// (split at the larger run's middle, its partner found by binary search)
/// run in parallel. Ties keep their order: a merge takes from the left run
/// first.
///
/// Exceptions from comp (or from moving elements) reach the caller once all
/// running tasks stop; after one from comp the range holds all its elements
/// in some order for parallel_sort (std::sort does not promise that: its
/// insertion phase holds an element outside the range), and unspecified
/// (valid, moved-from) values for the stable sort. The pool stays usable.
/// A call from inside a pool task works, even on one worker.
///
/// Stopping: both take an optional std::stop_token last. A chunk is one
/// partition pass or one serial sort below the cutoff (parallel_sort); one
/// leaf's std::stable_sort or one merge of two runs, split or not
/// (parallel_stable_sort). Once a stop is requested no new chunk starts,
/// and if one was skipped the call throws weft::cancelled. The range then
/// holds all its elements, in some order: for the stable sort, a merge that
/// does not start moves its two runs back from the buffer if they are
/// there, so every element ends in the range. A stop after the last chunk
/// started changes nothing: the range is sorted. A range of fewer than 2
/// elements returns at once, stop or not. An exception from comp (or a
/// move) takes precedence over cancelled.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/exec/on_workers.hpp"
#include "weft/detail/exec/stop_gate.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

namespace detail {

// Below this many elements a range is sorted (or merged) serially: a task
// hand-off must stay a small fraction of the work it carries.
inline constexpr std::ptrdiff_t kSortCutoff = 4096;

template <class It, class Comp>
It median_of_3(It a, It b, It c, Comp& comp) {
  if (comp(*b, *a)) std::swap(a, b);
  if (comp(*c, *b)) b = comp(*c, *a) ? a : c;
  return b;
}

template <class It, class Comp>
It ninther(It lo, It hi, Comp& comp) {
  const auto n = hi - lo;
  const auto s = n / 8;
  const It mid = lo + n / 2;
  return median_of_3(median_of_3(lo, lo + s, lo + 2 * s, comp), median_of_3(mid - s, mid, mid + s, comp),
                     median_of_3(hi - 1 - 2 * s, hi - 1 - s, hi - 1, comp), comp);
}

// One partition pass of [lo, hi), more than 2 elements: the ninther swapped
// to the front as the pivot, then the rest partitioned around it by swaps.
// Returns where the part left to sort below the pivot ends (lo: none) and
// where the part above it begins. has_floor: lo[-1] exists and is not
// greater than any element of the range.
template <class It, class Comp>
std::pair<It, It> partition_step(It lo, It hi, Comp& comp, bool has_floor) {
  std::iter_swap(lo, ninther(lo, hi, comp));
  const auto& pivot = *lo;  // stays at lo: only [lo + 1, hi) moves
  if (has_floor && !comp(lo[-1], pivot)) {
    // Pivot equals the floor: nothing is less than it, so take the run of
    // its equals off the front (they are in place) and go on with the rest.
    return {lo, std::partition(lo + 1, hi, [&](const auto& x) { return !comp(pivot, x); })};
  }
  // Hoare's partition by swaps, unguarded as libstdc++'s: the scan up stops
  // at the sample's larger elements or at an element it swapped down, and
  // the scan down stops at the pivot at lo at the latest. [lo + 1, mid) is
  // then not greater than the pivot, [mid, hi) not less.
  It up = lo + 1;
  It down = hi;
  for (;;) {
    while (comp(*up, pivot)) ++up;
    --down;
    while (comp(pivot, *down)) --down;
    if (!(up < down)) break;
    std::iter_swap(up, down);
    ++up;
  }
  const It mid = up;
  std::iter_swap(lo, mid - 1);  // the pivot to its final place
  return {mid - 1, mid};
}

// serial_sort()'s runs of up to this many elements go to insertion_sort().
inline constexpr std::ptrdiff_t kInsertionSortMax = 16;

template <class It, class Comp>
void insertion_sort(It lo, It hi, Comp& comp) {
  if (hi - lo < 2) return;  // lo + 1 would pass the end (or offset a null iterator)
  for (It i = lo + 1; i < hi; ++i) {
    if (!comp(*i, i[-1])) continue;
    auto held = std::move(*i);
    It j = i;
    try {
      do {
        *j = std::move(j[-1]);
        --j;
      } while (j != lo && comp(held, j[-1]));
    } catch (...) {
      *j = std::move(held);  // the hole takes its element back
      throw;
    }
    *j = std::move(held);
  }
}

template <class It, class Comp>
void sift_down(It lo, std::ptrdiff_t i, std::ptrdiff_t n, Comp& comp) {
  for (std::ptrdiff_t c = 2 * i + 1; c < n; i = c, c = 2 * i + 1) {
    if (c + 1 < n && comp(lo[c], lo[c + 1])) ++c;
    if (!comp(lo[i], lo[c])) return;
    std::iter_swap(lo + i, lo + c);
  }
}

template <class It, class Comp>
void heap_sort(It lo, It hi, Comp& comp) {
  const std::ptrdiff_t n = hi - lo;
  for (std::ptrdiff_t i = n / 2; i-- > 0;) sift_down(lo, i, n, comp);
  for (std::ptrdiff_t end = n - 1; end > 0; --end) {
    std::iter_swap(lo, lo + end);
    sift_down(lo, 0, end, comp);
  }
}

// A leaf's serial sort where comp may throw. std::sort holds an element
// outside the range while its insertion and heap phases shift the others,
// so a comparison that throws then loses that element and leaves another
// twice. Here elements are only swapped, or the one held is put back
// before the throw goes on: after a throw the range holds every element
// once. Partitions as the parallel levels do, runs of up to
// kInsertionSortMax by insertion, and a heap sort by swaps once depth_left
// is spent (O(n log n) at worst).
template <class It, class Comp>
void serial_sort(It lo, It hi, Comp& comp, int depth_left, bool has_floor) {
  while (hi - lo > kInsertionSortMax) {
    if (depth_left-- <= 0) return heap_sort(lo, hi, comp);
    const auto [left_end, right] = partition_step(lo, hi, comp, has_floor);
    if (left_end != lo) serial_sort(lo, left_end, comp, depth_left, has_floor);
    lo = right;
    has_floor = true;  // right[-1] is the pivot (or equals it), bounding [right, hi) from below
  }
  insertion_sort(lo, hi, comp);
}

// Sorts [lo, hi), handing one side of each split to the group. has_floor:
// as partition_step()'s. Each partition pass and the final serial sort
// first ask the gate.
template <class It, class Comp>
void quick_sort(TaskGroup& g, It lo, It hi, Comp& comp, int depth_left, bool has_floor, std::ptrdiff_t cutoff,
                StopGate& gate) {
  while (hi - lo > cutoff && depth_left > 0) {
    if (!gate.enter()) return;
    --depth_left;
    // Not a structured binding: clang 14 cannot capture one.
    const std::pair<It, It> split = partition_step(lo, hi, comp, has_floor);
    if (const It left_end = split.first; left_end != lo) {
      g.run([&g, lo, left_end, &comp, depth_left, has_floor, cutoff, &gate] {
        quick_sort(g, lo, left_end, comp, depth_left, has_floor, cutoff, gate);
      });
    }
    lo = split.second;
    has_floor = true;
  }
  if (!gate.enter()) return;
  // Where neither a comparison nor a move can throw, std::sort has nothing
  // to lose, and its leaves are 4-8 % faster here (10^7 uint64 on 2 vCPUs).
  using V = std::iter_value_t<It>;
  if constexpr (std::is_nothrow_invocable_v<Comp&, std::iter_reference_t<It>, std::iter_reference_t<It>> &&
                std::is_nothrow_move_constructible_v<V> && std::is_nothrow_move_assignable_v<V>)
    std::sort(lo, hi, comp);
  else
    serial_sort(lo, hi, comp, depth_left, has_floor);
}

// Moves the sorted runs [a, a_end) and [b, b_end) into out, merged, stably.
template <class In, class Out, class Comp>
void merge_run(In a, In a_end, In b, In b_end, Out out, Comp& comp) {
  for (; a != a_end && b != b_end; ++out) *out = comp(*b, *a) ? std::move(*b++) : std::move(*a++);
  out = std::move(a, a_end, out);
  std::move(b, b_end, out);
}

template <class In, class Out, class Comp>
void parallel_merge(ThreadPool& pool, In a, In a_end, In b, In b_end, Out out, Comp& comp) {
  const auto na = a_end - a;
  const auto nb = b_end - b;
  if (na + nb <= 4 * kSortCutoff) return merge_run(a, a_end, b, b_end, out, comp);
  // Split the longer run at its middle; the partner's split keeps ties in
  // order: left-run elements go before equal right-run elements.
  In a_mid;
  In b_mid;
  if (na >= nb) {
    a_mid = a + na / 2;
    b_mid = std::lower_bound(b, b_end, *a_mid, comp);
  } else {
    b_mid = b + nb / 2;
    a_mid = std::upper_bound(a, a_end, *b_mid, comp);
  }
  const Out out_mid = out + ((a_mid - a) + (b_mid - b));
  parallel_invoke(
      pool, [&] { parallel_merge(pool, a, a_mid, b, b_mid, out, comp); },
      [&] { parallel_merge(pool, a_mid, a_end, b_mid, b_end, out_mid, comp); });
}

// Sorts [lo, hi) into the range (depth odd) or into buf[0, hi - lo) (depth
// even), `depth` halvings above the leaves. The leaves (depth 0) construct
// every buffer slot, once, and set their flag in built[0, 2^depth); every
// later write to the buffer is an assignment. False if the gate stopped a
// leaf or merge below: the elements are then all in [lo, hi), unsorted.
template <class It, class V, class Comp>
bool merge_sort(ThreadPool& pool, It lo, It hi, V* buf, int depth, bool* built, Comp& comp, StopGate& gate) {
  if (!gate.enter()) return false;
  if (depth == 0) {
    std::stable_sort(lo, hi, comp);
    std::uninitialized_move(lo, hi, buf);
    *built = true;
    return true;
  }
  const auto half = (hi - lo) / 2;
  const std::size_t half_leaves = std::size_t{1} << (depth - 1);
  bool left = false;
  bool right = false;
  parallel_invoke(
      pool, [&] { left = merge_sort(pool, lo, lo + half, buf, depth - 1, built, comp, gate); },
      [&] { right = merge_sort(pool, lo + half, hi, buf + half, depth - 1, built + half_leaves, comp, gate); });
  if (!left || !right || !gate.enter()) {
    // This merge does not run. A run that finished at an even depth sits in
    // the buffer: back to the range with it, as the result promises.
    if (depth % 2 == 1) {
      if (left) std::move(buf, buf + half, lo);
      if (right) std::move(buf + half, buf + (hi - lo), lo + half);
    }
    return false;
  }
  if (depth % 2 == 0)
    parallel_merge(pool, lo, lo + half, lo + half, hi, buf, comp);
  else
    parallel_merge(pool, buf, buf + half, buf + half, buf + (hi - lo), lo, comp);
  return true;
}

// Destroys the buffer slots of the leaves that were built, splitting
// [buf, buf + n) as merge_sort did.
template <class V>
void destroy_built(V* buf, std::ptrdiff_t n, int depth, const bool* built) noexcept {
  if (depth == 0) {
    if (*built) std::destroy(buf, buf + n);
    return;
  }
  const auto half = n / 2;
  destroy_built(buf, half, depth - 1, built);
  destroy_built(buf + half, n - half, depth - 1, built + (std::size_t{1} << (depth - 1)));
}

}  // namespace detail

///@{
/// Sorts [first, last) by comp, not stably: std::sort's result, in parallel
/// (this file's opening comment has the algorithm, exceptions and stopping).
template <std::random_access_iterator It, class Comp = std::less<>>
void parallel_sort(ThreadPool& pool, It first, It last, Comp comp = {}, std::stop_token stop = {}) {
  const auto n = last - first;
  if (n < 2) return;
  // On a worker only (detail/exec/on_workers.hpp): the sort's threads are the pool's.
  detail::on_workers(pool, [&] {
    const std::ptrdiff_t per_piece = n / (16 * static_cast<std::ptrdiff_t>(pool.size()));
    const std::ptrdiff_t cutoff = std::max(detail::kSortCutoff, per_piece);
    const int depth = 2 * static_cast<int>(std::bit_width(static_cast<std::size_t>(n)));
    detail::StopGate gate(std::move(stop));
    TaskGroup g(pool);
    std::exception_ptr mine;
    try {
      detail::quick_sort(g, first, last, comp, depth, false, cutoff, gate);
    } catch (...) {
      mine = std::current_exception();  // still wait: the tasks reference comp and g
    }
    g.wait();  // rethrows a task's exception
    if (mine) std::rethrow_exception(mine);
    gate.throw_if_skipped();
  });
}
template <std::random_access_iterator It>
void parallel_sort(ThreadPool& pool, It first, It last, std::stop_token stop) {
  parallel_sort(pool, first, last, std::less<>{}, std::move(stop));
}
///@}

///@{
/// Sorts [first, last) by comp, keeping equal elements in their order:
/// std::stable_sort's result, in parallel.
template <std::random_access_iterator It, class Comp = std::less<>>
void parallel_stable_sort(ThreadPool& pool, It first, It last, Comp comp = {}, std::stop_token stop = {}) {
  using V = std::iter_value_t<It>;
  const auto n = last - first;
  if (n < 2) return;
  detail::StopGate gate(std::move(stop));
  if (n <= detail::kSortCutoff) {
    if (!gate.enter()) throw cancelled{};
    return std::stable_sort(first, last, comp);
  }
  // Leaves of kSortCutoff / 2 to 2 kSortCutoff elements, at an odd depth.
  int depth = static_cast<int>(std::bit_width(static_cast<std::size_t>(n / detail::kSortCutoff))) - 1;
  if (depth % 2 == 0) ++depth;
  // Slots are raw until a leaf moves into them (V needs no default
  // constructor); `built` says which leaves did, for the failure path.
  auto built = std::make_unique<bool[]>(std::size_t{1} << depth);
  std::allocator<V> alloc;
  const auto slots = static_cast<std::size_t>(n);
  V* buf = alloc.allocate(slots);
  bool sorted = false;
  try {
    // On a worker only (detail/exec/on_workers.hpp): the sort's threads are the pool's.
    sorted = detail::on_workers(
        pool, [&] { return detail::merge_sort(pool, first, last, buf, depth, built.get(), comp, gate); });
  } catch (...) {
    detail::destroy_built(buf, n, depth, built.get());
    alloc.deallocate(buf, slots);
    throw;
  }
  detail::destroy_built(buf, n, depth, built.get());
  alloc.deallocate(buf, slots);
  if (!sorted) throw cancelled{};
}
template <std::random_access_iterator It>
void parallel_stable_sort(ThreadPool& pool, It first, It last, std::stop_token stop) {
  parallel_stable_sort(pool, first, last, std::less<>{}, std::move(stop));
}
///@}

/// The same on default_pool().
WEFT_ON_DEFAULT_POOL(parallel_sort)
WEFT_ON_DEFAULT_POOL(parallel_stable_sort)

}  // namespace weft
