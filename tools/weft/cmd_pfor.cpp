// weft pfor — what a parallel_for costs: weft's against oneTBB's.
#include <fmt/format.h>

#include <memory>

#include "cli.hpp"
#include "weft/xp/pfor.hpp"
#include "weft/xp/tasks.hpp"

namespace weft::cli {
namespace {

constexpr int kMaxWorkers = 256;
constexpr const char* kTitle = "parallel_for: ms per run and ns per item (spin: ~1 us items; sum: 10^7 ints)";

void print_compare(const xp::Result& r) {
  fmt::print("\nweft / tbb time (medians; below 1 means weft is faster):\n");
  for (const auto& row : r.rows) {
    if (row.variant != "weft" || row.metric != "ms" || !row.measured) continue;
    for (const auto& other : r.rows) {
      if (other.variant == "tbb" && other.metric == "ms" && other.measured && other.threads == row.threads &&
          other.extra.value("workload", std::string()) == row.extra.value("workload", std::string()))
        fmt::print("  {:<5} {} threads {:>6.2f}x\n", row.extra.value("workload", std::string()), row.threads,
                   row.stats.median / other.stats.median);
    }
  }
}

struct PforOptions {
  Common common;
  int rounds = 100;
  int items = 1000;
  int work_ns = 1000;
  long long sum_n = 10'000'000;
  std::string workers;
  std::vector<std::string> variants;
  int reps = 5;
};

xp::PforParams to_params(const PforOptions& o) {
  xp::PforParams p;
  p.rounds = positive("--rounds", o.rounds, 100'000);
  p.items = positive("--items", o.items, 10'000'000);
  p.work_ns = positive("--work-ns", o.work_ns, 1'000'000);
  p.sum_n = positive("--sum-n", o.sum_n, 1'000'000'000);
  if (static_cast<double>(p.rounds) * p.items * p.work_ns > 600e9)
    throw UsageError("--rounds x --items x --work-ns is more than 10 minutes of serial work");
  if (!o.workers.empty()) {
    try {
      p.workers = xp::parse_workers(o.workers, kMaxWorkers);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--workers: {}", e.what()));
    }
  }
  if (!o.variants.empty()) p.variants = parse_names("variant", o.variants, xp::pfor_variants());
  p.reps = positive("--reps", o.reps, 1000);
  return p;
}

const Register reg{{
    "pfor",
    [](CLI::App& app) {
      auto o = std::make_shared<PforOptions>();
      auto* sub = app.add_subcommand("pfor", "parallel_for overhead: many small loops, and a big sum");
      sub->add_option("--rounds", o->rounds, "parallel_for calls in the spin workload (default 100)");
      sub->add_option("--items", o->items, "Items per call (default 1000)");
      sub->add_option("--work-ns", o->work_ns, "Spin per item, ns (default 1000)");
      sub->add_option("--sum-n", o->sum_n, "Integers in the sum workload (default 10,000,000)");
      sub->add_option("--workers,-w", o->workers, "Thread counts, comma list (default available_parallelism)");
      sub->add_option("--variant", o->variants, "Variants, comma list: serial, weft, tbb (default all)");
      sub->add_option("--reps,-r", o->reps, "Repetitions, interleaved across variants (default 5)");
      sub->add_flag("--json", o->common.json, "Print one JSON object");
      sub->callback([o] {
        if (validate_only()) { (void)to_params(*o); return; }
        const xp::Result r = xp::run_pfor(to_params(*o));
        emit(r, o->common, kTitle, [&] { print_compare(r); });
      });
    },
    [](bool quick) {
      xp::PforParams p;
      p.reps = quick ? 3 : 5;
      if (quick) p.rounds = 50;
      return xp::run_pfor(p);
    },
    kTitle,
    print_compare,
}};

}  // namespace
}  // namespace weft::cli
