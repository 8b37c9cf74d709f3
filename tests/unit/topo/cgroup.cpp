#include "weft/detail/topo/cgroup.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "weft/topo/topology.hpp"

namespace weft {
namespace {

namespace fs = std::filesystem;
using detail::cgroup_cpu_quota;
using detail::parse_cfs_quota;
using detail::parse_cpu_max;

TEST(CgroupParse, CpuMax) {
  EXPECT_EQ(parse_cpu_max("max 100000"), std::nullopt);
  EXPECT_EQ(parse_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_EQ(parse_cpu_max("150000 100000"), 1.5);
  EXPECT_EQ(parse_cpu_max("50000 100000"), 0.5);
  EXPECT_EQ(parse_cpu_max("200000 100000\n"), 2.0);
}

TEST(CgroupParse, CpuMaxGarbageMeansNoQuota) {
  for (const char* text : {"", "\n", "max", "garbage", "150000", "150000 abc", "abc 100000", "1 2 3",
                           "-5 100000", "100000 0", "1.5 1", "0x10 100"}) {
    EXPECT_EQ(parse_cpu_max(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(CgroupParse, CfsQuota) {
  EXPECT_EQ(parse_cfs_quota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(parse_cfs_quota("150000\n", "100000\n"), 1.5);
  EXPECT_EQ(parse_cfs_quota("50000", "100000"), 0.5);
  EXPECT_EQ(parse_cfs_quota("garbage", "100000"), std::nullopt);
  EXPECT_EQ(parse_cfs_quota("150000", ""), std::nullopt);
  EXPECT_EQ(parse_cfs_quota("150000", "0"), std::nullopt);
}

TEST(CgroupParse, ProcSelfCgroup) {
  const auto v2 = detail::parse_proc_self_cgroup("0::/user.slice/user-1000.slice/session-2.scope\n");
  EXPECT_EQ(v2.v2, "/user.slice/user-1000.slice/session-2.scope");
  EXPECT_EQ(v2.v1_cpu, std::nullopt);

  const auto v1 = detail::parse_proc_self_cgroup(
      "9:name=systemd:/\n4:memory:/m\n2:cpuacct:/acct\n1:cpu,cpuacct:/docker/abc:def\n");
  EXPECT_EQ(v1.v1_cpu, "/docker/abc:def");
  EXPECT_EQ(v1.v2, std::nullopt);

  const auto none = detail::parse_proc_self_cgroup("not a cgroup file");
  EXPECT_EQ(none.v2, std::nullopt);
  EXPECT_EQ(none.v1_cpu, std::nullopt);
}

TEST(CgroupParse, Mountinfo) {
  const auto m = detail::parse_mountinfo(
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
      "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
      "41 31 0:38 /docker/x /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
      "garbage line\n");
  ASSERT_EQ(m.v1_cpu.size(), 1U);
  EXPECT_EQ(m.v1_cpu[0].mount_point, "/sys/fs/cgroup/cpu");
  EXPECT_EQ(m.v1_cpu[0].root, "/");
  ASSERT_EQ(m.v2.size(), 1U);
  EXPECT_EQ(m.v2[0].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m.v2[0].root, "/docker/x");
}

// A fake cgroup tree under a temporary directory.
class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("weft_cgroup_test_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string v2_mount(const std::string& root = "/") const {
    return "41 31 0:38 " + root + " " + (root_ / "unified").string() + " rw - cgroup2 cgroup2 rw\n";
  }
  std::string v1_mount() const {
    return "32 31 0:29 / " + (root_ / "cpu").string() + " rw - cgroup cgroup rw,cpu,cpuacct\n";
  }

  fs::path root_;
};

TEST_F(CgroupTree, NoFilesMeansNoQuota) {
  EXPECT_EQ(cgroup_cpu_quota("0::/a/b\n", v2_mount()), 0.0);
  EXPECT_EQ(cgroup_cpu_quota("1:cpu:/a\n", v1_mount()), 0.0);
}

TEST_F(CgroupTree, V2QuotaOnTheCgroupItself) {
  write("unified/a/b/cpu.max", "150000 100000\n");
  write("unified/a/cpu.max", "max 100000\n");
  EXPECT_EQ(cgroup_cpu_quota("0::/a/b\n", v2_mount()), 1.5);
}

TEST_F(CgroupTree, V2TightestAncestorWins) {
  write("unified/a/b/cpu.max", "max 100000\n");
  write("unified/a/cpu.max", "50000 100000\n");
  write("unified/cpu.max", "300000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota("0::/a/b\n", v2_mount()), 0.5);
}

TEST_F(CgroupTree, V2MountRootIsStripped) {
  // A container sees its own cgroup mounted as the root of the hierarchy.
  write("unified/sub/cpu.max", "250000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota("0::/docker/x/sub\n", v2_mount("/docker/x")), 2.5);
}

TEST_F(CgroupTree, V1Quota) {
  write("cpu/a/cpu.cfs_quota_us", "-1\n");
  write("cpu/a/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroup_cpu_quota("3:cpu,cpuacct:/a\n", v1_mount()), 0.0);
  write("cpu/cpu.cfs_quota_us", "250000\n");
  write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroup_cpu_quota("3:cpu,cpuacct:/a\n", v1_mount()), 2.5);
}

TEST_F(CgroupTree, GarbageFileMeansNoQuota) {
  write("unified/a/cpu.max", "garbage\n");
  EXPECT_EQ(cgroup_cpu_quota("0::/a\n", v2_mount()), 0.0);
}

TEST(AvailableParallelism, IsCappedByQuotaAndAtLeastOne) {
  const int cpus = process_allowed_cpus().count();
  const double quota = weft::cgroup_cpu_quota();
  EXPECT_GE(quota, 0.0);
  const int n = available_parallelism();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, cpus);
  if (quota > 0 && quota < cpus) {
    EXPECT_EQ(n, static_cast<int>(std::ceil(quota)));
  } else {
    EXPECT_EQ(n, cpus);
  }
}

}  // namespace
}  // namespace weft
