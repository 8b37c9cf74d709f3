// weft idle — the CPU a pool burns idle and with one task per millisecond, and
// the latency from post to start that the burning buys.
#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "cli.hpp"
#include "weft/xp/idle.hpp"

namespace weft::cli {
namespace {

constexpr const char* kTitle =
    "Idle pools: process CPU ms over 1 s idle and over 2 s with a task every 1 ms, and the post-to-start latency";

void print_above_baseline(const xp::Result& r) {
  const auto base = xp::median(r, xp::Key("baseline", "cpu_ms_tick_2s"));
  if (!base) return;
  fmt::print("\nWith a task every 1 ms (medians): CPU ms above the baseline over 2 s, and the wait from post "
             "to start:\n");
  fmt::print("  {:<14} {:>10} {:>14} {:>14}\n", "pool", "CPU ms", "start us", "start p99 us");
  for (const auto& row : r.rows) {
    if (row.variant == "baseline" || row.metric != "cpu_ms_tick_2s" || !row.measured) continue;
    const auto start = xp::median(r, xp::Key(row.variant, "start_latency_us"));
    const auto p99 = xp::median(r, xp::Key(row.variant, "start_latency_p99_us"));
    fmt::print("  {:<14} {:>10.1f} {:>14.1f} {:>14.1f}\n", row.variant, row.stats.median - *base, start.value_or(0),
               p99.value_or(0));
  }
}

struct IdleOptions {
  double seconds = 1.0;
  std::optional<int> workers;  // unset: available_parallelism()
  std::string child;           // hidden: the re-executed measurement
};

// Each measurement in a child process of its own, so that threads another
// variant left behind (oneTBB keeps its workers) are not counted.
constexpr const char* kChild = "/proc/self/exe";

void to_params(const IdleOptions& o, xp::IdleParams& p) {
  if (!(o.seconds >= 0.05) || o.seconds > 60)
    throw UsageError(fmt::format("--seconds must be in [0.05, 60], got {}", o.seconds));
  p.seconds = o.seconds;
  if (o.workers) p.workers = positive("--workers", *o.workers, 256);
  p.child_exe = kChild;
}

void add_options(CLI::App& sub, IdleOptions& o) {
  sub.add_option("--seconds", o.seconds, "Idle phase length; the tick phase is twice it (default 1)");
  sub.add_option("--workers,-w", o.workers, "Workers per pool (default available_parallelism)");
  sub.add_option("--internal-child", o.child, "Internal: one measurement, for the parent process")->group("");
}

bool run_child(const IdleOptions& o) {
  if (o.child.empty()) return false;
  if (xp::run_idle_child(o.child) != 0) throw std::runtime_error("idle: writing the measurement failed");
  return true;
}

const Register reg{make_experiment<IdleOptions, xp::IdleParams>(
    {"idle", {.reps = 3, .variants = xp::idle_variants}, add_options, to_params, xp::run_idle,
     fixed<xp::IdleParams>(kTitle), print_above_baseline, run_child})};

}  // namespace
}  // namespace weft::cli
