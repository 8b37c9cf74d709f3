#include "weft/topo/placement.hpp"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "machines.hpp"
#include "weft/detail/topo/builder.hpp"

namespace weft {
namespace {

using Cpus = std::vector<int>;

std::string message_of(const Topology& t, Placement p, int threads) {
  try {
    (void)place(t, p, threads);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

// The properties every placement must have, whatever the machine.
void expect_valid(const Topology& t) {
  const int cpus = t.allowed().count();
  for (const Placement p : {Placement::compact, Placement::spread, Placement::numa}) {
    SCOPED_TRACE(std::string(to_string(p)));
    for (int n = 1; n <= cpus; ++n) {
      const Cpus out = place(t, p, n);
      ASSERT_EQ(out.size(), static_cast<std::size_t>(n));
      EXPECT_EQ(std::set<int>(out.begin(), out.end()).size(), out.size()) << "duplicate CPU for n=" << n;
      for (const int cpu : out) EXPECT_TRUE(t.allowed().contains(cpu)) << cpu;
    }
    // More threads than CPUs wrap around.
    const Cpus full = place(t, p, cpus);
    const Cpus wrapped = place(t, p, 2 * cpus + 1);
    for (std::size_t i = 0; i < wrapped.size(); ++i) EXPECT_EQ(wrapped[i], full[i % full.size()]) << i;
  }
  const int cores = static_cast<int>(t.cores().size());
  for (int n = 1; n <= cores; ++n) {
    const Cpus out = place(t, Placement::one_per_core, n);
    ASSERT_EQ(out.size(), static_cast<std::size_t>(n));
    std::set<int> used_cores;
    for (const int cpu : out) {
      ASSERT_NE(t.pu(cpu), nullptr) << cpu;
      used_cores.insert(t.pu(cpu)->core);
    }
    EXPECT_EQ(used_cores.size(), out.size()) << "two threads on one core for n=" << n;
  }
  EXPECT_THROW(place(t, Placement::one_per_core, cores + 1), std::invalid_argument);
  EXPECT_TRUE(place(t, Placement::none, cpus).empty());
}

TEST(Placement, NamesRoundTrip) {
  for (const Placement p :
       {Placement::none, Placement::compact, Placement::spread, Placement::one_per_core, Placement::numa}) {
    EXPECT_EQ(parse_placement(to_string(p)), p);
  }
  EXPECT_EQ(to_string(Placement::one_per_core), "one_per_core");
  EXPECT_EQ(parse_placement("one-per-core"), Placement::one_per_core);
}

TEST(Placement, UnknownNameListsTheValidOnes) {
  try {
    (void)parse_placement("scatter");
    ADD_FAILURE() << "'scatter' was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'scatter'"), std::string::npos) << what;
    for (const char* name : {"none", "compact", "spread", "one_per_core", "numa"}) {
      EXPECT_NE(what.find(name), std::string::npos) << what;
    }
  }
}

TEST(Placement, ThreadCountBelowOneIsRejected) {
  const Topology& t = Topology::instance();
  for (const Placement p :
       {Placement::none, Placement::compact, Placement::spread, Placement::one_per_core, Placement::numa}) {
    EXPECT_THROW(place(t, p, 0), std::invalid_argument) << to_string(p);
    EXPECT_THROW(place(t, p, -3), std::invalid_argument) << to_string(p);
  }
  EXPECT_NE(message_of(t, Placement::spread, 0).find('0'), std::string::npos);
}

TEST(Placement, RealTopologyPlacementsAreValid) { expect_valid(Topology::instance()); }

TEST(Placement, SyntheticTopologiesPlacementsAreValid) {
  for (const auto& [p, c, s, l] : std::vector<std::array<int, 4>>{
           {1, 1, 1, 1}, {1, 2, 1, 1}, {2, 3, 2, 1}, {4, 2, 4, 2}, {2, 4, 2, 2}, {1, 8, 1, 4}}) {
    SCOPED_TRACE(std::to_string(p) + "x" + std::to_string(c) + "x" + std::to_string(s) + " llc " +
                 std::to_string(l));
    expect_valid(TopologyBuilder::synthetic(p, c, s, l));
  }
  expect_valid(TopologyBuilder::synthetic(2, 4, 2, 1, CpuSet{0, 1, 8, 12}));
  expect_valid(Topology::flat(CpuSet{1, 3, 4}, "flat"));
  expect_valid(test::two_packages_four_nodes());
}

TEST(Placement, Compact2x4x2FillsSiblingsThenCoresThenPackages) {
  const Topology t = TopologyBuilder::synthetic(2, 4, 2);
  EXPECT_EQ(place(t, Placement::compact, 16), (Cpus{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15}));
  EXPECT_EQ(place(t, Placement::compact, 3), (Cpus{0, 8, 1}));
}

TEST(Placement, Spread2x4x2AlternatesPackagesAndLeavesSiblingsLast) {
  const Topology t = TopologyBuilder::synthetic(2, 4, 2);
  EXPECT_EQ(place(t, Placement::spread, 16), (Cpus{0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15}));
  EXPECT_EQ(place(t, Placement::spread, 2), (Cpus{0, 4}));
  const Cpus wrapped = place(t, Placement::spread, 20);
  EXPECT_EQ(Cpus(wrapped.begin() + 16, wrapped.end()), (Cpus{0, 4, 1, 5}));
}

TEST(Placement, OnePerCore2x4x2UsesFirstSiblingInSpreadOrder) {
  const Topology t = TopologyBuilder::synthetic(2, 4, 2);
  EXPECT_EQ(place(t, Placement::one_per_core, 8), (Cpus{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(place(t, Placement::one_per_core, 3), (Cpus{0, 4, 1}));
}

TEST(Placement, OnePerCoreWithTooManyThreadsNamesBothNumbers) {
  const Topology t = TopologyBuilder::synthetic(2, 4, 2);
  const std::string what = message_of(t, Placement::one_per_core, 9);
  EXPECT_NE(what.find("9 threads"), std::string::npos) << what;
  EXPECT_NE(what.find("8 allowed cores"), std::string::npos) << what;
  const Topology& real = Topology::instance();
  const int cores = static_cast<int>(real.cores().size());
  const std::string real_what = message_of(real, Placement::one_per_core, cores + 1);
  EXPECT_NE(real_what.find(std::to_string(cores + 1) + " threads"), std::string::npos) << real_what;
  EXPECT_NE(real_what.find(std::to_string(cores) + " allowed cores"), std::string::npos) << real_what;
}

TEST(Placement, SpreadRoundRobinsOverLastLevelCaches) {
  // One package, two L3 slices (cores 0-1 and 2-3), as on a chiplet CPU.
  const Topology one = TopologyBuilder::synthetic(1, 4, 1, 2);
  EXPECT_EQ(place(one, Placement::spread, 4), (Cpus{0, 2, 1, 3}));
  EXPECT_EQ(place(one, Placement::compact, 4), (Cpus{0, 1, 2, 3}));

  const Topology two = TopologyBuilder::synthetic(2, 4, 2, 2);
  EXPECT_EQ(place(two, Placement::spread, 16), (Cpus{0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9, 13, 11, 15}));
  EXPECT_EQ(place(two, Placement::compact, 8), (Cpus{0, 8, 1, 9, 2, 10, 3, 11}));
}

TEST(Placement, RestrictedSyntheticMachine) {
  const Topology t = TopologyBuilder::synthetic(2, 4, 2, 1, CpuSet{0, 1, 8, 12});
  EXPECT_EQ(place(t, Placement::compact, 4), (Cpus{0, 8, 1, 12}));
  EXPECT_EQ(place(t, Placement::spread, 4), (Cpus{0, 12, 1, 8}));
  EXPECT_EQ(place(t, Placement::one_per_core, 3), (Cpus{0, 12, 1}));
  EXPECT_THROW(place(t, Placement::one_per_core, 4), std::invalid_argument);
}

// The NUMA node indices the first `threads` CPUs of a placement fall in.
std::set<int> nodes_used(const Topology& t, Placement p, int threads) {
  std::set<int> nodes;
  for (const int cpu : place(t, p, threads)) nodes.insert(t.pu(cpu)->numa);
  return nodes;
}

Cpus range(int lo, int hi) {  // [lo, hi)
  Cpus out;
  for (int cpu = lo; cpu < hi; ++cpu) out.push_back(cpu);
  return out;
}

Cpus concat(std::initializer_list<Cpus> parts) {
  Cpus out;
  for (const Cpus& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(Placement, NumaFillsOneNodeBeforeTheNext) {
  // Node n: cores 8n..8n+7, whose siblings are 32 higher.
  const Topology t = test::two_packages_four_nodes();
  EXPECT_EQ(place(t, Placement::numa, 8), range(0, 8));  // a core each, no SMT sibling yet
  EXPECT_EQ(place(t, Placement::numa, 16), concat({range(0, 8), range(32, 40)}));
  EXPECT_EQ(place(t, Placement::numa, 64), concat({range(0, 8), range(32, 40), range(8, 16), range(40, 48),
                                                    range(16, 24), range(48, 56), range(24, 32), range(56, 64)}));
  for (int n = 1; n <= 64; ++n) {
    // As few nodes as the thread count allows.
    EXPECT_EQ(nodes_used(t, Placement::numa, n).size(), static_cast<std::size_t>((n + 15) / 16)) << n;
  }
  EXPECT_EQ(nodes_used(t, Placement::spread, 2).size(), 2U);  // one per package
  EXPECT_EQ(place(t, Placement::compact, 2), (Cpus{0, 32}));  // compact doubles up on a core first
}

TEST(Placement, NumaKeepsAPackagesNodesTogether) {
  // Node ids alternate between the packages: 0 and 2 are package 0's.
  TopologyBuilder b(CpuSet::parse("0-7"));
  b.add_package(CpuSet::parse("0-3"));
  b.add_package(CpuSet::parse("4-7"));
  b.add_numa_node(0, 0, CpuSet{0, 1});
  b.add_numa_node(1, 0, CpuSet{4, 5});
  b.add_numa_node(2, 0, CpuSet{2, 3});
  b.add_numa_node(3, 0, CpuSet{6, 7});
  const Topology t = b.build();
  EXPECT_EQ(place(t, Placement::numa, 8), range(0, 8));
  expect_valid(t);
}

TEST(Placement, NumaOnRestrictedAndSingleNodeMachines) {
  // Of node 0 only CPU 0 is allowed, of node 1 all but two CPUs: node 0
  // still comes first, its one CPU before node 1's.
  const Topology part = TopologyBuilder::synthetic(2, 4, 2, 1, CpuSet{0, 4, 5, 6, 7, 12, 13});
  EXPECT_EQ(place(part, Placement::numa, 7), (Cpus{0, 4, 5, 6, 7, 12, 13}));
  // One node per package, 2 x 32 cores x 2 SMT: package 0's cores, their
  // siblings, then package 1.
  const Topology big = TopologyBuilder::synthetic(2, 32, 2, 4);
  EXPECT_EQ(place(big, Placement::numa, 128),
            concat({range(0, 32), range(64, 96), range(32, 64), range(96, 128)}));
  // With one node, numa is one thread per core first, then the siblings.
  const Topology one = TopologyBuilder::synthetic(1, 4, 2);
  EXPECT_EQ(place(one, Placement::numa, 8), (Cpus{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Placement, FlatTopologyIsAscending) {
  const Topology t = Topology::flat(CpuSet{1, 3, 4}, "flat");
  EXPECT_EQ(place(t, Placement::compact, 3), (Cpus{1, 3, 4}));
  EXPECT_EQ(place(t, Placement::spread, 3), (Cpus{1, 3, 4}));
  EXPECT_EQ(place(t, Placement::one_per_core, 3), (Cpus{1, 3, 4}));
  EXPECT_EQ(place(t, Placement::numa, 3), (Cpus{1, 3, 4}));
}

}  // namespace
}  // namespace weft
