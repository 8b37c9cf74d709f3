// weft fib — recursive fork-join Fibonacci: the raw cost of a spawn, weft's
// TaskGroup against oneTBB's task_group.
#include <fmt/format.h>

#include "cli.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/fib.hpp"

namespace weft::cli {
namespace {

std::string title(int n) { return fmt::format("Fork-join fib({}): ms per run and ns per spawned task", n); }

void print_compare(const xp::Result& r) {
  print_weft_over_tbb(
      r, [](xp::Key k, const xp::Row& row) { return k.cutoff(row.labels.cutoff.value_or(0)); },
      [](const xp::Row& row) {
        const int cutoff = row.labels.cutoff.value_or(0);
        return fmt::format("{} threads, {:<10}", row.threads,
                           cutoff > 0 ? fmt::format("cutoff {}", cutoff) : std::string("no cutoff"));
      });
}

struct FibOptions {
  int n = 30;
  int cutoff = 0;
};

void to_params(const FibOptions& o, xp::FibParams& p) {
  if (o.n < 2) throw UsageError(fmt::format("--n must be at least 2, got {}", o.n));
  if (o.n > xp::kFibMaxN) {
    throw UsageError(fmt::format("--n {} is too slow (fib(n) spawns ~1.6^n tasks): at most {}", o.n, xp::kFibMaxN));
  }
  p.n = o.n;
  if (o.cutoff < 0) throw UsageError(fmt::format("--cutoff must be 0 (none) or more, got {}", o.cutoff));
  if (o.cutoff > o.n) throw UsageError(fmt::format("--cutoff {} is above --n {}: nothing would spawn", o.cutoff, o.n));
  p.cutoff = o.cutoff;
}

void add_options(CLI::App& sub, FibOptions& o) {
  sub.add_option("--n", o.n, fmt::format("fib(n) (default 30, at most {})", xp::kFibMaxN));
  sub.add_option("--cutoff", o.cutoff, "Also measure with calls below this n computed serially (default 0: only no cutoff)");
}

const Register reg{make_experiment<FibOptions, xp::FibParams>(
    {"fib", with_workers(5, xp::fib_variants, "Thread counts, comma list (default available_parallelism)"), add_options, to_params, xp::run_fib, [](const xp::FibParams& p) { return title(p.n); },
     print_compare})};

}  // namespace
}  // namespace weft::cli
