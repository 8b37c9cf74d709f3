// weft/detail/topo/cgroup.hpp — the cgroup CPU quota, parsed from file contents.
//
// available_parallelism() and cgroup_cpu_quota() read the live files; the
// parsing lives here, apart from the reading, so tests can feed it strings
// and a fake /sys/fs/cgroup tree. Not part of the stable API.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::detail {

// cgroup v2 cpu.max: "<quota> <period>" in microseconds, or "max <period>"
// for no limit. Returns the quota in CPUs (150000 100000 -> 1.5), nullopt
// for no limit. Malformed text also gives nullopt: a file weft cannot read
// must not throttle the program.
std::optional<double> parse_cpu_max(std::string_view text);

// cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us; quota -1 means no limit.
// Same result convention as parse_cpu_max.
std::optional<double> parse_cfs_quota(std::string_view quota_us, std::string_view period_us);

// Where this process sits, from /proc/self/cgroup: the v2 path (the "0::"
// line) and the v1 path of the hierarchy that has the "cpu" controller.
struct CgroupPaths {
  std::optional<std::string> v2;
  std::optional<std::string> v1_cpu;
};
CgroupPaths parse_proc_self_cgroup(std::string_view text);

// A mounted cgroup hierarchy, from /proc/self/mountinfo: `root` is the
// hierarchy path mounted at `mount_point` (not "/" inside some containers).
struct CgroupMount {
  std::string root;
  std::string mount_point;
};
struct CgroupMounts {
  std::vector<CgroupMount> v2;
  std::vector<CgroupMount> v1_cpu;
};
CgroupMounts parse_mountinfo(std::string_view text);

// The tightest quota, in CPUs, over the process's cgroup and its ancestors
// (a parent's limit binds its children), in both v2 and v1 hierarchies;
// 0 when none is set or no file can be read. Takes the text of
// /proc/self/cgroup and /proc/self/mountinfo; when `mountinfo` names no
// cgroup mount it looks at the usual places under /sys/fs/cgroup.
double cgroup_cpu_quota(std::string_view proc_self_cgroup, std::string_view mountinfo);

}  // namespace weft::detail
