#include "weft/detail/exec/victim_rings.hpp"

namespace weft::detail {

StealRing ring_between(const Topology& topo, int thief_cpu, int victim_cpu) noexcept {
  const Pu* a = topo.pu(thief_cpu);
  const Pu* b = topo.pu(victim_cpu);
  if (a == nullptr || b == nullptr) return StealRing::remote;  // unknown or not allowed: assume the worst
  if (a->core == b->core) return StealRing::smt;
  const int level = topo.shared_cache_level(thief_cpu, victim_cpu);
  if (level != 0) return level <= 2 ? StealRing::l2 : StealRing::l3;
  return a->numa == b->numa ? StealRing::numa : StealRing::remote;
}

VictimRings victim_rings(const Topology& topo, const std::vector<int>& cpus, int self) {
  VictimRings rings;
  const int me = cpus[static_cast<std::size_t>(self)];
  for (int v = 0; v < static_cast<int>(cpus.size()); ++v) {
    if (v == self) continue;
    const StealRing r = ring_between(topo, me, cpus[static_cast<std::size_t>(v)]);
    rings[static_cast<std::size_t>(r)].push_back(v);
  }
  return rings;
}

}  // namespace weft::detail
