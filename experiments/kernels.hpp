// The compute kernels that more than one experiment runs (fib, pfor and
// scale): written once, so that `weft scale`'s curves and the single-count
// experiments measure the same code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "peer_support.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/xp/result.hpp"

namespace weft::xp {

// Waits until `pool`'s workers are up and have run a task, so that a timed
// run does not pay for the threads' start.
inline void start_workers(ThreadPool& pool) {
  pool.post([] {});
  pool.wait_idle();
}

inline std::int64_t fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

// Fork-join fib: fib(n-1) to the task group, fib(n-2) in place, then wait;
// calls below `cutoff` recurse serially (0: every call with n >= 2 spawns).
inline std::int64_t fib_weft(ThreadPool& pool, int n, int cutoff) {
  if (n < 2) return n;
  if (n < cutoff) return fib_serial(n);
  std::int64_t a = 0;
  TaskGroup g{pool};
  g.run([&] { a = fib_weft(pool, n - 1, cutoff); });
  const std::int64_t b = fib_weft(pool, n - 2, cutoff);
  g.wait();
  return a + b;
}

#ifdef WEFT_HAVE_TBB
// The same recursion on oneTBB's task_group.
inline std::int64_t fib_tbb(int n, int cutoff) {
  if (n < 2) return n;
  if (n < cutoff) return fib_serial(n);
  std::int64_t a = 0;
  oneapi::tbb::task_group g;
  g.run([&] { a = fib_tbb(n - 1, cutoff); });
  const std::int64_t b = fib_tbb(n - 2, cutoff);
  g.wait();
  return a + b;
}
#endif

#ifdef WEFT_HAVE_OPENMP
// The same recursion with OpenMP tasks, as OpenMP users write it: fib(n-1)
// a task, fib(n-2) in place, taskwait. Called inside a parallel region by
// one thread of the team (`omp single`); see omp_team().
inline std::int64_t fib_omp(int n, int cutoff) {
  if (n < 2) return n;
  if (n < cutoff) return fib_serial(n);
  std::int64_t a = 0;
#pragma omp task shared(a) firstprivate(n, cutoff)
  a = fib_omp(n - 1, cutoff);
  const std::int64_t b = fib_omp(n - 2, cutoff);
#pragma omp taskwait
  return a + b;
}
#endif

// A dependent chain of multiply-adds on a register: the volatile asm keeps
// the compiler from dropping or folding it, and it touches no memory, so it
// scales with threads the way real compute does.
inline std::uint64_t spin(std::uint64_t iters) noexcept {
  std::uint64_t x = iters;
  for (std::uint64_t i = 0; i < iters; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// Spin iterations that take about `ns` on this thread (best of a few, to
// skip a preempted try).
inline std::uint64_t calibrate_spin(int ns) {
  constexpr std::uint64_t kProbe = 1'000'000;
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 5; ++i) {
    const std::int64_t t0 = thread_cpu_ns();
    spin(kProbe);
    best = std::min(best, thread_cpu_ns() - t0);
  }
  const double per_iter = static_cast<double>(best) / static_cast<double>(kProbe);
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ns / per_iter));
}

}  // namespace weft::xp
