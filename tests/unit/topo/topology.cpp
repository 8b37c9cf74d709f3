#include "weft/topo/topology.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "weft/topo/affinity.hpp"

extern char** environ;

namespace weft {
namespace {

// Set in the environment of the re-executed copy of this binary; holds the
// path the child writes its findings to.
constexpr const char* kChildEnv = "WEFT_TOPO_TEST_CHILD_REPORT";

void expect_consistent(const Topology& t) {
  const CpuSet& allowed = t.allowed();
  ASSERT_FALSE(allowed.empty());

  // Every allowed CPU appears exactly once in pus(), in ascending order.
  std::vector<int> ids;
  for (const Pu& p : t.pus()) ids.push_back(p.os_id);
  EXPECT_EQ(ids, allowed.to_vector());

  for (const Pu& p : t.pus()) {
    SCOPED_TRACE("CPU " + std::to_string(p.os_id));
    EXPECT_EQ(t.pu(p.os_id), &p);
    ASSERT_GE(p.core, 0);
    ASSERT_LT(static_cast<std::size_t>(p.core), t.cores().size());
    EXPECT_TRUE(t.cores()[static_cast<std::size_t>(p.core)].cpus.contains(p.os_id));
    ASSERT_GE(p.package, 0);
    ASSERT_LT(static_cast<std::size_t>(p.package), t.packages().size());
    EXPECT_TRUE(t.packages()[static_cast<std::size_t>(p.package)].cpus.contains(p.os_id));
    EXPECT_EQ(t.cores()[static_cast<std::size_t>(p.core)].package, p.package);
    ASSERT_GE(p.numa, 0);
    ASSERT_LT(static_cast<std::size_t>(p.numa), t.numa_nodes().size());
    EXPECT_TRUE(t.numa_nodes()[static_cast<std::size_t>(p.numa)].cpus.contains(p.os_id));
  }

  // Cores partition the allowed set.
  CpuSet cored;
  int total = 0;
  for (const Core& c : t.cores()) {
    EXPECT_FALSE(c.cpus.empty());
    EXPECT_TRUE((c.cpus & cored).empty()) << "CPUs " << (c.cpus & cored).to_string() << " in two cores";
    cored |= c.cpus;
    total += c.cpus.count();
  }
  EXPECT_EQ(cored, allowed);
  EXPECT_EQ(total, allowed.count());

  // Sibling relation is symmetric and reflexive.
  for (const int a : allowed) {
    const CpuSet sa = t.siblings(a);
    EXPECT_TRUE(sa.contains(a)) << a;
    for (const int b : sa) {
      EXPECT_TRUE(t.siblings(b).contains(a)) << a << " lists " << b << " but not the reverse";
      EXPECT_EQ(t.siblings(b), sa);
    }
  }

  int last_level = 0;
  int last_first = -1;
  for (const Cache& c : t.caches()) {
    EXPECT_FALSE(c.cpus.empty());
    EXPECT_EQ(c.cpus - allowed, CpuSet{}) << "L" << c.level << " holds disallowed CPUs";
    EXPECT_GE(c.level, 1);
    EXPECT_TRUE(c.type == 'D' || c.type == 'U') << c.type;
    EXPECT_GE(c.line_bytes, 0);
    // Ordered by level then first CPU.
    EXPECT_TRUE(c.level > last_level || (c.level == last_level && c.cpus.first() > last_first));
    last_level = c.level;
    last_first = c.cpus.first();
  }
  for (const Package& p : t.packages()) EXPECT_EQ(p.cpus - allowed, CpuSet{});
  for (const NumaNode& n : t.numa_nodes()) EXPECT_EQ(n.cpus - allowed, CpuSet{});

  EXPECT_EQ(t.pu(-1), nullptr);
  EXPECT_EQ(t.pu(CpuSet::kMaxCpus), nullptr);
  EXPECT_TRUE(t.siblings(-1).empty());
  EXPECT_FALSE(t.source().empty());
}

TEST(Topology, DiscoveredTopologyIsConsistent) {
  const Topology t = Topology::discover();
  EXPECT_EQ(t.allowed(), this_thread_affinity());
  expect_consistent(t);
  if (t.source().rfind("hwloc", 0) == 0) {
    EXPECT_TRUE(t.warning().empty()) << t.warning();
  } else {
    EXPECT_FALSE(t.warning().empty()) << "a flat topology must say why";
  }
}

TEST(Topology, InstanceIsOneObjectCoveringTheProcessSet) {
  const Topology* seen[2] = {nullptr, nullptr};
  std::thread a([&] { seen[0] = &Topology::instance(); });
  std::thread b([&] { seen[1] = &Topology::instance(); });
  a.join();
  b.join();
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], &Topology::instance());
  EXPECT_EQ(Topology::instance().allowed(), process_allowed_cpus());
  expect_consistent(Topology::instance());
}

TEST(Topology, SharedCacheLevel) {
  const Topology& t = Topology::instance();
  const int cpu = t.allowed().first();
  int l1 = 0;
  for (const Cache& c : t.caches()) {
    if (c.cpus.contains(cpu)) {
      l1 = c.level;
      break;
    }
  }
  EXPECT_EQ(t.shared_cache_level(cpu, cpu), l1);
  int outside = 0;
  while (t.allowed().contains(outside)) ++outside;
  EXPECT_EQ(t.shared_cache_level(cpu, outside), 0);
  EXPECT_EQ(t.shared_cache_level(-1, cpu), 0);
}

TEST(Topology, FlatTopologyHasOneCorePerCpu) {
  const Topology t = Topology::flat(CpuSet{0, 2, 5}, "testing the fallback");
  expect_consistent(t);
  EXPECT_EQ(t.cores().size(), 3U);
  EXPECT_EQ(t.packages().size(), 1U);
  EXPECT_EQ(t.numa_nodes().size(), 1U);
  EXPECT_TRUE(t.caches().empty());
  EXPECT_FALSE(t.smt());
  EXPECT_EQ(t.warning(), "testing the fallback");
  EXPECT_EQ(t.source(), "flat (sched_getaffinity)");
  EXPECT_EQ(t.siblings(2), CpuSet{2});
  EXPECT_EQ(t.shared_cache_level(0, 2), 0);
}

TEST(Topology, FallsBackToFlatWhenHwlocCannotLoad) {
  // Disabling every discovery component makes hwloc_topology_load fail,
  // which is the path a broken /sys would take.
  const char* old = std::getenv("HWLOC_COMPONENTS");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ASSERT_EQ(setenv("HWLOC_COMPONENTS", "-linux,-x86,-no_os", 1), 0);
  const Topology t = Topology::discover();
  if (saved) {
    setenv("HWLOC_COMPONENTS", saved->c_str(), 1);
  } else {
    unsetenv("HWLOC_COMPONENTS");
  }
  EXPECT_EQ(t.source(), "flat (sched_getaffinity)");
  EXPECT_NE(t.warning().find("hwloc"), std::string::npos) << t.warning();
  EXPECT_EQ(t.allowed(), this_thread_affinity());
  expect_consistent(t);
}

// Runs only inside the copy of this binary that TasksetOneCpuSeesOnlyThatCpu
// starts with a one-CPU affinity, as `taskset -c N` would.
TEST(TopologyChild, SeesOnlyTheCpuItWasGiven) {
  const char* report = std::getenv(kChildEnv);
  if (report == nullptr) {
    GTEST_SKIP() << "helper for TopologyRestricted.TasksetOneCpuSeesOnlyThatCpu; runs only when "
                 << kChildEnv << " is set";
  }
  const Topology t = Topology::discover();
  const Topology& instance = Topology::instance();
  EXPECT_EQ(t.allowed().count(), 1);
  EXPECT_EQ(t.pus().size(), 1U);
  EXPECT_EQ(instance.allowed().count(), 1);
  EXPECT_EQ(instance.pus().size(), 1U);
  EXPECT_EQ(process_allowed_cpus().count(), 1);
  EXPECT_EQ(available_parallelism(), 1);
  expect_consistent(t);
  std::ofstream(report) << t.allowed().to_string() << ' ' << t.pus().size() << ' '
                        << instance.allowed().to_string() << ' ' << available_parallelism() << '\n';
}

TEST(TopologyRestricted, TasksetOneCpuSeesOnlyThatCpu) {
  const int cpu = this_thread_affinity().first();
  ASSERT_GE(cpu, 0);
  const std::filesystem::path report = std::filesystem::temp_directory_path() /
                                       ("weft_topo_child_" + std::to_string(getpid()) + ".txt");
  std::filesystem::remove(report);

  // Everything the child needs is built before fork(): between fork and exec
  // only async-signal-safe calls are allowed.
  std::string exe = "/proc/self/exe";
  std::string filter = "--gtest_filter=TopologyChild.SeesOnlyTheCpuItWasGiven";
  std::vector<char*> argv{exe.data(), filter.data(), nullptr};
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
  env_storage.push_back(std::string(kChildEnv) + "=" + report.string());
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(static_cast<std::size_t>(cpu), &one);

  const pid_t pid = fork();
  ASSERT_NE(pid, -1) << "fork failed";
  if (pid == 0) {
    if (sched_setaffinity(0, sizeof(one), &one) != 0) _exit(90);
    execve(argv[0], argv.data(), envp.data());
    _exit(91);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with status " << status;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "child failed (90: sched_setaffinity, 91: exec, 1: test failure)";

  // A filter that matched nothing would also exit 0: the report proves the
  // child ran its checks.
  std::ifstream in(report);
  std::string allowed, pus, instance_allowed, parallelism;
  in >> allowed >> pus >> instance_allowed >> parallelism;
  EXPECT_EQ(allowed, std::to_string(cpu));
  EXPECT_EQ(pus, "1");
  EXPECT_EQ(instance_allowed, std::to_string(cpu));
  EXPECT_EQ(parallelism, "1");
  std::filesystem::remove(report);
}

}  // namespace
}  // namespace weft
