// weft c2c — core-to-core latency matrix.
#include <fmt/color.h>
#include <fmt/format.h>
#include <unistd.h>

#include "cli.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/c2c.hpp"

namespace weft::cli {
namespace {

void print_matrix(const xp::Result& r) {
  const auto& cpus = r.extra["allowed_cpus"];
  const auto& m = r.extra["matrix_ns"];
  const bool colour = isatty(STDOUT_FILENO) != 0;
  double lo = 1e300, hi = 0;
  for (const auto& row : m)
    for (const auto& v : row)
      if (!v.is_null()) {
        lo = std::min(lo, v.get<double>());
        hi = std::max(hi, v.get<double>());
      }
  fmt::print("\nOne-way latency in ns (row: initiator CPU, column: responder CPU):\n{:>5}", "");
  for (const auto& c : cpus) fmt::print(" {:>6}", c.get<int>());
  fmt::print("\n");
  for (std::size_t i = 0; i < m.size(); ++i) {
    fmt::print("{:>5}", cpus[i].get<int>());
    for (const auto& v : m[i]) {
      if (v.is_null()) {
        fmt::print(" {:>6}", "-");
        continue;
      }
      const double x = v.get<double>();
      const std::string cell = fmt::format(" {:>6.0f}", x);
      if (colour && hi > lo) {
        const double t = (x - lo) / (hi - lo);  // green (fast) .. red (slow)
        const auto red = static_cast<std::uint8_t>(80 + 175 * t);
        const auto green = static_cast<std::uint8_t>(80 + 175 * (1 - t));
        fmt::print(fmt::fg(fmt::rgb(red, green, 80)), "{}", cell);
      } else {
        fmt::print("{}", cell);
      }
    }
    fmt::print("\n");
  }
  if (!r.rows.empty())
    fmt::print("min {:.0f} ns, max {:.0f} ns, mean {:.0f} ns over {} pairs\n", r.rows[0].stats.min,
               r.rows[0].stats.max, r.rows[0].labels.mean.value_or(0),
               r.rows[0].labels.pairs.value_or(0));
}

struct C2cOptions {
  std::string cpus;
  int round_trips = 20'000;
  int samples = 7;
};

void to_params(const C2cOptions& o, xp::C2cParams& p) {
  p.round_trips = positive("--round-trips", o.round_trips, 100'000'000);
  p.samples = positive("--samples", o.samples, 10'000);
  if (o.cpus.empty()) return;
  CpuSet want;
  try {
    want = CpuSet::parse(o.cpus);
  } catch (const std::exception& e) {
    const std::string_view w(e.what());
    throw UsageError(fmt::format("--cpus: {}", w.rfind("weft: ", 0) == 0 ? w.substr(6) : w));
  }
  if (want.empty()) throw UsageError("--cpus: no CPU given");
  const CpuSet& allowed = Topology::instance().allowed();
  for (int c : want)
    if (!allowed.contains(c))
      throw UsageError(
          fmt::format("--cpus: CPU {} does not exist or is not allowed (allowed: {})", c, allowed.to_string()));
  p.cpus = want.to_vector();
}

void add_options(CLI::App& sub, C2cOptions& o) {
  sub.add_option("--cpus", o.cpus, "CPUs to measure, e.g. 0-3,8 (default: all allowed)");
  sub.add_option("--round-trips", o.round_trips, "Round trips per sample (default 20000)");
  sub.add_option("--samples", o.samples, "Samples per pair, after one warm-up (default 7)");
}

const Register reg{make_experiment<C2cOptions, xp::C2cParams>(
    {"c2c", {}, add_options, to_params, xp::run_c2c,
     fixed<xp::C2cParams>("Core-to-core latency: two pinned threads bounce one cache line"), print_matrix})};

}  // namespace
}  // namespace weft::cli
