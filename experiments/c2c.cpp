#include "weft/xp/c2c.hpp"

#include <fmt/color.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string_view>
#include <thread>

#include "weft/detail/cache_line.hpp"
#include "weft/harness/run.hpp"
#include "weft/sync/cpu_relax.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

namespace weft::xp {

namespace {

// One sample for the pair (a, b): ns per one-way trip.
double ping_pong(int a, int b, int round_trips) {
  struct alignas(detail::kCacheLine) Line {
    std::atomic<std::uint64_t> v{0};
  } line;
  std::atomic<bool> ready{false};
  std::thread responder([&] {
    pin_this_thread(b);
    ready.store(true, std::memory_order_release);  // release: pinned before the first ping
    for (std::uint64_t k = 1; k < 2 * static_cast<std::uint64_t>(round_trips); k += 2) {
      // acquire/release: each value hands the line's ownership over; the
      // orders keep the compiler from merging or hoisting the accesses.
      while (line.v.load(std::memory_order_acquire) != k) cpu_relax();
      line.v.store(k + 1, std::memory_order_release);
    }
  });
  pin_this_thread(a);
  while (!ready.load(std::memory_order_acquire)) cpu_relax();  // acquire: the responder is pinned
  const std::int64_t t0 = wall_ns();
  for (std::uint64_t k = 1; k < 2 * static_cast<std::uint64_t>(round_trips); k += 2) {
    line.v.store(k, std::memory_order_release);  // as above
    while (line.v.load(std::memory_order_acquire) != k + 1) cpu_relax();
  }
  const std::int64_t t1 = wall_ns();
  responder.join();
  return static_cast<double>(t1 - t0) / (2.0 * round_trips);
}

}  // namespace

Result run_c2c(const C2cParams& p) {
  const Topology& topo = Topology::instance();
  const std::vector<int> cpus = p.cpus.empty() ? topo.allowed().to_vector() : p.cpus;
  const std::size_t n = cpus.size();
  const CpuSet before = this_thread_affinity();

  // Each ordered pair is one variant of the plan.
  std::vector<std::vector<std::vector<double>>> samples(n, std::vector<std::vector<double>>(n));
  const harness::PlanOptions plan{p.samples, true};
  harness::interleave(plan, static_cast<int>(n * n), [&](int k, bool recorded) {
    const auto i = static_cast<std::size_t>(k) / n;
    const auto j = static_cast<std::size_t>(k) % n;
    if (i == j) return;
    const double ns = ping_pong(cpus[i], cpus[j], p.round_trips);
    if (recorded) samples[i][j].push_back(ns);
  });
  pin_this_thread(before);

  Result r;
  r.experiment = "c2c";
  r.params = {{"cpus", cpus}, {"warmup", harness::warmup_text(plan)}};
  nlohmann::json matrix = nlohmann::json::array();
  std::vector<double> medians;
  for (std::size_t i = 0; i < n; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        row.push_back(nullptr);
        continue;
      }
      const Stats st = summarize(samples[i][j]);
      row.push_back(st.median);
      medians.push_back(st.median);
    }
    matrix.push_back(std::move(row));
  }
  r.extra = {{"allowed_cpus", cpus}, {"matrix_ns", matrix}};
  if (medians.empty()) {
    r.notes.push_back("only one CPU allowed: no pair to measure");
    return r;
  }
  double sum = 0;
  for (double m : medians) sum += m;
  const Stats over = summarize(medians);
  Row row = make_row("one_way", 0, "ns_one_way", "ns", {});
  row.stats = over;
  row.stats.reps = p.samples;  // samples per pair; median, min, max are over the pairs
  row.labels.mean = sum / static_cast<double>(medians.size());
  row.labels.pairs = static_cast<int>(medians.size());
  r.rows.push_back(row);
  return r;
}

// The registration: `weft c2c`, its sizes in the report, its heatmap.
namespace {

void print_matrix(const Result& r) {
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
               r.rows[0].stats.max, r.rows[0].labels.mean.value_or(0), r.rows[0].labels.pairs.value_or(0));
}

// --cpus: a CPU list, each CPU allowed; empty: every allowed CPU.
void set_cpus(C2cParams& p, const std::vector<std::string>& values) {
  const std::string& text = values.front();
  if (text.empty()) {
    p.cpus.clear();
    return;
  }
  CpuSet want;
  try {
    want = CpuSet::parse(text);
  } catch (const std::exception& e) {
    const std::string_view w(e.what());
    throw BadParam(fmt::format("--cpus: {}", w.rfind("weft: ", 0) == 0 ? w.substr(6) : w));
  }
  if (want.empty()) throw BadParam("--cpus: no CPU given");
  const CpuSet& allowed = Topology::instance().allowed();
  for (int c : want)
    if (!allowed.contains(c))
      throw BadParam(
          fmt::format("--cpus: CPU {} does not exist or is not allowed (allowed: {})", c, allowed.to_string()));
  p.cpus = want.to_vector();
}

const Register<C2cParams> reg{{
    .name = "c2c", .page = 20, .article = "000_ring_latency", .seconds = {0.5, 0.5, 1},
    .title = "Core-to-core latency",
    .summary = "Core-to-core latency matrix over the allowed CPUs",
    .options = {custom<C2cParams>("--cpus", "CPUs to measure, e.g. 0-3,8", "all allowed", set_cpus,
                                  [](const C2cParams& p) { return reg::join(p.cpus); }),
                integer("--round-trips", &C2cParams::round_trips, "Round trips per sample", 1, 100'000'000),
                integer("--samples", &C2cParams::samples, "Samples per pair, after one warm-up", 1, 10'000)},
    .sizes = {[](C2cParams& p) { p.samples = 3; }, nullptr, [](C2cParams& p) { p.samples = 15; }},
    .run = run_c2c,
    .heading = "Core-to-core latency: two pinned threads bounce one cache line",
    .print = print_matrix,
    .figures = {"c2c_heatmap"},
}};

}  // namespace

}  // namespace weft::xp
