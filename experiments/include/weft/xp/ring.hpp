// weft/xp/ring.hpp — the token ring of the inter-thread latency article.
//
// N threads pass one token around a ring; each thread waits on its own flag
// (on its own cache line), clears it and raises the next thread's flag. The
// flag is one of the variants below. Per variant: ns per hop (wall time /
// hops) and CPU ns per hop (process CPU time / hops: what the waiting burns).
// A spinning variant with more threads than CPUs can crawl (each hop waits
// for a scheduler tick); a run that exceeds the time limit is stopped and
// its row says "stopped after X s" with the rate of the hops it completed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/topo/placement.hpp"
#include "weft/xp/result.hpp"

namespace weft::xp {

// condvar, seq_cst, release, pause, atomic_wait, futex, weft
const std::vector<std::string>& ring_flags();

struct RingParams {
  int threads = 2;
  std::vector<std::string> flags = ring_flags();
  // Hops per run; 0 picks per variant: 500,000 for spinning flags and weft,
  // 50,000 for the ones that sleep (condvar, atomic_wait, futex).
  std::int64_t hops = 0;
  int reps = 5;
  Placement placement = Placement::none;
  double time_limit_s = 5.0;  // per run
};

Result run_ring(const RingParams& p);

// The "release" flag's ring of two threads, unpinned: the seconds `hops`
// hops take. `weft tasks` runs it beside the pool's round trips, so that
// its remote round trip is compared with a hop measured in the same run.
// Throws std::runtime_error unless every hop was made within a minute.
double release_ring_seconds(std::int64_t hops);

}  // namespace weft::xp
