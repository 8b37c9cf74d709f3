#include "weft/detail/topo/cgroup.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>

#include "weft/detail/topo/text.hpp"
#include "weft/topo/topology.hpp"

namespace weft {

namespace detail {

namespace {

std::optional<std::int64_t> parse_int(std::string_view text) {
  text = trim(text);
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  while (true) {
    const auto b = text.find_first_not_of(kSpace);
    if (b == std::string_view::npos) return out;
    text.remove_prefix(b);
    const auto e = text.find_first_of(kSpace);
    out.push_back(text.substr(0, e));
    if (e == std::string_view::npos) return out;
    text.remove_prefix(e);
  }
}

std::optional<double> ratio(std::int64_t quota, std::int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return static_cast<double>(quota) / static_cast<double>(period);
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The directories to look in for `path`, from the cgroup itself up to the
// mount point. When the mount's root is a prefix of the path (a container
// that sees its own cgroup as the root) the prefix is dropped; otherwise the
// walk still ends at the mount point, which is the closest ancestor visible.
std::vector<std::string> walk_up(const CgroupMount& mount, std::string path) {
  if (mount.root != "/" && path.rfind(mount.root, 0) == 0) path.erase(0, mount.root.size());
  std::vector<std::string> dirs;
  while (true) {
    while (!path.empty() && path.back() == '/') path.pop_back();
    dirs.push_back(mount.mount_point + path);
    if (path.empty()) return dirs;
    path.erase(path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
  }
}

void keep_tightest(std::optional<double>& best, std::optional<double> candidate) {
  if (candidate && (!best || *candidate < *best)) best = candidate;
}

}  // namespace

std::optional<double> parse_cpu_max(std::string_view text) {
  const auto w = words(text);
  if (w.size() != 2 || w[0] == "max") return std::nullopt;
  const auto quota = parse_int(w[0]);
  const auto period = parse_int(w[1]);
  if (!quota || !period) return std::nullopt;
  return ratio(*quota, *period);
}

std::optional<double> parse_cfs_quota(std::string_view quota_us, std::string_view period_us) {
  const auto quota = parse_int(quota_us);
  const auto period = parse_int(period_us);
  if (!quota || !period) return std::nullopt;
  return ratio(*quota, *period);
}

CgroupPaths parse_proc_self_cgroup(std::string_view text) {
  CgroupPaths paths;
  for (const std::string_view raw : split(text, '\n')) {
    const std::string_view line = trim(raw);
    // "hierarchy-id:controller,list:/path"; the path itself may hold ':'.
    const auto first = line.find(':');
    if (first == std::string_view::npos) continue;
    const auto second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string path(line.substr(second + 1));
    if (id == "0" && controllers.empty()) {
      paths.v2 = path;
      continue;
    }
    const auto list = split(controllers, ',');
    if (std::find(list.begin(), list.end(), "cpu") != list.end()) paths.v1_cpu = path;
  }
  return paths;
}

CgroupMounts parse_mountinfo(std::string_view text) {
  CgroupMounts mounts;
  for (const std::string_view line : split(text, '\n')) {
    // "id parent major:minor root mount-point options [optional...] - fstype source super-options"
    const auto w = words(line);
    const auto dash = std::find(w.begin(), w.end(), "-");
    if (w.size() < 5 || dash == w.end() || std::distance(dash, w.end()) < 2) continue;
    const std::string_view fstype = *(dash + 1);
    CgroupMount mount{std::string(w[3]), std::string(w[4])};
    if (fstype == "cgroup2") {
      mounts.v2.push_back(std::move(mount));
    } else if (fstype == "cgroup" && std::distance(dash, w.end()) >= 4) {
      const auto options = split(*(dash + 3), ',');
      if (std::find(options.begin(), options.end(), "cpu") != options.end()) {
        mounts.v1_cpu.push_back(std::move(mount));
      }
    }
  }
  return mounts;
}

double cgroup_cpu_quota(std::string_view proc_self_cgroup, std::string_view mountinfo) {
  const CgroupPaths paths = parse_proc_self_cgroup(proc_self_cgroup);
  CgroupMounts mounts = parse_mountinfo(mountinfo);
  if (mounts.v2.empty() && mounts.v1_cpu.empty()) {
    mounts.v2.push_back({"/", "/sys/fs/cgroup"});
    mounts.v1_cpu.push_back({"/", "/sys/fs/cgroup/cpu,cpuacct"});
    mounts.v1_cpu.push_back({"/", "/sys/fs/cgroup/cpu"});
  }
  std::optional<double> best;
  if (paths.v2) {
    for (const CgroupMount& mount : mounts.v2) {
      for (const std::string& dir : walk_up(mount, *paths.v2)) {
        if (const auto text = read_file(dir + "/cpu.max")) keep_tightest(best, parse_cpu_max(*text));
      }
    }
  }
  if (paths.v1_cpu) {
    for (const CgroupMount& mount : mounts.v1_cpu) {
      for (const std::string& dir : walk_up(mount, *paths.v1_cpu)) {
        const auto quota = read_file(dir + "/cpu.cfs_quota_us");
        const auto period = read_file(dir + "/cpu.cfs_period_us");
        if (quota && period) keep_tightest(best, parse_cfs_quota(*quota, *period));
      }
    }
  }
  return best.value_or(0.0);
}

}  // namespace detail

double cgroup_cpu_quota() {
  const auto read = [](const char* path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  return detail::cgroup_cpu_quota(read("/proc/self/cgroup"), read("/proc/self/mountinfo"));
}

int available_parallelism() {
  int cpus = 0;
  try {
    cpus = process_allowed_cpus().count();
  } catch (const std::system_error&) {
    // The affinity is unreadable only on exotic kernels; the CPU count the
    // standard library sees is the next best answer.
    cpus = static_cast<int>(std::thread::hardware_concurrency());
  }
  const double quota = cgroup_cpu_quota();
  // Compared as doubles first: a huge quota must not overflow the cast.
  if (quota > 0 && quota < static_cast<double>(cpus)) cpus = static_cast<int>(std::ceil(quota));
  return std::max(cpus, 1);
}

}  // namespace weft
