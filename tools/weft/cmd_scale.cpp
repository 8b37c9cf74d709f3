// weft scale — speed-up curves of weft and oneTBB from one worker to every
// allowed CPU, and with --oversubscribe past them.
#include <fmt/format.h>

#include "cli.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/scale.hpp"

namespace weft::cli {
namespace {

constexpr const char* kTitle = "Scaling: ms per run, speed-up over 1 worker, efficiency (speed-up / workers)";

// The most workers a run may ask for: --workers' own bound.
constexpr long long kMaxWorkers = 256;

void print_compare(const xp::Result& r) {
  print_weft_over_tbb(
      r, [](xp::Key k, const xp::Row& row) { return k.workload(row.labels.workload.value_or("")); },
      [](const xp::Row& row) {
        return fmt::format("{:<6} {} workers", row.labels.workload.value_or(""), row.threads);
      });
  print_ratios(r, "Goals:", 58);
}

struct ScaleOptions {
  int fib_n = 30;
  long long tasks = 200'000;
  int task_ns = 2'000;
  long long pfor_n = 1'000'000;
  int item_ns = 200;
  long long reduce_n = 20'000'000;
  long long group_tasks = 1'000'000;
  int oversubscribe = 1;
  std::vector<std::string> workloads;
};

void to_params(const ScaleOptions& o, xp::ScaleParams& p) {
  if (o.fib_n < 2 || o.fib_n > xp::kScaleMaxFibN)
    throw UsageError(
        fmt::format("--fib-n must be 2 to {} (fib(n) spawns ~1.6^n tasks), got {}", xp::kScaleMaxFibN, o.fib_n));
  p.fib_n = o.fib_n;
  p.tasks = positive64("--tasks", o.tasks, 100'000'000);
  p.task_ns = positive("--task-ns", o.task_ns, 1'000'000);
  p.pfor_n = positive64("--pfor-n", o.pfor_n, 1'000'000'000);
  p.item_ns = positive("--item-ns", o.item_ns, 1'000'000);
  // Each run holds a byte per task or item, and reduce_n doubles.
  p.reduce_n = positive64("--reduce-n", o.reduce_n, 500'000'000);
  p.group_tasks = positive64("--group-tasks", o.group_tasks, 100'000'000);
  if (static_cast<double>(p.tasks) * p.task_ns > 60e9 || static_cast<double>(p.pfor_n) * p.item_ns > 60e9)
    throw UsageError("--tasks x --task-ns or --pfor-n x --item-ns is more than a minute of work per run");
  const int cpus = available_parallelism();
  p.oversubscribe = positive("--oversubscribe", o.oversubscribe, kMaxWorkers);
  if (static_cast<long long>(p.oversubscribe) * cpus > kMaxWorkers)
    throw UsageError(fmt::format("--oversubscribe {} asks for {} workers on {} CPUs: at most {}", p.oversubscribe,
                                 static_cast<long long>(p.oversubscribe) * cpus, cpus, kMaxWorkers));
  if (p.oversubscribe > 1 && !p.workers.empty())
    throw UsageError("--oversubscribe sets the worker counts that --workers gives: use one of them");
  if (!o.workloads.empty()) p.workloads = parse_names("workload", o.workloads, xp::scale_workloads());
}

void add_options(CLI::App& sub, ScaleOptions& o) {
  sub.add_option("--fib-n", o.fib_n,
                 fmt::format("fib(n) of the fib workload (default 30, at most {})", xp::kScaleMaxFibN));
  sub.add_option("--tasks", o.tasks, "Tasks of the tasks workload (default 200,000)");
  sub.add_option("--task-ns", o.task_ns, "Spin per task, ns (default 2000)");
  sub.add_option("--pfor-n", o.pfor_n, "Items of the pfor workload (default 1,000,000)");
  sub.add_option("--item-ns", o.item_ns, "Spin per pfor item, ns (default 200)");
  sub.add_option("--reduce-n", o.reduce_n, "Doubles of the reduce workload (default 20,000,000)");
  sub.add_option("--group-tasks", o.group_tasks, "Tasks of the group and groups workloads (default 1,000,000)");
  sub.add_option("--oversubscribe", o.oversubscribe,
                 "Go on past the allowed CPUs to K times them: 1, 2, 4, ... K x CPUs workers (default 1)");
  sub.add_option("--workload", o.workloads,
                 fmt::format("Workloads, comma list: {} (default {})", fmt::join(xp::scale_workloads(), ", "),
                             fmt::join(xp::scale_default_workloads(), ", ")));
}

const Register reg{make_experiment<ScaleOptions, xp::ScaleParams>(
    {"scale",
     with_workers(3, xp::scale_variants,
                  "Worker counts, comma list (default 1, 2, 4, ... up to the allowed CPUs, times --oversubscribe)"),
     add_options, to_params, xp::run_scale, fixed<xp::ScaleParams>(kTitle), print_compare})};

}  // namespace
}  // namespace weft::cli
