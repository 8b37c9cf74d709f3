// weft/xp/smt.hpp — threads, affinity and hyperthreading (Bendersky 2016: affinity and hyperthreading).
//
// Two workloads over a float array, each thread summing its own array:
// `sum` (a dependent chain of float adds: latency-bound, leaves most of the
// core's execution units idle) and `sin` (a sum of std::sin: keeps the
// floating-point units busy). Each runs
//   single        one thread, pinned to one CPU;
//   two-cores     two threads pinned to CPUs of two different cores;
//   smt-siblings  two threads pinned to two SMT siblings of one core;
//   same-cpu      two threads pinned to the same logical CPU (time-sliced).
// A thread's time runs from the common start to its own finish; `ms` is the
// mean over the run's threads (per-thread time), `slowdown` that time over
// the single thread's time of the same repetition. A variant the allowed
// CPUs cannot host (no SMT siblings, or a single CPU) is a row with
// measured=false saying why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

// single, two-cores, smt-siblings, same-cpu
const std::vector<std::string>& smt_variants();
// sum, sin
const std::vector<std::string>& smt_workloads();

struct SmtParams {
  std::int64_t size = 100'000'000;  // floats per thread (the article's figure)
  int reps = 3;
};

// Bytes the run allocates: one array per thread, two threads.
std::uint64_t smt_bytes_needed(std::int64_t size) noexcept;
// Physical memory of the machine (sysconf), 0 when unknown.
std::uint64_t physical_memory_bytes() noexcept;

Result run_smt(const SmtParams& p);

}  // namespace weft::xp
