/// @file
/// weft/exec/parallel_find.hpp — the first element that satisfies a
/// predicate, searched in parallel.
///
///   auto it = weft::parallel_find_if(pool, v.begin(), v.end(), [](int x) { return x < 0; });
///   bool any = weft::parallel_any_of(pool, v.begin(), v.end(), is_bad);
///   auto at = weft::parallel_find_if(pool, v.begin(), v.end(), is_bad, stop);   // stoppable
///
/// The answer is std::find_if's: the first match in order, or last. The
/// search stops early: searchers (the pool's workers and the calling thread)
/// claim blocks in increasing order from one shared cursor, and give up as
/// soon as a match is known before the position they would look at next. So
/// an early match costs few predicate calls whatever the length: blocks
/// start at kFindMinBlock elements and grow with their position (about
/// 1/16 of it, up to kFindMaxBlock), which bounds the calls made beyond a
/// match at index m by about searchers * (kFindMinBlock + m / 16), while a
/// long search pays one claim per block. Within a block a searcher checks
/// the best match known once per step of kFindStep (4096) elements, so it
/// stops at most a step after a match before its position is published;
/// a step never crosses its block's end, so the bound above stays.
///
/// Exceptions: a predicate that throws for element i counts as a "match" at
/// i; if the first match in order is such an element, its exception reaches
/// the caller, exactly as std::find_if would have thrown it (the serial
/// search would have stopped there), and if a real match comes first the
/// exception is dropped. The pool stays usable. A call from inside a pool
/// task works, even on one worker.
///
/// Stopping: both take an optional std::stop_token last. A chunk is a
/// block: once a stop is requested no searcher claims another one, and the
/// blocks already claimed are searched to their end (or to a known earlier
/// match). Blocks are claimed in order, so everything before the first
/// skipped block was searched: a match found there is std::find_if's
/// answer, and is returned (any_of: true) even though the search stopped.
/// Only when no match was found and a block was skipped is the answer
/// unknown: the call throws weft::cancelled. A token already stopped
/// searches nothing (so throws, unless the range is empty: last).
///
/// Memory ordering: the cursor and the best index are relaxed; each is one
/// word whose value alone matters, and the result is read after the group's
/// wait(), which orders every searcher's writes before it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <iterator>
#include <memory>
#include <stop_token>
#include <type_traits>
#include <utility>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/exec/on_workers.hpp"
#include "weft/detail/exec/stop_gate.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

namespace detail {

inline constexpr std::size_t kFindMinBlock = 256;
// 512 Ki elements (4 MiB of uint64): a long search's searchers each stream
// through a few MiB before they claim again, as OpenMP's dynamic blocks of
// n / (64 x threads) do. With 64 Ki, 50 M uint64 on 2 vCPUs of an AMD EPYC
// (Zen 5) took 8.2-9.5 ms to the end against OpenMP's 7.2-7.4; with 512 Ki
// 7.4-7.6 (3 interleaved runs each). A block is still at most 1/16 of its
// position, so an early match costs no more calls.
inline constexpr std::size_t kFindMaxBlock = std::size_t{1} << 19;
// A searcher reads the best index once per this many elements, not per
// element: the step's loop is a plain serial search the compiler unrolls.
// A step of 256 uint64 (2 KB, ~140 ns of a memory-bound scan) spent ~4% of
// a scan of 50 M on the check and the step's set-up: find-end on 2 vCPUs
// of an AMD EPYC took 14.2 ms against 13.5 with 4096 (oneTBB, OpenMP and
// std::execution::par 13.7-13.9, interleaved).
inline constexpr std::size_t kFindStep = 4096;

struct FindCursor {
  std::size_t n;
  // First unclaimed index; every searcher claims through it, in order.
  alignas(kCacheLine) std::atomic<std::size_t> next{0};
  // Smallest index known to match (or throw); n while none is. Written
  // only when a match is found, read before every step of kFindStep calls.
  alignas(kCacheLine) std::atomic<std::size_t> best;

  explicit FindCursor(std::size_t len) : n(len), best(len) {}

  // Claims the next block, [lo, hi); false once none is left that could
  // hold an earlier match than the best known, or the gate is stopped.
  bool claim(std::size_t& lo, std::size_t& hi, StopGate& gate) noexcept {
    lo = next.load(std::memory_order_relaxed);  // relaxed: see the header
    do {
      if (lo >= best.load(std::memory_order_relaxed)) return false;  // relaxed: see the header
      if (!gate.enter()) return false;
      hi = lo + std::clamp(lo / 16, kFindMinBlock, kFindMaxBlock);
      if (hi > n) hi = n;
    } while (!next.compare_exchange_weak(lo, hi, std::memory_order_relaxed));  // relaxed: see the header
    return true;
  }

  void found(std::size_t i) noexcept {
    std::size_t cur = best.load(std::memory_order_relaxed);  // relaxed: see the header
    while (i < cur && !best.compare_exchange_weak(cur, i, std::memory_order_relaxed)) {
    }
  }
};

// One searcher's throw: the first one it met (it stops there).
struct FindError {
  std::size_t at = 0;
  std::exception_ptr error;
};

// Advances i over [i, stop) to the first element pred holds for (stop if
// none), four calls per bound check as libstdc++'s std::find_if does; on
// one worker that is ~10% faster than a check per call. i moves one call at
// a time, so when pred throws, i is the element it threw for.
template <class It, class Pred>
void find_in_step(It first, std::size_t& i, std::size_t stop, Pred& pred) {
  auto at = [first](std::size_t k) -> decltype(auto) { return first[static_cast<std::iter_difference_t<It>>(k)]; };
  while (stop - i >= 4) {
    if (pred(at(i))) return;
    ++i;
    if (pred(at(i))) return;
    ++i;
    if (pred(at(i))) return;
    ++i;
    if (pred(at(i))) return;
    ++i;
  }
  while (i < stop && !pred(at(i))) ++i;
}

template <class It, class Pred>
void find_search(FindCursor& c, It first, Pred& pred, FindError& err, StopGate& gate) noexcept {
  std::size_t lo = 0;
  std::size_t hi = 0;
  while (c.claim(lo, hi, gate)) {
    for (std::size_t step = lo; step < hi; step += kFindStep) {
      if (c.best.load(std::memory_order_relaxed) < step) return;  // relaxed: see the header
      const std::size_t stop = std::min(hi, step + kFindStep);
      std::size_t i = step;
      try {
        find_in_step(first, i, stop, pred);
      } catch (...) {
        err = {i, std::current_exception()};
      }
      if (i < stop) {
        c.found(i);  // every later block starts past i: this searcher is done
        return;
      }
    }
  }
}

// The search, on a worker of `pool` (parallel_find_if() puts it there).
template <std::random_access_iterator It, class Pred>
It find_if_here(ThreadPool& pool, It first, It last, Pred& pred, std::stop_token stop) {
  const auto n = static_cast<std::size_t>(last - first);
  detail::FindCursor cursor(n);
  detail::StopGate gate(std::move(stop));
  // Searchers beside this worker: every other worker, no more than there
  // are first-size blocks.
  const std::size_t others = std::min(static_cast<std::size_t>(pool.size()) - 1, n / detail::kFindMinBlock);
  auto errors = std::make_unique<detail::FindError[]>(others + 1);
  {
    TaskGroup g(pool);
    std::exception_ptr spawn_error;
    try {
      for (std::size_t s = 1; s <= others; ++s)
        g.run([&cursor, first, &pred, &err = errors[s], &gate] {
          detail::find_search(cursor, first, pred, err, gate);
        });
    } catch (...) {
      spawn_error = std::current_exception();  // still search and wait: tasks may be running
    }
    detail::find_search(cursor, first, pred, errors[0], gate);
    g.wait();
    if (spawn_error) std::rethrow_exception(spawn_error);
  }
  const std::size_t best = cursor.best.load(std::memory_order_relaxed);  // relaxed: wait() ordered the writes
  for (std::size_t s = 0; s <= others; ++s)
    if (errors[s].error && errors[s].at == best) std::rethrow_exception(errors[s].error);
  if (best == n) gate.throw_if_skipped();  // no match in what was searched, and not all of it was
  return first + static_cast<std::iter_difference_t<It>>(best);
}

}  // namespace detail

/// The first element in order for which pred is true, or `last`, searched
/// in parallel (std::find_if's answer; this file's opening comment has the
/// early exit, exceptions and stopping).
template <std::random_access_iterator It, class Pred>
It parallel_find_if(ThreadPool& pool, It first, It last, Pred pred, std::stop_token stop = {}) {
  if (!(first < last)) return last;
  // On a worker only (detail/exec/on_workers.hpp): the searchers are the pool's threads.
  return detail::on_workers(pool, [&] { return detail::find_if_here(pool, first, last, pred, std::move(stop)); });
}

/// Whether pred is true for some element: parallel_find_if(...) != last.
template <std::random_access_iterator It, class Pred>
bool parallel_any_of(ThreadPool& pool, It first, It last, Pred pred, std::stop_token stop = {}) {
  return parallel_find_if(pool, first, last, std::move(pred), std::move(stop)) != last;
}

/// The same on default_pool().
WEFT_ON_DEFAULT_POOL(parallel_find_if)
WEFT_ON_DEFAULT_POOL(parallel_any_of)

}  // namespace weft
