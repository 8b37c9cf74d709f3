// weft/xp/fib.hpp — recursive fork-join Fibonacci: the raw cost of a spawn.
//
// Every call with n >= 2 (and n >= cutoff) hands fib(n-1) to its task group
// and computes fib(n-2) itself, then waits; below the cutoff it recurses
// serially. Variants: serial (no tasks), weft (weft::TaskGroup; the root
// runs on a worker), tbb (oneTBB task_group in a task_arena of the same
// thread count). Metrics: ms, and ns per spawned task.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

const std::vector<std::string>& fib_variants();

struct FibParams {
  int n = 30;
  // 0: no cutoff (every call with n >= 2 spawns). Otherwise also measured
  // with calls below the cutoff computed serially.
  int cutoff = 0;
  std::vector<int> workers;  // empty: available_parallelism()
  std::vector<std::string> variants = fib_variants();
  int reps = 5;
};

inline constexpr int kFibMaxN = 40;

// Calls of fib(n) that spawn with the given cutoff (0: none).
std::int64_t fib_spawns(int n, int cutoff);

Result run_fib(const FibParams& p);

}  // namespace weft::xp
