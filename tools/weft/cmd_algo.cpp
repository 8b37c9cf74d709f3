// weft algo — weft's parallel algorithms against std (serial and
// std::execution::par) and oneTBB.
#include <fmt/format.h>

#include "cli.hpp"
#include "weft/xp/algo.hpp"

namespace weft::cli {
namespace {

constexpr const char* kTitle = "Parallel algorithms: ms per run, speed-up over serial, deterministic reductions";

void print_compare(const xp::Result& r) {
  print_weft_over_tbb(
      r, [](xp::Key k, const xp::Row& row) { return k.workload(row.labels.workload.value_or("")); },
      [](const xp::Row& row) {
        return fmt::format("{:<17} {} workers", row.labels.workload.value_or(""), row.threads);
      });
  print_ratios(r, "Goals (at 2 workers):", 58);
}

struct AlgoOptions {
  long long n = 50'000'000;
  long long sort_n = 10'000'000;
  long long pipeline_n = 1'000'000;
  int det_runs = 20;
  std::vector<std::string> workloads;
};

void to_params(const AlgoOptions& o, xp::AlgoParams& p) {
  // The scan holds three arrays of n int64, the stable sort three of sort_n pairs.
  p.n = positive64("--n", o.n, 200'000'000);
  p.sort_n = positive64("--sort-n", o.sort_n, 100'000'000);
  p.pipeline_n = positive64("--pipeline-n", o.pipeline_n, 100'000'000);
  p.det_runs = positive("--det-runs", o.det_runs, 1000);
  if (!o.workloads.empty()) p.workloads = parse_names("workload", o.workloads, xp::algo_workloads());
}

void add_options(CLI::App& sub, AlgoOptions& o) {
  sub.add_option("--n", o.n, "Elements of the reduce, scan and find workloads (default 50,000,000)");
  sub.add_option("--sort-n", o.sort_n, "Elements of the sort workloads (default 10,000,000)");
  sub.add_option("--pipeline-n", o.pipeline_n, "Items of the pipeline workload (default 1,000,000)");
  sub.add_option("--det-runs", o.det_runs, "Runs per worker count (1, 2, 4) for the deterministic rows (default 20)");
  std::string names;
  for (const auto& w : xp::algo_workloads()) names += (names.empty() ? "" : ", ") + w;
  sub.add_option("--workload", o.workloads, "Workloads, comma list: " + names + " (default all)");
}

const Register reg{make_experiment<AlgoOptions, xp::AlgoParams>(
    {"algo", with_workers(5, xp::algo_variants, "Thread counts, comma list (default available_parallelism)"),
     add_options, to_params, xp::run_algo, fixed<xp::AlgoParams>(kTitle), print_compare})};

}  // namespace
}  // namespace weft::cli
