// weft topo — the machine as this process may use it.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cli.hpp"
#include "weft/sync/wait_options.hpp"
#include "weft/topo/topology.hpp"

namespace weft::cli {
namespace {

std::string human_bytes(std::uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return fmt::format("{} GiB", b >> 30);
  if (b >= (1ull << 20)) return fmt::format("{} MiB", b >> 20);
  if (b >= (1ull << 10)) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

bool subset(const CpuSet& a, const CpuSet& b) { return (a & b) == a; }

// Caches from `level` down whose CPUs lie in `scope`, then the cores.
void print_caches(const Topology& t, const CpuSet& scope, int level, int indent) {
  const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
  if (level == 0) {
    for (std::size_t c = 0; c < t.cores().size(); ++c) {
      const Core& core = t.cores()[c];
      if (!subset(core.cpus, scope)) continue;
      std::string pus;
      for (int cpu : core.cpus) pus += fmt::format("{}PU {}", pus.empty() ? "" : ", ", cpu);
      fmt::print("{}Core {}: {}\n", pad, c, pus);
    }
    return;
  }
  bool any = false;
  for (const Cache& cache : t.caches()) {
    if (cache.level != level || !subset(cache.cpus, scope)) continue;
    any = true;
    fmt::print("{}L{}{} {} (CPUs {})\n", pad, cache.level, cache.type == 'D' ? "d" : "",
               human_bytes(cache.size_bytes), cache.cpus.to_string());
    print_caches(t, cache.cpus, level - 1, indent + 1);
  }
  if (!any) print_caches(t, scope, level - 1, indent);
}

nlohmann::json topo_json(const Topology& t) {
  nlohmann::json j;
  j["experiment"] = xp::kTopo.name;
  j["machine"] = xp::machine_context();
  j["params"] = nlohmann::json::object();
  j["results"] = nlohmann::json::array();
  j["published"] = nullptr;
  j["allowed_cpus"] = t.allowed().to_vector();
  j["cores"] = t.cores().size();
  j["smt"] = t.smt();
  j["available_parallelism"] = available_parallelism();
  j["cgroup_cpu_quota"] = cgroup_cpu_quota();
  j["source"] = t.source();
  if (!t.warning().empty()) j["warning"] = t.warning();
  nlohmann::json cores = nlohmann::json::array();
  for (const Core& c : t.cores()) cores.push_back({{"package", c.package}, {"cpus", c.cpus.to_vector()}});
  j["core_list"] = cores;
  nlohmann::json pk = nlohmann::json::array();
  for (const Package& p : t.packages()) pk.push_back({{"cpus", p.cpus.to_vector()}});
  j["packages"] = pk;
  nlohmann::json numa = nlohmann::json::array();
  for (const NumaNode& n : t.numa_nodes())
    numa.push_back({{"os_id", n.os_id}, {"memory_bytes", n.memory_bytes}, {"cpus", n.cpus.to_vector()}});
  j["numa_nodes"] = numa;
  nlohmann::json caches = nlohmann::json::array();
  for (const Cache& c : t.caches())
    caches.push_back({{"level", c.level},
                      {"type", std::string(1, c.type)},
                      {"size_bytes", c.size_bytes},
                      {"line_bytes", c.line_bytes},
                      {"cpus", c.cpus.to_vector()}});
  j["caches"] = caches;
  nlohmann::json sib = nlohmann::json::object();
  for (const Pu& pu : t.pus()) sib[std::to_string(pu.os_id)] = t.siblings(pu.os_id).to_vector();
  j["smt_siblings"] = sib;
  j["default_spin_ns"] = WaitOptions::default_spin().count();
  return j;
}

void print_tree(const Topology& t) {
  print_machine_header();
  fmt::print("\nTopology ({}), restricted to the allowed CPUs {}:\n", t.source(), t.allowed().to_string());
  int max_level = 0;
  for (const Cache& c : t.caches()) max_level = std::max(max_level, c.level);
  for (std::size_t p = 0; p < t.packages().size(); ++p) {
    const Package& pkg = t.packages()[p];
    fmt::print("Package {} (CPUs {})\n", p, pkg.cpus.to_string());
    for (const NumaNode& n : t.numa_nodes()) {
      if ((n.cpus & pkg.cpus).empty()) continue;
      fmt::print("  NUMA node {} ({}{}, CPUs {})\n", n.os_id,
                 n.memory_bytes ? human_bytes(n.memory_bytes) : std::string("memory unknown"),
                 "", (n.cpus & pkg.cpus).to_string());
      print_caches(t, n.cpus & pkg.cpus, max_level, 2);
    }
    if (t.numa_nodes().empty()) print_caches(t, pkg.cpus, max_level, 1);
  }
  fmt::print("\nSMT: {}", t.smt() ? "yes" : "no");
  if (t.smt()) {
    std::string groups;
    for (const Core& c : t.cores())
      if (c.cpus.count() > 1) groups += (groups.empty() ? "" : "; ") + c.cpus.to_string();
    fmt::print(" (siblings: {})", groups);
  }
  const double quota = cgroup_cpu_quota();
  fmt::print("\navailable_parallelism: {}{}\n", available_parallelism(),
             quota > 0 ? fmt::format(" (cgroup CPU quota {:.2f} CPUs)", quota) : std::string());
  fmt::print("default spin budget: {} ns\n", WaitOptions::default_spin().count());
  if (!t.warning().empty()) fmt::print("WARNING: {}\n", t.warning());
}

const Register reg{{
    xp::kTopo.name,
    xp::kTopo.summary,
    [](CLI::App& sub) {
      struct Opts {
        bool json = false;
        bool calibrate = false;
      };
      auto o = std::make_shared<Opts>();
      sub.add_flag("--json", o->json, "Print one JSON object");
      sub.add_flag("--calibrate", o->calibrate,
                   "Also measure park+wake latency here and the spin budget it implies (a few ms)");
      sub.callback([o] {
        if (validate_only()) return;
        const Topology& t = Topology::instance();
        std::optional<Calibration> cal;
        if (o->calibrate) cal = calibrate(400);
        if (o->json) {
          nlohmann::json j = topo_json(t);
          if (cal) {
            j["calibration"] = {{"pause_ns", cal->pause_ns},     {"wake_ns", cal->wake_ns},
                                {"wake_min_ns", cal->wake_min_ns}, {"wake_max_ns", cal->wake_max_ns},
                                {"notify_ns", cal->notify_ns},   {"samples", cal->samples},
                                {"spin_ns", cal->spin.count()}};
          }
          fmt::print("{}\n", j.dump(2));
          return;
        }
        print_tree(t);
        if (cal) {
          fmt::print(
              "calibration ({} wake-ups): pause {:.1f} ns; futex park->wake median {:.1f} us "
              "(min {:.1f}, max {:.1f}); waker's system call {:.1f} us; recommended spin budget {} ns\n",
              cal->samples, cal->pause_ns, cal->wake_ns / 1e3, cal->wake_min_ns / 1e3, cal->wake_max_ns / 1e3,
              cal->notify_ns / 1e3, cal->spin.count());
        }
      });
    },
}};

}  // namespace
}  // namespace weft::cli
