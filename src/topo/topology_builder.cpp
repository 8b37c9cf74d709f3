#include "weft/detail/topo/builder.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace weft {

namespace {

// Keeps each CPU with the first object (in `objs` order) that claims it and
// drops objects left empty, so lookups by CPU are unambiguous even when the
// input overlaps.
template <typename T>
CpuSet deduplicate(std::vector<T>& objs) {
  CpuSet claimed;
  std::vector<T> kept;
  kept.reserve(objs.size());
  for (T& obj : objs) {
    obj.cpus -= claimed;
    if (obj.cpus.empty()) continue;
    claimed |= obj.cpus;
    kept.push_back(std::move(obj));
  }
  objs = std::move(kept);
  return claimed;
}

template <typename T>
void sort_by_first_cpu(std::vector<T>& objs) {
  std::stable_sort(objs.begin(), objs.end(),
                   [](const T& a, const T& b) { return a.cpus.first() < b.cpus.first(); });
}

// For each CPU id, the index of the object holding it (-1 when none).
template <typename T>
std::vector<int> owners(const std::vector<T>& objs) {
  std::vector<int> owner(CpuSet::kMaxCpus, -1);
  for (std::size_t i = 0; i < objs.size(); ++i) {
    for (const int cpu : objs[i].cpus) owner[static_cast<std::size_t>(cpu)] = static_cast<int>(i);
  }
  return owner;
}

}  // namespace

TopologyBuilder::TopologyBuilder(CpuSet allowed) { topo_.allowed_ = allowed; }

void TopologyBuilder::add_package(const CpuSet& cpus) {
  const CpuSet mine = cpus & topo_.allowed_;
  if (!mine.empty()) topo_.packages_.push_back(Package{mine});
}

void TopologyBuilder::add_numa_node(int os_id, std::uint64_t memory_bytes, const CpuSet& cpus) {
  const CpuSet mine = cpus & topo_.allowed_;
  if (!mine.empty()) topo_.numa_.push_back(NumaNode{os_id, memory_bytes, mine});
}

void TopologyBuilder::add_core(const CpuSet& cpus) {
  const CpuSet mine = cpus & topo_.allowed_;
  if (!mine.empty()) topo_.cores_.push_back(Core{-1, mine});
}

void TopologyBuilder::add_cache(int level, char type, std::uint64_t size_bytes, int line_bytes,
                                const CpuSet& cpus) {
  if (type == 'I') return;
  const CpuSet mine = cpus & topo_.allowed_;
  if (!mine.empty()) topo_.caches_.push_back(Cache{level, type, size_bytes, line_bytes, mine});
}

void TopologyBuilder::set_cpu_model(std::string model) { topo_.cpu_model_ = std::move(model); }
void TopologyBuilder::set_source(std::string source) { topo_.source_ = std::move(source); }
void TopologyBuilder::set_warning(std::string warning) { topo_.warning_ = std::move(warning); }

Topology TopologyBuilder::build() {
  const CpuSet& allowed = topo_.allowed_;

  sort_by_first_cpu(topo_.packages_);
  const CpuSet packaged = deduplicate(topo_.packages_);
  if (const CpuSet rest = allowed - packaged; !rest.empty()) topo_.packages_.push_back(Package{rest});
  sort_by_first_cpu(topo_.packages_);

  sort_by_first_cpu(topo_.cores_);
  const CpuSet cored = deduplicate(topo_.cores_);
  for (const int cpu : allowed - cored) topo_.cores_.push_back(Core{-1, CpuSet{cpu}});
  sort_by_first_cpu(topo_.cores_);

  std::stable_sort(topo_.numa_.begin(), topo_.numa_.end(),
                   [](const NumaNode& a, const NumaNode& b) { return a.os_id < b.os_id; });
  deduplicate(topo_.numa_);
  if (topo_.numa_.empty() && !allowed.empty()) topo_.numa_.push_back(NumaNode{0, 0, allowed});

  std::stable_sort(topo_.caches_.begin(), topo_.caches_.end(), [](const Cache& a, const Cache& b) {
    if (a.level != b.level) return a.level < b.level;
    return a.cpus.first() < b.cpus.first();
  });

  const std::vector<int> package_of = owners(topo_.packages_);
  const std::vector<int> core_of = owners(topo_.cores_);
  const std::vector<int> numa_of = owners(topo_.numa_);
  for (Core& core : topo_.cores_) core.package = package_of[static_cast<std::size_t>(core.cpus.first())];

  topo_.pus_.clear();
  for (const int cpu : allowed) {
    const auto i = static_cast<std::size_t>(cpu);
    topo_.pus_.push_back(Pu{cpu, core_of[i], package_of[i], numa_of[i]});
  }
  return std::move(topo_);
}

Topology TopologyBuilder::synthetic(int packages, int cores_per_package, int threads_per_core,
                                    int llcs_per_package) {
  // A bad shape leaves `all` empty and is reported by the overload below,
  // which validates before it numbers anything.
  CpuSet all;
  if (packages >= 1 && cores_per_package >= 1 && threads_per_core >= 1 &&
      static_cast<long long>(packages) * cores_per_package * threads_per_core <= CpuSet::kMaxCpus) {
    for (int cpu = 0; cpu < packages * cores_per_package * threads_per_core; ++cpu) all.add(cpu);
  }
  return synthetic(packages, cores_per_package, threads_per_core, llcs_per_package, all);
}

Topology TopologyBuilder::synthetic(int packages, int cores_per_package, int threads_per_core,
                                    int llcs_per_package, const CpuSet& allowed) {
  const std::string shape = std::to_string(packages) + "x" + std::to_string(cores_per_package) + "x" +
                            std::to_string(threads_per_core);
  if (packages < 1 || cores_per_package < 1 || threads_per_core < 1 || llcs_per_package < 1) {
    throw std::invalid_argument("weft: synthetic machine " + shape + " with " +
                                std::to_string(llcs_per_package) + " L3 per package: every count must be >= 1");
  }
  if (static_cast<long long>(packages) * cores_per_package * threads_per_core > CpuSet::kMaxCpus) {
    throw std::invalid_argument("weft: synthetic machine " + shape + " has more than " +
                                std::to_string(CpuSet::kMaxCpus) + " CPUs");
  }
  if (cores_per_package % llcs_per_package != 0) {
    throw std::invalid_argument("weft: synthetic machine " + shape + ": " + std::to_string(cores_per_package) +
                                " cores do not split evenly into " + std::to_string(llcs_per_package) +
                                " L3 slices");
  }
  constexpr std::uint64_t kKiB = 1024;
  constexpr std::uint64_t kL1Bytes = 48 * kKiB;
  constexpr std::uint64_t kL2Bytes = 1024 * kKiB;
  constexpr std::uint64_t kL3Bytes = 32 * 1024 * kKiB;
  constexpr std::uint64_t kNodeBytes = 16 * 1024 * 1024 * kKiB;
  constexpr int kLineBytes = 64;

  const int cores_total = packages * cores_per_package;
  const int cores_per_llc = cores_per_package / llcs_per_package;
  TopologyBuilder b(allowed);
  auto core_cpus = [&](int package, int core) {
    CpuSet cpus;
    for (int t = 0; t < threads_per_core; ++t) cpus.add(t * cores_total + package * cores_per_package + core);
    return cpus;
  };
  for (int p = 0; p < packages; ++p) {
    CpuSet package_cpus;
    for (int l = 0; l < llcs_per_package; ++l) {
      CpuSet llc_cpus;
      for (int c = l * cores_per_llc; c < (l + 1) * cores_per_llc; ++c) {
        const CpuSet cpus = core_cpus(p, c);
        b.add_core(cpus);
        b.add_cache(1, 'D', kL1Bytes, kLineBytes, cpus);
        b.add_cache(1, 'I', kL1Bytes, kLineBytes, cpus);
        b.add_cache(2, 'U', kL2Bytes, kLineBytes, cpus);
        llc_cpus |= cpus;
      }
      b.add_cache(3, 'U', kL3Bytes, kLineBytes, llc_cpus);
      package_cpus |= llc_cpus;
    }
    b.add_package(package_cpus);
    b.add_numa_node(p, kNodeBytes, package_cpus);
  }
  b.set_cpu_model("synthetic " + shape + " machine");
  b.set_source("synthetic");
  return b.build();
}

}  // namespace weft
