// weft pfor — what a parallel_for costs: weft's against oneTBB's.
#include <fmt/format.h>

#include "cli.hpp"
#include "weft/xp/pfor.hpp"

namespace weft::cli {
namespace {

constexpr const char* kTitle = "parallel_for: ms per run and ns per item (spin: ~1 us items; sum: 10^7 ints)";

void print_compare(const xp::Result& r) {
  print_weft_over_tbb(
      r, [](xp::Key k, const xp::Row& row) { return k.workload(row.labels.workload.value_or("")); },
      [](const xp::Row& row) { return fmt::format("{:<5} {} threads", row.labels.workload.value_or(""), row.threads); });
}

struct PforOptions {
  int rounds = 100;
  int items = 1000;
  int work_ns = 1000;
  long long sum_n = 10'000'000;
};

void to_params(const PforOptions& o, xp::PforParams& p) {
  p.rounds = positive("--rounds", o.rounds, 100'000);
  p.items = positive("--items", o.items, 10'000'000);
  p.work_ns = positive("--work-ns", o.work_ns, 1'000'000);
  p.sum_n = positive("--sum-n", o.sum_n, 1'000'000'000);
  if (static_cast<double>(p.rounds) * p.items * p.work_ns > 600e9)
    throw UsageError("--rounds x --items x --work-ns is more than 10 minutes of serial work");
}

void add_options(CLI::App& sub, PforOptions& o) {
  sub.add_option("--rounds", o.rounds, "parallel_for calls in the spin workload (default 100)");
  sub.add_option("--items", o.items, "Items per call (default 1000)");
  sub.add_option("--work-ns", o.work_ns, "Spin per item, ns (default 1000)");
  sub.add_option("--sum-n", o.sum_n, "Integers in the sum workload (default 10,000,000)");
}

const Register reg{make_experiment<PforOptions, xp::PforParams>(
    {"pfor", with_workers(5, xp::pfor_variants, "Thread counts, comma list (default available_parallelism)"), add_options, to_params, xp::run_pfor, fixed<xp::PforParams>(kTitle), print_compare})};

}  // namespace
}  // namespace weft::cli
