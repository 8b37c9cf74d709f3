// Machines the test host is not, for tests that reason about distance
// (victim rings, placement): built by hand with TopologyBuilder where
// TopologyBuilder::synthetic's one-node-per-package shape is not enough.
#pragma once

#include <cstdint>

#include "weft/detail/topo/builder.hpp"

namespace weft::test {

// 2 packages x 2 NUMA nodes x 8 cores x 2 SMT = 64 CPUs, numbered as Linux
// numbers Intel machines (core c is CPUs {c, c + 32}); private L1d and L2
// per core, an L3 per 4 cores (two per NUMA node). Node n holds cores
// 8n .. 8n + 7; package p holds nodes 2p and 2p + 1.
inline Topology two_packages_four_nodes() {
  constexpr int kCores = 32;
  TopologyBuilder b(CpuSet::parse("0-63"));
  for (int p = 0; p < 2; ++p) {
    CpuSet pkg;
    for (int c = p * 16; c < p * 16 + 16; ++c) pkg |= CpuSet{c, c + kCores};
    b.add_package(pkg);
  }
  for (int n = 0; n < 4; ++n) {
    CpuSet node;
    for (int c = n * 8; c < n * 8 + 8; ++c) node |= CpuSet{c, c + kCores};
    b.add_numa_node(n, std::uint64_t{1} << 34, node);
  }
  for (int c = 0; c < kCores; ++c) {
    b.add_core(CpuSet{c, c + kCores});
    b.add_cache(1, 'D', 48 << 10, 64, CpuSet{c, c + kCores});
    b.add_cache(2, 'U', 1 << 20, 64, CpuSet{c, c + kCores});
  }
  for (int l = 0; l < 8; ++l) {
    CpuSet slice;
    for (int c = l * 4; c < l * 4 + 4; ++c) slice |= CpuSet{c, c + kCores};
    b.add_cache(3, 'U', 32 << 20, 64, slice);
  }
  return b.build();
}

}  // namespace weft::test
