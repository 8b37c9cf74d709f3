// weft/detail/exec/victim_rings.hpp — whom a thief tries first.
//
// A worker looking for work tries the other workers in rings of growing
// topology distance: the nearer a victim, the more of the stolen task's
// data is likely in a cache the thief shares (and on a big machine, the
// cheaper the cache-line transfers of the steal itself). Rings, nearest
// first (StealRing, weft/exec/pool_stats.hpp):
//
//   ring     the victim's CPU ...
//   smt      is on the thief's core (an SMT sibling, or the same CPU)
//   l2       shares a cache of level <= 2 with it, on another core
//   l3       shares a cache of level >= 3 with it
//   numa     shares no cache but is in the thief's NUMA node
//   remote   is in another NUMA node, or either CPU is unknown (-1)
//
// Random within a ring (no victim is everyone's first choice), and a thief
// goes one ring farther only after the rings it already searches came up
// empty for kEmptyRoundsPerRing searches in a row (PoolCore::steal_any()).
#pragma once

#include <array>
#include <vector>

#include "weft/exec/pool_stats.hpp"
#include "weft/topo/topology.hpp"

namespace weft::detail {

// The ring of `victim_cpu` seen from `thief_cpu` (OS ids, -1 unknown).
StealRing ring_between(const Topology& topo, int thief_cpu, int victim_cpu) noexcept;

// The other workers of a pool grouped by ring from worker `self`, each ring
// in worker order; `cpus[i]` is where worker i runs (-1 unknown).
using VictimRings = std::array<std::vector<int>, kStealRings>;
VictimRings victim_rings(const Topology& topo, const std::vector<int>& cpus, int self);

}  // namespace weft::detail
