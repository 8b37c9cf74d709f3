#include "weft/detail/topo/builder.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace weft {
namespace {

TEST(TopologyBuilder, Synthetic2x4x2NumbersSiblingsApart) {
  const Topology t = TopologyBuilder::synthetic(2, 4, 2);
  EXPECT_EQ(t.allowed(), CpuSet::parse("0-15"));
  ASSERT_EQ(t.pus().size(), 16U);
  ASSERT_EQ(t.cores().size(), 8U);
  ASSERT_EQ(t.packages().size(), 2U);
  ASSERT_EQ(t.numa_nodes().size(), 2U);
  EXPECT_TRUE(t.smt());
  EXPECT_EQ(t.siblings(0), (CpuSet{0, 8}));
  EXPECT_EQ(t.siblings(12), (CpuSet{4, 12}));
  EXPECT_EQ(t.packages()[0].cpus, CpuSet::parse("0-3,8-11"));
  EXPECT_EQ(t.packages()[1].cpus, CpuSet::parse("4-7,12-15"));
  EXPECT_EQ(t.pu(13)->package, 1);
  EXPECT_EQ(t.pu(13)->numa, 1);
  EXPECT_EQ(t.numa_nodes()[1].os_id, 1);
  // 8 L1d + 8 L2 + 2 L3; the L1i caches were dropped.
  EXPECT_EQ(t.caches().size(), 18U);
  EXPECT_EQ(t.shared_cache_level(0, 8), 1);
  EXPECT_EQ(t.shared_cache_level(0, 1), 3);
  EXPECT_EQ(t.shared_cache_level(0, 4), 0);
  EXPECT_EQ(t.shared_cache_level(3, 3), 1);
}

TEST(TopologyBuilder, SyntheticRestrictedKeepsOnlyAllowedCpus) {
  const Topology t = TopologyBuilder::synthetic(2, 4, 2, 1, CpuSet{0, 1, 8, 12});
  EXPECT_EQ(t.allowed(), (CpuSet{0, 1, 8, 12}));
  ASSERT_EQ(t.cores().size(), 3U);
  EXPECT_EQ(t.cores()[0].cpus, (CpuSet{0, 8}));
  EXPECT_EQ(t.cores()[1].cpus, (CpuSet{1}));
  EXPECT_EQ(t.cores()[2].cpus, (CpuSet{12}));
  EXPECT_EQ(t.cores()[2].package, 1);
  EXPECT_EQ(t.siblings(12), (CpuSet{12}));
  for (const Cache& c : t.caches()) EXPECT_EQ(c.cpus - t.allowed(), CpuSet{});
  // L1d+L2 of the three cores that kept a CPU, and both L3s.
  EXPECT_EQ(t.caches().size(), 8U);
}

TEST(TopologyBuilder, FillsGapsAndResolvesOverlaps) {
  TopologyBuilder b(CpuSet::parse("0-3"));
  b.add_core(CpuSet{1, 2});
  b.add_core(CpuSet{0, 1});
  b.add_core(CpuSet{9});                       // not allowed: dropped
  b.add_cache(2, 'I', 1, 64, CpuSet{0, 1});    // instruction caches are dropped
  const Topology t = b.build();
  ASSERT_EQ(t.cores().size(), 3U);
  EXPECT_EQ(t.cores()[0].cpus, (CpuSet{0, 1}));
  EXPECT_EQ(t.cores()[1].cpus, (CpuSet{2}));
  EXPECT_EQ(t.cores()[2].cpus, (CpuSet{3}));
  ASSERT_EQ(t.packages().size(), 1U);
  EXPECT_EQ(t.packages()[0].cpus, CpuSet::parse("0-3"));
  ASSERT_EQ(t.numa_nodes().size(), 1U);
  EXPECT_EQ(t.numa_nodes()[0].os_id, 0);
  EXPECT_TRUE(t.caches().empty());
  EXPECT_EQ(t.pus().size(), 4U);
}

TEST(TopologyBuilder, SyntheticRejectsBadShapes) {
  EXPECT_THROW(TopologyBuilder::synthetic(0, 4, 2), std::invalid_argument);
  EXPECT_THROW(TopologyBuilder::synthetic(1, 4, 1, 3), std::invalid_argument);
  EXPECT_THROW(TopologyBuilder::synthetic(64, 64, 2), std::invalid_argument);
  try {
    TopologyBuilder::synthetic(1, 5, 1, 2);
    ADD_FAILURE() << "5 cores into 2 L3 slices was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("5 cores"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace weft
