// weft/xp/suite.hpp — `weft suite`: the recursive, irregular benchmarks the
// task runtimes' own suites compare on (fib, skynet, nqueens, integrate,
// matmul, UTS, knapsack), weft's TaskGroup and coroutine forms against
// oneTBB's task_group and OpenMP tasks, with time, speed-up over a serial
// call tree, ns per task at 1 worker and peak memory above serial.
#pragma once

#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

const std::vector<std::string>& suite_variants();
// Every workload --workload accepts; the default runs all but the large
// UTS trees (uts-t1l, uts-t3l: ~100 million nodes each, --full).
const std::vector<std::string>& suite_workloads();
const std::vector<std::string>& suite_default_workloads();

struct SuiteParams {
  std::vector<std::string> workloads = suite_default_workloads();
  int fib_n = 30;         // fib(n): ~1.6^n tasks
  int skynet_depth = 6;   // 10^depth leaves
  int nqueens_n = 12;     // n x n board
  int integrate_n = 1000; // integrate over [0, n]
  int matmul_n = 512;     // n x n floats, a power of two
  std::vector<int> workers;  // empty: 1, 2, ... available_parallelism()
  int oversubscribe = 0;     // also run at this many workers per CPU (0: no)
  std::vector<std::string> variants = suite_variants();
  int memory = 1;  // peak RSS of skynet and the UTS T3 trees, one process per variant and repetition
  int reps = 3;
  // The weft binary whose `suite --internal-child` measures one variant's
  // peak RSS in a fresh process; empty: no memory rows.
  std::string child_exe;
};

Result run_suite(const SuiteParams& p);

// `weft suite --internal-child SPEC`: one run of one variant in this
// process; prints its peak RSS in KiB.
void run_suite_child(const std::string& spec);

}  // namespace weft::xp
