// weft/exec/parallel_for.hpp — f(i) for every i in [first, last), in parallel.
//
//   weft::parallel_for(pool, 0, n, [&](int i) { out[i] = work(i); });
//   weft::parallel_for(pool, 0, n, 1024, body);   // chunks of at least 1024
//
// The range is split in halves, recursively, down to the grain; one half is
// handed to the pool (a thief takes it) while this thread carries on with
// the other, so work spreads only as fast as idle workers ask for it. The
// default grain gives each worker about 8 chunks: enough to balance uneven
// iterations, few enough that splitting costs little. The calling thread
// runs part of the range itself, whether or not it is a worker.
//
// Every index runs exactly once, even if some throw; the first exception is
// rethrown when all are done. Index is any integral type, and the range
// may be any that the type can hold (-2e9..2e9 in int, all of uint8_t).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <exception>
#include <type_traits>

#include "weft/exec/task_group.hpp"
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

template <class I, class F>
void split_range(TaskGroup& g, I lo, I hi, I grain, const F& f) {
  using U = std::make_unsigned_t<I>;
  // grain >= 1 (parallel_for clamps it), so it fits U.
  while (range_size(lo, hi) > static_cast<U>(grain)) {
    // Half the size is at most I's maximum, and lo + half lies in [lo, hi].
    const I mid = static_cast<I>(lo + static_cast<I>(range_size(lo, hi) / 2));
    g.run([&g, mid, hi, grain, &f] { split_range(g, mid, hi, grain, f); });
    hi = mid;
  }
  // Every index runs even if an earlier one threw; the first error wins.
  std::exception_ptr first_error;
  for (I i = lo; i < hi; ++i) {
    try {
      f(i);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace detail

template <std::integral I, class F>
void parallel_for(ThreadPool& pool, I first, I last, I grain, const F& f) {
  if (!(first < last)) return;
  if (grain < 1) grain = 1;
  TaskGroup g(pool);
  std::exception_ptr mine;
  try {
    detail::split_range(g, first, last, grain, f);
  } catch (...) {
    mine = std::current_exception();  // still wait: tasks reference f and g
  }
  g.wait();  // rethrows a task's exception
  if (mine) std::rethrow_exception(mine);
}

template <std::integral I, class F>
void parallel_for(ThreadPool& pool, I first, I last, const F& f) {
  if (!(first < last)) return;
  // In 64 bits: the chunk count overflows a small I (32 workers x 8 is
  // 256). The grain is at most size / 8, so it fits I even when signed.
  const std::uint64_t chunks = std::uint64_t{static_cast<unsigned>(std::max(pool.size(), 1))} * 8;
  const std::uint64_t grain = std::max<std::uint64_t>(detail::range_size(first, last) / chunks, 1);
  parallel_for(pool, first, last, static_cast<I>(grain), f);
}

}  // namespace weft
