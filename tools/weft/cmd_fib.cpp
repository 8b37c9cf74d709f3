// weft fib — recursive fork-join Fibonacci: the raw cost of a spawn, weft's
// TaskGroup against oneTBB's task_group.
#include <fmt/format.h>

#include <memory>

#include "cli.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/fib.hpp"
#include "weft/xp/tasks.hpp"

namespace weft::cli {
namespace {

constexpr int kMaxWorkers = 256;

std::string title(int n) { return fmt::format("Fork-join fib({}): ms per run and ns per spawned task", n); }

void print_compare(const xp::Result& r) {
  fmt::print("\nweft / tbb time (medians; below 1 means weft is faster):\n");
  bool any = false;
  for (const auto& row : r.rows) {
    if (row.variant != "weft" || row.metric != "ms" || !row.measured) continue;
    for (const auto& other : r.rows) {
      if (other.variant != "tbb" || other.metric != "ms" || other.threads != row.threads || !other.measured ||
          other.extra.value("cutoff", 0) != row.extra.value("cutoff", 0))
        continue;
      const int cutoff = row.extra.value("cutoff", 0);
      fmt::print("  {} threads, {:<10} {:>6.2f}x\n", row.threads,
                 cutoff > 0 ? fmt::format("cutoff {}", cutoff) : std::string("no cutoff"),
                 row.stats.median / other.stats.median);
      any = true;
    }
  }
  if (!any) fmt::print("  (no pair measured)\n");
}

struct FibOptions {
  Common common;
  int n = 30;
  int cutoff = 0;
  std::string workers;
  std::vector<std::string> variants;
  int reps = 5;
};

xp::FibParams to_params(const FibOptions& o) {
  xp::FibParams p;
  if (o.n < 2) throw UsageError(fmt::format("--n must be at least 2, got {}", o.n));
  if (o.n > xp::kFibMaxN) {
    throw UsageError(fmt::format("--n {} is too slow (fib(n) spawns ~1.6^n tasks): at most {}", o.n, xp::kFibMaxN));
  }
  p.n = o.n;
  if (o.cutoff < 0) throw UsageError(fmt::format("--cutoff must be 0 (none) or more, got {}", o.cutoff));
  if (o.cutoff > o.n) throw UsageError(fmt::format("--cutoff {} is above --n {}: nothing would spawn", o.cutoff, o.n));
  p.cutoff = o.cutoff;
  if (!o.workers.empty()) {
    try {
      p.workers = xp::parse_workers(o.workers, kMaxWorkers);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--workers: {}", e.what()));
    }
  }
  if (!o.variants.empty()) p.variants = parse_names("variant", o.variants, xp::fib_variants());
  p.reps = positive("--reps", o.reps, 1000);
  return p;
}

const Register reg{{
    "fib",
    [](CLI::App& app) {
      auto o = std::make_shared<FibOptions>();
      auto* sub = app.add_subcommand("fib", "Recursive fork-join Fibonacci: the cost of a spawn");
      sub->add_option("--n", o->n, fmt::format("fib(n) (default 30, at most {})", xp::kFibMaxN));
      sub->add_option("--cutoff", o->cutoff,
                      "Also measure with calls below this n computed serially (default 0: only no cutoff)");
      sub->add_option("--workers,-w", o->workers, "Thread counts, comma list (default available_parallelism)");
      sub->add_option("--variant", o->variants, "Variants, comma list: serial, weft, tbb (default all)");
      sub->add_option("--reps,-r", o->reps, "Repetitions, interleaved across variants (default 5)");
      sub->add_flag("--json", o->common.json, "Print one JSON object");
      sub->callback([o] {
        const xp::FibParams p = to_params(*o);
        if (validate_only()) return;
        const xp::Result r = xp::run_fib(p);
        emit(r, o->common, title(p.n), [&] { print_compare(r); });
      });
    },
    [](bool quick) {
      xp::FibParams p;
      p.n = quick ? 25 : 30;
      p.reps = quick ? 3 : 5;
      return xp::run_fib(p);
    },
    "Fork-join fib(30) (fib(25) with --quick): ms per run and ns per spawned task",
    print_compare,
}};

}  // namespace
}  // namespace weft::cli
