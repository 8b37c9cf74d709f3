/// @file
/// weft/topo/placement.hpp — which CPU each of N threads should run on.
///
/// A Placement turns a thread count into an ordered list of OS CPU ids taken
/// from a Topology's allowed set:
///   compact       fill a core's SMT siblings, then cores sharing the nearest
///                 cache, then the next package: threads that talk share caches.
///   spread        maximise distance: round-robin over packages, then over the
///                 last-level caches, then cores, and only then SMT siblings.
///   one_per_core  one thread per core, never two on SMT siblings (spread
///                 order); more threads than allowed cores is an error.
///   numa          fill one NUMA node before the next: one thread on each of
///                 its cores (cores sharing caches adjacent), then the cores'
///                 SMT siblings, then the next node: the nodes of the
///                 first CPU's package first, then those of the next package. A pool of up to a node's CPUs stays on one
///                 node, and so does the memory its workers allocate from a
///                 PoolResource (weft/mem/pool_resource.hpp: chunks are placed
///                 on the allocating thread's node).
///   none          no pinning: cpus() returns an empty list.
/// For compact, spread and numa, more threads than allowed CPUs wrap around
/// (thread i gets the CPU of thread i mod CPUs), so every thread has a CPU.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weft/topo/topology.hpp"

namespace weft {

/// Where each of N threads runs: the policies this file's opening comment describes.
enum class Placement { none, compact, spread, one_per_core, numa };

/// "none", "compact", "spread", "one_per_core", "numa".
std::string_view to_string(Placement p) noexcept;
/// Inverse of to_string (also accepts "one-per-core"); throws
/// std::invalid_argument listing the valid names.
Placement parse_placement(std::string_view name);

/// The CPUs for `threads` threads, in thread order. Throws
/// std::invalid_argument for threads < 1, or for one_per_core with more
/// threads than allowed cores (the message gives both numbers).
std::vector<int> place(const Topology& topo, Placement policy, int threads);

}  // namespace weft
