// weft idle — the CPU a pool burns idle, and with one task per millisecond.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <stdexcept>

#include "cli.hpp"
#include "weft/xp/idle.hpp"

namespace weft::cli {
namespace {

constexpr const char* kTitle = "Idle pools: process CPU ms over 1 s idle, and over 2 s with a task every 1 ms";

void print_above_baseline(const xp::Result& r) {
  const xp::Row* base = nullptr;
  for (const auto& row : r.rows)
    if (row.variant == "baseline" && row.metric == "cpu_ms_tick_2s" && row.measured) base = &row;
  if (base == nullptr) return;
  fmt::print("\nCPU ms above the baseline with a task every 1 ms (2 s; medians):\n");
  for (const auto& row : r.rows) {
    if (row.variant == "baseline" || row.metric != "cpu_ms_tick_2s" || !row.measured) continue;
    fmt::print("  {:<14} {:>8.1f}\n", row.variant, row.stats.median - base->stats.median);
  }
}

struct IdleOptions {
  Common common;
  double seconds = 1.0;
  std::optional<int> workers;  // unset: available_parallelism()
  std::vector<std::string> variants;
  int reps = 3;
  std::string child;  // hidden: the re-executed measurement
};

xp::IdleParams to_params(const IdleOptions& o) {
  xp::IdleParams p;
  if (!(o.seconds >= 0.05) || o.seconds > 60)
    throw UsageError(fmt::format("--seconds must be in [0.05, 60], got {}", o.seconds));
  p.seconds = o.seconds;
  if (o.workers) p.workers = positive("--workers", *o.workers, 256);
  if (!o.variants.empty()) p.variants = parse_names("variant", o.variants, xp::idle_variants());
  p.reps = positive("--reps", o.reps, 1000);
  // Each measurement in a child process of its own, so that threads another
  // variant left behind (oneTBB keeps its workers) are not counted.
  p.child_exe = "/proc/self/exe";
  return p;
}

const Register reg{{
    "idle",
    [](CLI::App& app) {
      auto o = std::make_shared<IdleOptions>();
      auto* sub = app.add_subcommand("idle", "CPU burnt by an idle pool, and by one task per millisecond");
      sub->add_option("--seconds", o->seconds, "Idle phase length; the tick phase is twice it (default 1)");
      sub->add_option("--workers,-w", o->workers, "Workers per pool (default available_parallelism)");
      sub->add_option("--variant", o->variants,
                      "Variants, comma list: baseline, weft, tbb, asio-post, article-pool (default all)");
      sub->add_option("--reps,-r", o->reps, "Repetitions, interleaved across variants (default 3)");
      sub->add_flag("--json", o->common.json, "Print one JSON object");
      sub->add_option("--internal-child", o->child, "Internal: one measurement, for the parent process")
          ->group("");
      sub->callback([o] {
        if (!o->child.empty()) {
          if (xp::run_idle_child(o->child) != 0) throw std::runtime_error("idle: writing the measurement failed");
          return;
        }
        if (validate_only()) { (void)to_params(*o); return; }
        const xp::Result r = xp::run_idle(to_params(*o));
        emit(r, o->common, kTitle, [&] { print_above_baseline(r); });
      });
    },
    [](bool quick) {
      xp::IdleParams p;
      // About 4 s quick, 16 s otherwise (each measurement is 3x `seconds`).
      p.seconds = quick ? 0.25 : 0.5;
      p.reps = quick ? 1 : 2;
      p.child_exe = "/proc/self/exe";
      return xp::run_idle(p);
    },
    kTitle,
    print_above_baseline,
}};

}  // namespace
}  // namespace weft::cli
