// The only file that includes <hwloc.h>: everything hwloc reports is copied
// into weft's own types here, so no hwloc type leaks into the headers.
#include "weft/topo/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "weft/detail/topo/builder.hpp"
#include "weft/topo/affinity.hpp"

namespace weft {

namespace {

constexpr hwloc_obj_type_t kCacheTypes[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                            HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};

// Closes the hwloc topology on every path out of discovery, including throws.
class HwlocTopology {
 public:
  HwlocTopology() {
    if (hwloc_topology_init(&topo_) != 0) {
      throw std::system_error(errno, std::generic_category(), "hwloc_topology_init");
    }
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  ~HwlocTopology() { hwloc_topology_destroy(topo_); }
  hwloc_topology_t get() const noexcept { return topo_; }

 private:
  hwloc_topology_t topo_ = nullptr;
};

// hwloc cpusets are indexed by OS CPU id, the same numbering as CpuSet.
CpuSet to_cpu_set(hwloc_const_cpuset_t set) {
  CpuSet out;
  if (set == nullptr) return out;
  // hwloc_bitmap_next walks ascending, so the first id CpuSet cannot hold
  // ends the walk; it also stops an infinite bitmap from looping forever.
  for (int id = hwloc_bitmap_first(set); id >= 0 && id < CpuSet::kMaxCpus; id = hwloc_bitmap_next(set, id)) {
    out.add(id);
  }
  return out;
}

template <typename F>
void for_each_object(hwloc_topology_t topo, hwloc_obj_type_t type, F&& f) {
  const int n = hwloc_get_nbobjs_by_type(topo, type);
  for (int i = 0; i < n; ++i) {
    if (hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(i))) f(obj);
  }
}

std::string cpuinfo_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

Topology discover_hwloc(const CpuSet& allowed) {
  // A header/library mismatch would make every attribute read below garbage.
  if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
    throw std::runtime_error("hwloc library API " + std::to_string(hwloc_get_api_version()) +
                             " does not match the headers' " + std::to_string(HWLOC_API_VERSION));
  }
  HwlocTopology topo;
  if (hwloc_topology_load(topo.get()) != 0) {
    throw std::system_error(errno, std::generic_category(), "hwloc_topology_load");
  }

  // Objects are filtered to `allowed` by the builder rather than with
  // hwloc_topology_restrict(): filtering cannot fail, and `allowed` may be a
  // snapshot that differs from what hwloc would read for the calling thread.
  TopologyBuilder b(allowed);
  std::string model;
  for_each_object(topo.get(), HWLOC_OBJ_PACKAGE, [&](hwloc_obj_t obj) {
    b.add_package(to_cpu_set(obj->cpuset));
    if (model.empty()) {
      if (const char* m = hwloc_obj_get_info_by_name(obj, "CPUModel")) model = m;
    }
  });
  for_each_object(topo.get(), HWLOC_OBJ_CORE, [&](hwloc_obj_t obj) { b.add_core(to_cpu_set(obj->cpuset)); });
  for_each_object(topo.get(), HWLOC_OBJ_NUMANODE, [&](hwloc_obj_t obj) {
    const int os_id = obj->os_index == HWLOC_UNKNOWN_INDEX ? -1 : static_cast<int>(obj->os_index);
    const std::uint64_t memory = obj->attr != nullptr ? obj->attr->numanode.local_memory : 0;
    b.add_numa_node(os_id, memory, to_cpu_set(obj->cpuset));
  });
  for (const hwloc_obj_type_t type : kCacheTypes) {
    for_each_object(topo.get(), type, [&](hwloc_obj_t obj) {
      if (obj->attr == nullptr) return;
      const auto& cache = obj->attr->cache;
      char kind = 'U';
      if (cache.type == HWLOC_OBJ_CACHE_DATA) kind = 'D';
      if (cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) kind = 'I';
      b.add_cache(static_cast<int>(cache.depth), kind, cache.size, static_cast<int>(cache.linesize),
                  to_cpu_set(obj->cpuset));
    });
  }
  b.set_cpu_model(model.empty() ? cpuinfo_model_name() : model);
  b.set_source(std::string("hwloc ") + HWLOC_VERSION);
  return b.build();
}

Topology discover_restricted(const CpuSet& allowed) {
  try {
    return discover_hwloc(allowed);
  } catch (const std::exception& e) {
    return Topology::flat(allowed, std::string("hwloc discovery failed (") + e.what() +
                                       "); using a flat topology of one core per CPU");
  }
}

// Takes the snapshot behind process_allowed_cpus() while the library loads,
// before main() can pin its own thread. A failure here is retried on first
// use, where the exception can reach a caller.
[[maybe_unused]] const bool kAffinitySnapshotTaken = [] {
  try {
    process_allowed_cpus();
    return true;
  } catch (...) {
    return false;
  }
}();

}  // namespace

CpuSet process_allowed_cpus() {
  static const CpuSet snapshot = this_thread_affinity();
  return snapshot;
}

Topology Topology::discover() { return discover_restricted(this_thread_affinity()); }

Topology Topology::flat(const CpuSet& allowed, std::string warning) {
  TopologyBuilder b(allowed);
  b.add_package(allowed);
  b.add_numa_node(0, 0, allowed);
  for (const int cpu : allowed) b.add_core(CpuSet{cpu});
  b.set_cpu_model(cpuinfo_model_name());
  b.set_source("flat (sched_getaffinity)");
  b.set_warning(std::move(warning));
  return b.build();
}

const Topology& Topology::instance() {
  static const Topology topo = discover_restricted(process_allowed_cpus());
  return topo;
}

const Pu* Topology::pu(int os_id) const noexcept {
  const auto it = std::lower_bound(pus_.begin(), pus_.end(), os_id,
                                   [](const Pu& p, int id) { return p.os_id < id; });
  return it != pus_.end() && it->os_id == os_id ? &*it : nullptr;
}

CpuSet Topology::siblings(int os_id) const {
  const Pu* p = pu(os_id);
  return p == nullptr ? CpuSet{} : cores_[static_cast<std::size_t>(p->core)].cpus;
}

bool Topology::smt() const noexcept {
  return std::any_of(cores_.begin(), cores_.end(), [](const Core& c) { return c.cpus.count() > 1; });
}

int Topology::shared_cache_level(int a, int b) const noexcept {
  if (!allowed_.contains(a) || !allowed_.contains(b)) return 0;
  // caches_ is ordered by level, so the first hit is the nearest.
  for (const Cache& c : caches_) {
    if (c.cpus.contains(a) && c.cpus.contains(b)) return c.level;
  }
  return 0;
}

}  // namespace weft
