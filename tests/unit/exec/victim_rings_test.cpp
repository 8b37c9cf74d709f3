// Victim rings on machines the test host is not (weft/detail/exec/victim_rings.hpp).
#include "weft/detail/exec/victim_rings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "machines.hpp"
#include "weft/detail/topo/builder.hpp"

namespace weft::detail {
namespace {

using test::two_packages_four_nodes;

std::vector<int> every_cpu(int n) {
  std::vector<int> cpus(static_cast<std::size_t>(n));
  std::iota(cpus.begin(), cpus.end(), 0);
  return cpus;
}

std::size_t ring_size(const VictimRings& r, StealRing k) { return r[static_cast<std::size_t>(k)].size(); }
const std::vector<int>& ring(const VictimRings& r, StealRing k) { return r[static_cast<std::size_t>(k)]; }

TEST(VictimRings, SixtyFourCpusInTwoPackagesAndFourNodes) {
  const Topology t = two_packages_four_nodes();
  ASSERT_EQ(t.pus().size(), 64U);
  ASSERT_EQ(t.numa_nodes().size(), 4U);
  // One worker per CPU, worker i on CPU i.
  const VictimRings r = victim_rings(t, every_cpu(64), 0);
  EXPECT_EQ(ring(r, StealRing::smt), (std::vector<int>{32}));
  EXPECT_EQ(ring_size(r, StealRing::l2), 0U);  // L2 is per core here
  EXPECT_EQ(ring(r, StealRing::l3), (std::vector<int>{1, 2, 3, 33, 34, 35}));
  EXPECT_EQ(ring(r, StealRing::numa), (std::vector<int>{4, 5, 6, 7, 36, 37, 38, 39}));
  EXPECT_EQ(ring_size(r, StealRing::remote), 48U);
  // Seen from the last CPU: the mirror image.
  const VictimRings last = victim_rings(t, every_cpu(64), 63);
  EXPECT_EQ(ring(last, StealRing::smt), (std::vector<int>{31}));
  EXPECT_EQ(ring(last, StealRing::l3), (std::vector<int>{28, 29, 30, 60, 61, 62}));
  EXPECT_EQ(ring_size(last, StealRing::numa), 8U);
  EXPECT_EQ(ring_size(last, StealRing::remote), 48U);
}

TEST(VictimRings, EveryOtherWorkerIsInExactlyOneRing) {
  const Topology t = TopologyBuilder::synthetic(2, 32, 2, 4);  // 128 CPUs
  ASSERT_EQ(t.pus().size(), 128U);
  const std::vector<int> cpus = every_cpu(128);
  for (int self : {0, 17, 64, 127}) {
    const VictimRings r = victim_rings(t, cpus, self);
    std::vector<int> all;
    for (const auto& g : r) all.insert(all.end(), g.begin(), g.end());
    std::sort(all.begin(), all.end());
    std::vector<int> expected;
    for (int v = 0; v < 128; ++v)
      if (v != self) expected.push_back(v);
    EXPECT_EQ(all, expected) << "worker " << self;
    // 8 cores per L3 slice, 32 per package (= NUMA node), 2 packages.
    EXPECT_EQ(ring_size(r, StealRing::smt), 1U);
    EXPECT_EQ(ring_size(r, StealRing::l3), 14U);
    EXPECT_EQ(ring_size(r, StealRing::numa), 48U);
    EXPECT_EQ(ring_size(r, StealRing::remote), 64U);
  }
}

TEST(VictimRings, WorkersSharingACpuAreNearestAndASharedL2IsNext) {
  TopologyBuilder b(CpuSet::parse("0-3"));
  for (int c = 0; c < 4; ++c) b.add_core(CpuSet{c});
  b.add_cache(2, 'U', 2 << 20, 64, CpuSet{0, 1});  // two cores share an L2 (a module)
  b.add_cache(2, 'U', 2 << 20, 64, CpuSet{2, 3});
  const Topology t = b.build();
  // Three workers on CPU 0 (oversubscribed), one on each other CPU.
  const std::vector<int> cpus{0, 0, 0, 1, 2, 3};
  const VictimRings r = victim_rings(t, cpus, 0);
  EXPECT_EQ(ring(r, StealRing::smt), (std::vector<int>{1, 2}));
  EXPECT_EQ(ring(r, StealRing::l2), (std::vector<int>{3}));
  EXPECT_EQ(ring_size(r, StealRing::l3), 0U);
  EXPECT_EQ(ring(r, StealRing::numa), (std::vector<int>{4, 5}));  // no shared cache, one node
  EXPECT_EQ(ring_size(r, StealRing::remote), 0U);
}

TEST(VictimRings, UnknownCpusAreTheFarthestRing) {
  const Topology t = TopologyBuilder::synthetic(1, 2, 1);
  const VictimRings r = victim_rings(t, {0, -1, 1, 7}, 0);  // 7: not on this machine
  EXPECT_EQ(ring(r, StealRing::l3), (std::vector<int>{2}));
  EXPECT_EQ(ring(r, StealRing::remote), (std::vector<int>{1, 3}));
  const VictimRings unknown = victim_rings(t, {-1, 0, 1}, 0);
  EXPECT_EQ(ring(unknown, StealRing::remote), (std::vector<int>{1, 2}));
}

TEST(VictimRings, TwoWorkersOnTwoCpusHaveOneVictim) {
  const Topology t = TopologyBuilder::synthetic(1, 2, 1);
  for (int self : {0, 1}) {
    const VictimRings r = victim_rings(t, {0, 1}, self);
    std::size_t n = 0;
    for (const auto& g : r) n += g.size();
    EXPECT_EQ(n, 1U);
    EXPECT_EQ(ring(r, StealRing::l3), (std::vector<int>{1 - self}));
  }
}

}  // namespace
}  // namespace weft::detail
