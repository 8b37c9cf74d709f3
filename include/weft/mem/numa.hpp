/// @file
/// weft/mem/numa.hpp — which NUMA node a thread runs on and a page lives on.
///
/// Both ask the kernel, so they are for placement decisions made once (a new
/// chunk of a PoolResource) and for checking placement (tests, diagnostics),
/// not for a hot path. Node ids are the kernel's (NumaNode::os_id of
/// weft/topo/topology.hpp); a machine without NUMA reports node 0.
#pragma once

namespace weft {

/// The node of the CPU the calling thread is running on now (getcpu(2)).
/// Only a hint unless the thread is pinned inside one node: the scheduler
/// may move it right after. -1 if the kernel cannot tell.
[[nodiscard]] int current_numa_node() noexcept;

/// The node of the physical page that holds `p` (move_pages(2) asked where
/// the page is, moving nothing). -1 when the page has never been touched (it
/// has no frame yet) or the kernel refuses to say, e.g. under a seccomp
/// filter that denies move_pages.
[[nodiscard]] int memory_numa_node(const void* p) noexcept;

}  // namespace weft
