/// @file
/// weft/topo/topology.hpp — the machine as this process may use it.
///
/// Topology is discovered once through hwloc and restricted to the CPUs this
/// process may run on (its affinity mask, which cgroup cpusets and `taskset`
/// narrow). Objects outside that set are dropped; caches and cores keep only
/// their allowed CPUs. If hwloc cannot load the machine, a flat topology is
/// built from sched_getaffinity (one package, one NUMA node, one core per CPU,
/// no caches) and `warning()` says why. Discovery never throws for a machine
/// it cannot parse; it throws std::system_error only if even the affinity
/// mask cannot be read.
///
/// No hwloc type appears here: hwloc is included by one source file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/topo/cpu_set.hpp"

namespace weft {

/// A logical CPU (hardware thread).
struct Pu {
  int os_id = -1;           ///< the id the kernel uses (sched_getcpu, taskset)
  int core = -1;            ///< index into Topology::cores()
  int package = -1;         ///< index into Topology::packages()
  int numa = -1;            ///< index into Topology::numa_nodes()
};

/// A core: its package and its allowed SMT siblings.
struct Core {
  int package = -1;          ///< index into Topology::packages()
  CpuSet cpus;               ///< allowed SMT siblings of this core (>= 1)
};

/// A data or unified cache and the allowed CPUs that share it.
struct Cache {
  int level = 0;             ///< 1, 2, 3, ...
  char type = 'U';           ///< 'D' data, 'I' instruction, 'U' unified
  std::uint64_t size_bytes = 0;  ///< its capacity
  int line_bytes = 0;        ///< 0 when unknown
  CpuSet cpus;               ///< allowed CPUs that share this cache
};

/// A package (socket).
struct Package {
  CpuSet cpus;  ///< its allowed CPUs
};

/// A NUMA node.
struct NumaNode {
  int os_id = -1;                  ///< the kernel's node id (numactl, /sys)
  std::uint64_t memory_bytes = 0;  ///< local memory, 0 when unknown
  CpuSet cpus;                     ///< its allowed CPUs
};

/// The machine as this process may use it: packages, NUMA nodes, cores,
/// caches and logical CPUs, restricted to the allowed CPUs.
class Topology {
 public:
  /// Discovers the machine, restricted to the calling thread's affinity at
  /// the time of the call (this_thread_affinity()).
  static Topology discover();
  /// The flat topology used when hwloc cannot parse the machine: each CPU of
  /// `allowed` is its own core in one package and one NUMA node.
  static Topology flat(const CpuSet& allowed, std::string warning);
  /// The process-wide topology, discovered on first use (thread-safe) and
  /// restricted to process_allowed_cpus(), so a thread pinned before the first
  /// call does not shrink it.
  static const Topology& instance();

  /// The CPUs this topology covers.
  [[nodiscard]] const CpuSet& allowed() const noexcept { return allowed_; }
  /// The allowed logical CPUs, by OS id ascending.
  [[nodiscard]] const std::vector<Pu>& pus() const noexcept { return pus_; }
  /// Cores with at least one allowed CPU.
  [[nodiscard]] const std::vector<Core>& cores() const noexcept { return cores_; }
  /// Packages with at least one allowed CPU.
  [[nodiscard]] const std::vector<Package>& packages() const noexcept { return packages_; }
  /// NUMA nodes with at least one allowed CPU.
  [[nodiscard]] const std::vector<NumaNode>& numa_nodes() const noexcept { return numa_; }
  /// Data and unified caches, ordered by level then by first CPU.
  [[nodiscard]] const std::vector<Cache>& caches() const noexcept { return caches_; }

  /// The Pu for an allowed OS CPU id, or nullptr.
  [[nodiscard]] const Pu* pu(int os_id) const noexcept;
  /// SMT siblings of `os_id` (including itself); empty if not allowed.
  [[nodiscard]] CpuSet siblings(int os_id) const;
  /// True when some allowed core has more than one allowed CPU.
  [[nodiscard]] bool smt() const noexcept;
  /// The smallest cache level (>= 1) whose cache holds both CPUs, or 0 if
  /// they share none (or either is not allowed). Same CPU: its L1.
  [[nodiscard]] int shared_cache_level(int a, int b) const noexcept;

  /// The CPU's model name (hwloc's CPUModel, or /proc/cpuinfo's); empty when unknown.
  [[nodiscard]] const std::string& cpu_model() const noexcept { return cpu_model_; }
  /// Empty when discovery went through hwloc; the reason otherwise.
  [[nodiscard]] const std::string& warning() const noexcept { return warning_; }
  /// "hwloc 2.9.0" or "flat (sched_getaffinity)".
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

 private:
  friend struct TopologyBuilder;
  CpuSet allowed_;
  std::vector<Pu> pus_;
  std::vector<Core> cores_;
  std::vector<Package> packages_;
  std::vector<NumaNode> numa_;
  std::vector<Cache> caches_;
  std::string cpu_model_;
  std::string warning_;
  std::string source_;
};

/// The CPUs the process may use: the affinity it started with (what `taskset`
/// or a cgroup cpuset gave it), read once when weft is loaded. The calling
/// thread's own mask now is this_thread_affinity() (weft/topo/affinity.hpp).
/// Pinning is checked against this set rather than the thread's mask,
/// because a thread that pinned itself to one CPU must still be able to move
/// to another, and it is the set Topology::instance() covers. Throws
/// std::system_error if the kernel refuses to report the affinity.
CpuSet process_allowed_cpus();

/// The number of threads worth running at once: the process's allowed CPU
/// count (process_allowed_cpus()), capped
/// by a cgroup CPU quota (v2 cpu.max, or v1 cfs_quota_us / cfs_period_us,
/// rounded up) when one is set. Always >= 1.
int available_parallelism();

/// The quota in CPUs found in the cgroup files, or 0 when none is set.
/// Exposed for testing and for `weft topo`.
double cgroup_cpu_quota();

}  // namespace weft
