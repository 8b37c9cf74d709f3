// weft/xp/scale.hpp — how weft and oneTBB scale with the number of
// workers, up to every allowed CPU and, oversubscribed, past them.
//
// Workloads (the `workload` label of a row; sizes from the parameters):
//
//   fib     recursive fork-join fib(fib_n), a spawn per call (no cutoff)
//   tasks   `tasks` independent tasks of ~`task_ns` of spin each, spawned
//           in a loop by one task into one task group: a fan-out
//   pfor    one parallel_for over `pfor_n` items of ~`item_ns` of spin
//   reduce  the sum of `reduce_n` doubles (memory-bound)
//   group   `group_tasks` empty tasks spawned by a task per worker (taken
//           by the workers) into one task group: the group's count fed
//           from every worker ("no single hot line")
//   groups  the same, each spawner into a group of its own: what `group`
//           would cost with no shared count; group / groups is the figure
//   (group and groups run only when named: not in the default list)
//
// Variants: weft (a pool of `workers`; the root of each workload runs on a
// worker, so exactly `workers` threads take part) and tbb (oneTBB in a
// task_arena of `workers` slots, the calling thread one of them, with
// global_control raising oneTBB's cap when `workers` exceeds the CPUs).
//
// Worker counts: 1, 2, 4, ... up to the allowed CPUs (harness::usable_cpus,
// included when not a power of two) and, with `oversubscribe` K > 1, on up
// to K times the CPUs; or the explicit `workers` list.
//
// Metrics per (workload, variant, workers): ms per run; speedup, the same
// variant's 1-worker time over this one, paired by round; efficiency,
// speedup / workers. Rows with more workers than CPUs say so in their note.
// Every answer is checked; a wrong one throws rather than becoming a row.
// The result's "ratios" list holds the goals with this run's
// figures (fib's time at the most oversubscribed count over its time at
// the CPU count, weft's time over oneTBB's at the CPU count).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

// The variant names and the workload names, in run order; the workloads
// that run when none are named.
const std::vector<std::string>& scale_variants();
const std::vector<std::string>& scale_workloads();
const std::vector<std::string>& scale_default_workloads();

struct ScaleParams {
  int fib_n = 30;
  std::int64_t tasks = 200'000;
  int task_ns = 2'000;
  std::int64_t pfor_n = 1'000'000;
  int item_ns = 200;
  std::int64_t reduce_n = 20'000'000;
  std::int64_t group_tasks = 1'000'000;
  int oversubscribe = 1;     // K: the ladder goes on to K x the CPUs
  std::vector<int> workers;  // empty: the ladder
  std::vector<std::string> variants = scale_variants();
  std::vector<std::string> workloads = scale_default_workloads();
  int reps = 3;
};

inline constexpr int kScaleMaxFibN = 36;

// 1, 2, 4, ... up to `cpus`, then on to oversubscribe x cpus; each end is
// in the list even when it is not a power of two.
std::vector<int> scale_ladder(int cpus, int oversubscribe);

Result run_scale(const ScaleParams& p);

}  // namespace weft::xp
