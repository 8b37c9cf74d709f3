// weft/xp/pfor.hpp — what a parallel_for costs.
//
// Two workloads, each with the variants serial, weft (weft::parallel_for)
// and tbb (tbb::parallel_for in a task_arena of the same thread count):
//
//   spin   `rounds` parallel_for calls of `items` items, each ~`work_ns` of
//          a calibrated spin on a local (not a sleep): per-call overhead
//          against work that is small but not trivial
//   sum    the sum of `sum_n` integers, in blocks of `sum_block` (checked
//          against the serial sum)
//
// Metrics: ms per run, and ns per item.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

const std::vector<std::string>& pfor_variants();

struct PforParams {
  int rounds = 100;
  int items = 1000;
  int work_ns = 1000;
  std::int64_t sum_n = 10'000'000;
  int sum_block = 10'000;
  std::vector<int> workers;  // empty: available_parallelism()
  std::vector<std::string> variants = pfor_variants();
  int reps = 5;
};

Result run_pfor(const PforParams& p);

}  // namespace weft::xp
