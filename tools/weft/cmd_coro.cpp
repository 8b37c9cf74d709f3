// weft coro — coroutines, futures and task groups against oneTBB and
// Boost.Asio: fork-join fib, a hop onto the pool, a fan-in, a cancellation.
#include "cli.hpp"
#include "weft/xp/coro.hpp"

namespace weft::cli {
namespace {

constexpr const char* kTitle = "Coroutines and async composition: ns per spawn, ns per hop, us per fan-in, cancel ms";

void print_goals(const xp::Result& r) { print_ratios(r, "Goals (at 2 workers):", 58); }

struct CoroOptions {
  int fib_n = 30;
  long long hops = 100'000;
  long long fan_in = 10'000;
  int fan_ins = 20;
  long long cancel_tasks = 1'000'000;
  std::vector<std::string> workloads;
};

void to_params(const CoroOptions& o, xp::CoroParams& p) {
  p.fib_n = positive("--fib-n", o.fib_n, 40);
  p.hops = positive64("--hops", o.hops, 100'000'000);
  p.fan_in = positive64("--fan-in", o.fan_in, 10'000'000);
  p.fan_ins = positive("--fan-ins", o.fan_ins, 100'000);
  // Each queued task holds a pool block and a deque slot.
  p.cancel_tasks = positive64("--cancel-tasks", o.cancel_tasks, 100'000'000);
  if (!o.workloads.empty()) p.workloads = parse_names("workload", o.workloads, xp::coro_workloads());
}

void add_options(CLI::App& sub, CoroOptions& o) {
  sub.add_option("--fib-n", o.fib_n, "fib(n) of the fork-join workload, no cutoff (default 30)");
  sub.add_option("--hops", o.hops, "Hops onto the pool per sample (default 100,000)");
  sub.add_option("--fan-in", o.fan_in, "Tiny tasks per fan-in (default 10,000)");
  sub.add_option("--fan-ins", o.fan_ins, "Fan-ins per sample (default 20)");
  sub.add_option("--cancel-tasks", o.cancel_tasks, "Queued tasks a group cancels (default 1,000,000)");
  std::string names;
  for (const auto& w : xp::coro_workloads()) names += (names.empty() ? "" : ", ") + w;
  sub.add_option("--workload", o.workloads, "Workloads, comma list: " + names + " (default all)");
}

const Register reg{make_experiment<CoroOptions, xp::CoroParams>(
    {"coro", with_workers(5, xp::coro_variants, "Worker counts, comma list (default 2)"), add_options, to_params,
     xp::run_coro, fixed<xp::CoroParams>(kTitle), print_goals})};

}  // namespace
}  // namespace weft::cli
