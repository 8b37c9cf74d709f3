#include "weft/xp/c2c.hpp"

#include <atomic>
#include <thread>

#include "weft/detail/cache_line.hpp"
#include "weft/harness/run.hpp"
#include "weft/sync/cpu_relax.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/topology.hpp"

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
  r.params = {{"cpus", cpus},
              {"round_trips", p.round_trips},
              {"samples", p.samples},
              {"warmup", harness::warmup_text(plan)}};
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

}  // namespace weft::xp
