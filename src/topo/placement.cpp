#include "weft/topo/placement.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace weft {

namespace {

// Where a core sits: its package, then the cache it uses at each level from
// the outermost in (index into Topology::caches(), -1 when that level is
// missing). Cores with equal prefixes share that much of the hierarchy.
std::vector<std::vector<int>> core_paths(const Topology& topo) {
  int max_level = 0;
  for (const Cache& c : topo.caches()) max_level = std::max(max_level, c.level);
  std::vector<std::vector<int>> paths;
  paths.reserve(topo.cores().size());
  for (const Core& core : topo.cores()) {
    const int cpu = core.cpus.first();
    std::vector<int> path{core.package};
    for (int level = max_level; level >= 1; --level) {
      int found = -1;
      for (std::size_t i = 0; i < topo.caches().size(); ++i) {
        const Cache& c = topo.caches()[i];
        if (c.level == level && c.cpus.contains(cpu)) {
          found = static_cast<int>(i);
          break;
        }
      }
      path.push_back(found);
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

// Cores sorted so that ones sharing a package and then ever nearer caches
// are adjacent.
std::vector<int> compact_cores(const std::vector<std::vector<int>>& paths, const Topology& topo) {
  std::vector<int> order(paths.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto ua = static_cast<std::size_t>(a);
    const auto ub = static_cast<std::size_t>(b);
    if (paths[ua] != paths[ub]) return paths[ua] < paths[ub];
    return topo.cores()[ua].cpus.first() < topo.cores()[ub].cpus.first();
  });
  return order;
}

// Round-robin over the groups at `depth` of the path (packages first, then
// the outermost cache, ...), recursively, so consecutive cores share as
// little as possible.
std::vector<int> spread_cores(const std::vector<int>& cores, const std::vector<std::vector<int>>& paths,
                              std::size_t depth) {
  if (cores.size() <= 1 || depth >= paths[static_cast<std::size_t>(cores.front())].size()) return cores;
  std::vector<int> keys;  // in order of first appearance
  std::map<int, std::vector<int>> groups;
  for (const int core : cores) {
    const int key = paths[static_cast<std::size_t>(core)][depth];
    if (groups.find(key) == groups.end()) keys.push_back(key);
    groups[key].push_back(core);
  }
  std::vector<std::vector<int>> spread;
  spread.reserve(keys.size());
  for (const int key : keys) spread.push_back(spread_cores(groups[key], paths, depth + 1));
  std::vector<int> out;
  out.reserve(cores.size());
  for (std::size_t round = 0; out.size() < cores.size(); ++round) {
    for (const auto& group : spread) {
      if (round < group.size()) out.push_back(group[round]);
    }
  }
  return out;
}

std::vector<int> compact_cpus(const Topology& topo, const std::vector<int>& cores) {
  std::vector<int> out;
  for (const int core : cores) {
    for (const int cpu : topo.cores()[static_cast<std::size_t>(core)].cpus) out.push_back(cpu);
  }
  return out;
}

// The k-th SMT sibling of every core before any core's (k+1)-th.
std::vector<int> spread_cpus(const Topology& topo, const std::vector<int>& cores) {
  std::vector<std::vector<int>> siblings;
  std::size_t widest = 0;
  for (const int core : cores) {
    siblings.push_back(topo.cores()[static_cast<std::size_t>(core)].cpus.to_vector());
    widest = std::max(widest, siblings.back().size());
  }
  std::vector<int> out;
  for (std::size_t k = 0; k < widest; ++k) {
    for (const auto& s : siblings) {
      if (k < s.size()) out.push_back(s[k]);
    }
  }
  return out;
}

// Node by node: packages in order (the first allowed CPU's leads), a
// package's nodes by kernel id, then any cores no node covers; inside a
// node, the first sibling of every core in compact order before any core's
// second.
std::vector<int> numa_cpus(const Topology& topo, const std::vector<int>& compact) {
  const std::size_t nodes = topo.numa_nodes().size();
  std::vector<std::vector<int>> cores_of(nodes + 1);  // [nodes]: cores outside every node
  for (const int core : compact) {
    const int node = topo.pu(topo.cores()[static_cast<std::size_t>(core)].cpus.first())->numa;
    cores_of[node < 0 ? nodes : static_cast<std::size_t>(node)].push_back(core);
  }
  std::vector<std::size_t> order(nodes + 1);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto package_of = [&](std::size_t node) {
    return node == nodes ? std::numeric_limits<int>::max() : topo.pu(topo.numa_nodes()[node].cpus.first())->package;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return package_of(a) < package_of(b); });
  std::vector<int> out;
  for (const std::size_t node : order) {
    const std::vector<int> cpus = spread_cpus(topo, cores_of[node]);
    out.insert(out.end(), cpus.begin(), cpus.end());
  }
  return out;
}

std::vector<int> wrap(const std::vector<int>& order, int threads) {
  std::vector<int> out(static_cast<std::size_t>(threads));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = order[i % order.size()];
  return out;
}

}  // namespace

std::string_view to_string(Placement p) noexcept {
  switch (p) {
    case Placement::none:
      return "none";
    case Placement::compact:
      return "compact";
    case Placement::spread:
      return "spread";
    case Placement::one_per_core:
      return "one_per_core";
    case Placement::numa:
      return "numa";
  }
  return "unknown";
}

Placement parse_placement(std::string_view name) {
  if (name == "none") return Placement::none;
  if (name == "compact") return Placement::compact;
  if (name == "spread") return Placement::spread;
  if (name == "one_per_core" || name == "one-per-core") return Placement::one_per_core;
  if (name == "numa") return Placement::numa;
  throw std::invalid_argument("weft: unknown placement '" + std::string(name) +
                              "' (expected none, compact, spread, one_per_core or numa)");
}

std::vector<int> place(const Topology& topo, Placement policy, int threads) {
  if (threads < 1) {
    throw std::invalid_argument("weft: cannot place " + std::to_string(threads) +
                                " threads: the thread count must be at least 1");
  }
  if (policy == Placement::none) return {};
  if (topo.cores().empty()) {
    throw std::invalid_argument("weft: cannot place threads (" + std::string(to_string(policy)) +
                                "): the topology has no allowed CPUs");
  }
  const auto paths = core_paths(topo);
  const std::vector<int> compact = compact_cores(paths, topo);
  switch (policy) {
    case Placement::compact:
      return wrap(compact_cpus(topo, compact), threads);
    case Placement::spread:
      return wrap(spread_cpus(topo, spread_cores(compact, paths, 0)), threads);
    case Placement::numa:
      return wrap(numa_cpus(topo, compact), threads);
    case Placement::one_per_core: {
      const auto cores = static_cast<int>(topo.cores().size());
      if (threads > cores) {
        throw std::invalid_argument("weft: one_per_core placement of " + std::to_string(threads) +
                                    " threads needs " + std::to_string(threads) + " cores, but only " +
                                    std::to_string(cores) + " allowed cores exist");
      }
      const std::vector<int> order = spread_cores(compact, paths, 0);
      std::vector<int> out;
      for (int i = 0; i < threads; ++i) {
        out.push_back(topo.cores()[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])].cpus.first());
      }
      return out;
    }
    case Placement::none:
      break;
  }
  return {};
}

}  // namespace weft
