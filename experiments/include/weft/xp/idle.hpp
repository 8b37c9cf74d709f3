// weft/xp/idle.hpp — what a pool burns when it has (almost) nothing to do.
//
// Per variant (weft, tbb: task_arena::enqueue, asio-post, article-pool, and
// baseline: the measuring thread alone), in a fresh pool each time:
//
//   cpu_ms_idle_1s   process CPU time while the pool sits idle (after one
//                    warm-up task), scaled to 1 s
//   cpu_ms_tick_2s   process CPU time while one trivial task is posted every
//                    1 ms (baseline: run in place), scaled to 2 s
//   cpu_ms_tick_pool_2s    of that, the pool's own threads: the process's
//                          CPU less the posting thread's, in the same run
//   cpu_ms_tick_poster_2s  the posting thread's: its sleeps, its post()
//                          calls (where a pool's wake-up system call is
//                          made) and its wait for the last task
//   start_latency_us      in that phase, the time from post to the start of
//                         the task: the median over the run's tasks
//   start_latency_p99_us  the same, the 99th percentile
//
// Together they show the trade a spinning pool makes: CPU burnt while idle
// against a sleeping worker's wake-up latency.
//
// Process CPU time counts every thread, including ones a previous variant
// left behind (oneTBB keeps its workers for the life of the process), so
// each measurement can run in a child process of its own: run_idle() re-runs
// `child_exe idle --internal-child <spec>`, which calls run_idle_child().
#pragma once

#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

const std::vector<std::string>& idle_variants();

struct IdleParams {
  double seconds = 1.0;  // the idle phase; the tick phase lasts twice as long
  int workers = 0;       // 0: available_parallelism()
  std::vector<std::string> variants = idle_variants();
  int reps = 3;
  // The weft CLI to re-run per measurement; empty: measure in this process.
  std::string child_exe;
};

Result run_idle(const IdleParams& p);

// The child's side: measures the spec run_idle() passed and prints one line
// for it to stdout. Returns the exit status.
int run_idle_child(const std::string& spec);

}  // namespace weft::xp
