// weft/xp/c2c.hpp — core-to-core latency between every pair of allowed CPUs.
//
// Two threads pinned to CPUs a and b bounce one cache line: a writes an odd
// value and waits for the next even one, b answers. One-way latency = round
// trip / 2, the median over samples; pairs are measured round-robin within
// each sample so a host-level move of the vCPUs spreads over all pairs.
#pragma once

#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

struct C2cParams {
  std::vector<int> cpus;   // empty: every allowed CPU
  int round_trips = 20'000;  // per sample
  int samples = 7;
};

// extra: "cpus" (row/column order), "matrix_ns" (one-way ns; null on the
// diagonal), and rows summarising min/max/mean over pairs.
Result run_c2c(const C2cParams& p);

}  // namespace weft::xp
