// weft/detail/topo/builder.hpp — assemble a Topology by hand.
//
// Discovery feeds what hwloc reports through this builder, and tests use it
// to describe machines the test host is not (several packages, SMT, split
// last-level caches), which is the only way to check placement orders on a
// small machine. Not part of the stable API.
#pragma once

#include <cstdint>
#include <string>

#include "weft/topo/topology.hpp"

namespace weft {

struct TopologyBuilder {
  explicit TopologyBuilder(CpuSet allowed);

  // Every CPU set is intersected with the allowed set first; an object left
  // with no CPU is dropped, since the process can never run there.
  void add_package(const CpuSet& cpus);
  void add_numa_node(int os_id, std::uint64_t memory_bytes, const CpuSet& cpus);
  void add_core(const CpuSet& cpus);
  // `type` is 'D', 'I' or 'U'; instruction caches are dropped because
  // placement only reasons about where data lives.
  void add_cache(int level, char type, std::uint64_t size_bytes, int line_bytes, const CpuSet& cpus);
  void set_cpu_model(std::string model);
  void set_source(std::string source);
  void set_warning(std::string warning);

  // Completes the topology. Packages, cores and NUMA nodes are ordered by
  // first CPU (NUMA nodes by os id), caches by level then first CPU, and a
  // CPU claimed by two objects of one kind stays with the first. Allowed
  // CPUs that no package covers share one extra package, and those that no
  // core covers become a core each, so every allowed CPU has a Pu with a
  // valid core and package; with no NUMA node at all, one node (os id 0)
  // holds every CPU.
  Topology build();

  // A regular machine: `packages` x `cores_per_package` x `threads_per_core`,
  // numbered the way Linux numbers Intel machines — first the first thread of
  // every core (package 0's cores, then package 1's, ...), then every core's
  // second thread, and so on — so SMT siblings are not adjacent ids (2x4x2:
  // core 0 is {0,8}, core 4 is {4,12}). Each core has a 48 KiB L1d and a
  // 1 MiB L2; each package has `llcs_per_package` L3 slices of 32 MiB over
  // consecutive cores, and is one NUMA node. Throws std::invalid_argument for
  // counts < 1, more than CpuSet::kMaxCpus CPUs, or cores that do not divide
  // evenly among the L3 slices.
  static Topology synthetic(int packages, int cores_per_package, int threads_per_core,
                            int llcs_per_package = 1);
  // The same machine seen by a process allowed only `allowed`.
  static Topology synthetic(int packages, int cores_per_package, int threads_per_core,
                            int llcs_per_package, const CpuSet& allowed);

 private:
  Topology topo_;
};

}  // namespace weft
