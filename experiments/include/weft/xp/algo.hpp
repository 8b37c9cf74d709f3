// weft/xp/algo.hpp — weft's parallel algorithms against the standard
// library's (serial and std::execution::par) and oneTBB's.
//
// Workloads (the `workload` label of a row; sizes from the parameters):
//
//   reduce             sum of `n` doubles
//   transform-reduce   sum of the squares of `n` doubles
//   inclusive-scan     prefix sums of `n` int64
//   exclusive-scan     the same, each sum without its own element
//   sort-u64           sort of `sort_n` random uint64
//   sort-f64           sort of `sort_n` random doubles
//   stable-sort        stable sort of `sort_n` (key, index) pairs by key,
//                      keys with many duplicates
//   find-half          find_if over `n` uint64, the match at n/2
//   find-end           the same, the match at the last element
//   pipeline           `pipeline_n` items: serial read, parallel ~1 us
//                      transform, serial in-order write (std-par: none)
//
// Variants: serial (the std algorithm, no policy), std-par
// (std::execution::par: libstdc++ runs it on oneTBB), tbb (oneTBB's
// algorithm), tbb-deterministic (parallel_deterministic_reduce: the
// reductions only), openmp (`omp parallel for` with reduction(+:), and
// reduction(inscan) with `omp scan` for the scans; no sort, no pipeline)
// and weft. Every answer is checked against the serial one; a wrong answer
// throws rather than becoming a row.
//
// Threads: weft runs on a pool of `workers`, each call as a task on a
// worker while the caller waits; openmp in a team of `workers`, the calling
// thread its master; tbb, tbb-deterministic and std-par inside a task_arena
// of `workers` slots. libstdc++'s oneTBB backend runs every parallel
// algorithm in this_task_arena::isolate, that is in the caller's arena, so
// the arena bounds std-par too (outside one it would take oneTBB's default
// arena, one thread per allowed CPU); params std_par_threads_seen says how
// many threads it really ran on.
//
// Metrics: ms per run; speedup (the serial run of the same round over the
// variant's); for the reductions, deterministic (1 when `det_runs` runs at
// each of `det_workers` workers all gave one bit pattern, else 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

// The variant names, and the workload names in run order.
const std::vector<std::string>& algo_variants();
const std::vector<std::string>& algo_workloads();

struct AlgoParams {
  std::int64_t n = 50'000'000;       // reduce, transform-reduce, the scans, find-*
  std::int64_t sort_n = 10'000'000;  // sort-u64, sort-f64, stable-sort
  std::int64_t pipeline_n = 1'000'000;  // pipeline
  int det_runs = 20;
  std::vector<int> det_workers = {1, 2, 4};
  std::vector<int> workers;  // empty: available_parallelism()
  std::vector<std::string> variants = algo_variants();
  std::vector<std::string> workloads = algo_workloads();
  int reps = 5;
};

Result run_algo(const AlgoParams& p);

}  // namespace weft::xp
