// weft spin — sleep loops (Intel: sleep loops for power and performance): threads drain a lock-protected work
// queue while the lock's waiters busy-spin, yield, sleep, back off with
// pause, use weft's spin-then-park, or use std::mutex.
#include <fmt/format.h>

#include <algorithm>

#include "cli.hpp"
#include "weft/xp/spin.hpp"

namespace weft::cli {
namespace {

// One matrix per metric: thread counts down, variants across; a '*' marks a
// cell with runs stopped by the time limit.
void print_matrix(const xp::Result& r, const std::string& gran, const std::vector<int>& threads,
                  const std::vector<std::string>& variants, const std::string& metric, const char* what) {
  fmt::print("  {}:\n  {:>7}", what, "threads");
  for (const auto& v : variants) fmt::print(" {:>13}", v);
  fmt::print("\n");
  for (int t : threads) {
    fmt::print("  {:>7}", t);
    for (const auto& v : variants) {
      const xp::Row* row = xp::find(r, xp::Key(v, metric, t).granularity(gran));
      std::string cell = "-";
      if (row != nullptr && row->measured) {
        const double m = row->stats.median;
        cell = m >= 100 ? fmt::format("{:.0f}", m) : fmt::format("{:.3g}", m);
        if (row->labels.stopped_reps.value_or(0) > 0) cell += "*";
      }
      fmt::print(" {:>13}", cell);
    }
    fmt::print("\n");
  }
}

double median_of(const xp::Result& r, const std::string& v, int t, const std::string& g, const std::string& m) {
  return xp::median(r, xp::Key(v, m, t).granularity(g)).value_or(0);
}

void print_published(const xp::Result& r) {
  const auto variants = r.params.value("variants", std::vector<std::string>{});
  const auto threads = r.params.value("threads", std::vector<int>{});
  const auto grans = r.params.value("granularities", std::vector<std::string>{});
  for (const auto& g : grans) {
    fmt::print("\nGranularity {} ({:g} us of work per item), medians (* = stopped by the time limit):\n", g,
               xp::spin_item_us(g));
    print_matrix(r, g, threads, variants, "wall_ms", "wall ms");
    print_matrix(r, g, threads, variants, "cpu_s", "CPU s (power proxy)");
    print_matrix(r, g, threads, variants, "ctx_switches", "context switches");
  }
  const bool have = [&] {
    for (const char* v : {"busy", "yield", "pause-backoff"})
      if (std::find(variants.begin(), variants.end(), v) == variants.end()) return false;
    return true;
  }();
  if (have) {
    fmt::print("\nThis run against the article: wall time of busy and of yield over pause-backoff "
               "(> 1: backoff faster), and busy's CPU time over backoff's:\n");
    fmt::print("  {:<8} {:>7} {:>14} {:>14} {:>14}\n", "gran", "threads", "busy/backoff", "yield/backoff",
               "CPU busy/bkoff");
    for (const auto& g : grans) {
      for (int t : threads) {
        const double b = median_of(r, "pause-backoff", t, g, "wall_ms");
        const double bc = median_of(r, "pause-backoff", t, g, "cpu_s");
        if (b <= 0 || bc <= 0) continue;
        fmt::print("  {:<8} {:>7} {:>14.2f} {:>14.2f} {:>14.2f}\n", g, t, median_of(r, "busy", t, g, "wall_ms") / b,
                   median_of(r, "yield", t, g, "wall_ms") / b, median_of(r, "busy", t, g, "cpu_s") / bc);
      }
    }
  }
  if (!print_article(r, "machine", "method")) return;
  const auto& pub = r.published;
  for (const auto& c : pub.value("claims", nlohmann::json::array())) fmt::print("  - {}\n", c.get<std::string>());
}

struct SpinOptions {
  std::vector<std::string> granularities;
  double work_ms = 800;
  double time_limit = 10;
};

void to_params(const SpinOptions& o, xp::SpinParams& p) {
  if (!o.granularities.empty())
    p.granularities = parse_names("granularity", o.granularities, xp::spin_granularities());
  if (!(o.work_ms >= 1) || o.work_ms > 600'000)
    throw UsageError(fmt::format("--work-ms must be in [1, 600000] ms, got {}", o.work_ms));
  p.work_ms = o.work_ms;
  if (!(o.time_limit > 0) || o.time_limit > 3600)
    throw UsageError(fmt::format("--time-limit must be in (0, 3600] seconds, got {}", o.time_limit));
  p.time_limit_s = o.time_limit;
}

void add_options(CLI::App& sub, SpinOptions& o) {
  sub.add_option("--granularity,-g", o.granularities,
                 "Work per item, comma list: coarse (100 us), medium (10 us), fine (1 us) (default all)");
  sub.add_option("--work-ms", o.work_ms, "Computation per run in ms, summed over its items (default 800)");
  sub.add_option("--time-limit", o.time_limit, "Seconds before a crawling run is stopped (default 10)");
}

constexpr const char* kTitle =
    "Lock-protected work queue: wall ms, CPU s, context switches and energy per waiting strategy";

xp::Result by_granularity(const xp::Result& r) { return label_variants(r, &xp::Labels::granularity); }

constexpr CommonSpec kCommon{.reps = 3,
                             .variants = xp::spin_variants,
                             .variant_flag = "--variant,-v",
                             .counts_flag = "--threads,-t",
                             .counts_help = "Thread counts, comma list (default 2,8,32)",
                             .counts_max = 1024};

const Register reg{make_experiment<SpinOptions, xp::SpinParams>(
    {"spin", kCommon, add_options, to_params, xp::run_spin, fixed<xp::SpinParams>(kTitle), print_published,
     nullptr, by_granularity})};

}  // namespace
}  // namespace weft::cli
