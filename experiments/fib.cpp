#include "weft/xp/fib.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

#include "kernels.hpp"
#include "peer_support.hpp"
#include "weft/detail/exec/on_workers.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

namespace weft::xp {

namespace {

bool spawns(int n, int cutoff) { return n >= 2 && n >= cutoff; }

struct Run {
  int n = 0;
  int cutoff = 0;
  int threads = 0;
  std::int64_t* value = nullptr;  // fib(n), for the check
  OmpTeamSeen* team = nullptr;    // openmp: where the team ran
};
using RunFn = double (*)(const Run&);

double run_serial(const Run& r) {
  const std::int64_t t0 = wall_ns();
  *r.value = fib_serial(r.n);
  return static_cast<double>(wall_ns() - t0) / 1e9;
}

double run_weft(const Run& r) {
  ThreadPool pool(PoolOptions{.workers = r.threads});
  start_workers(pool);
  const std::int64_t t0 = wall_ns();
  // The root runs on a worker, as every other call does.
  *r.value = detail::on_workers(pool, [&] { return fib_weft(pool, r.n, r.cutoff); });
  return static_cast<double>(wall_ns() - t0) / 1e9;
}

#ifdef WEFT_HAVE_TBB
double run_tbb(const Run& r) {
  return in_tbb_arena(r.threads, [&] {
    const std::int64_t t0 = wall_ns();
    *r.value = fib_tbb(r.n, r.cutoff);
    return static_cast<double>(wall_ns() - t0) / 1e9;
  });
}
#endif

#ifdef WEFT_HAVE_OPENMP
// A team of `threads` including this thread (as oneTBB's arena above):
// one thread starts the recursion, the team runs its tasks.
double run_openmp(const Run& r) {
  return omp_team(
      r.threads,
      [&] {
        const std::int64_t t0 = wall_ns();
        *r.value = fib_omp(r.n, r.cutoff);
        return static_cast<double>(wall_ns() - t0) / 1e9;
      },
      *r.team);
}
#endif

const std::array<harness::Variant<RunFn>, 4> kVariants =
    serial_weft_tbb_openmp<RunFn>(run_serial, run_weft, WEFT_XP_IF_TBB(run_tbb), WEFT_XP_IF_OPENMP(run_openmp));

}  // namespace

const std::vector<std::string>& fib_variants() { return harness::names_of<kVariants>(); }

std::int64_t fib_spawns(int n, int cutoff) {
  if (!spawns(n, cutoff)) return 0;
  return 1 + fib_spawns(n - 1, cutoff) + fib_spawns(n - 2, cutoff);
}

Result run_fib(const FibParams& p) {
  if (p.n < 2 || p.n > kFibMaxN) throw std::invalid_argument("fib: n out of range");
  const std::vector<int> workers = harness::counts_or_usable(p.workers);
  std::vector<int> cutoffs{0};
  if (p.cutoff > 0) cutoffs.push_back(p.cutoff);
  const std::int64_t expected = fib_serial(p.n);

  // Per cutoff, the variants at each thread count (serial once: a cutoff
  // changes nothing there); cutoff_of[i] is units[i]'s.
  std::vector<harness::Unit> units;
  std::vector<int> cutoff_of;
  for (int c : cutoffs) {
    std::vector<std::string> chosen;
    for (const std::string& v : p.variants)
      if (c == 0 || v != "serial") chosen.push_back(v);
    for (auto& u : harness::plan_units(kVariants, chosen, workers)) {
      units.push_back(std::move(u));
      cutoff_of.push_back(c);
    }
  }
  const harness::PlanOptions plan{p.reps, true};
  std::vector<OmpTeamSeen> teams(units.size());
  harness::run_units(units, plan, [&](const harness::Unit& u, std::size_t i) {
    std::int64_t value = -1;
    const double s =
        harness::variant(kVariants, u.variant).run(Run{p.n, cutoff_of[i], u.threads, &value, &teams[i]});
    if (value != expected) {
      throw std::runtime_error("fib(" + std::to_string(p.n) + ") by " + u.variant + " gave " +
                               std::to_string(value) + ", expected " + std::to_string(expected));
    }
    return s;
  });

  Result r;
  r.experiment = "fib";
  r.params = {{"workers", workers},
              {"fib", expected},
              {"spawns_no_cutoff", fib_spawns(p.n, 0)},
              {"tbb_threads", "arena of `threads` including the calling thread"},
              {"openmp_threads", "omp parallel num_threads(`threads`) including the calling thread, "
                                 "OpenMP's settings from the environment otherwise (the notes say the binding)"},
              {"warmup", harness::warmup_text(plan)}};
  if (p.cutoff > 0) r.params["spawns_cutoff"] = fib_spawns(p.n, p.cutoff);
  for (std::size_t i = 0; i < units.size(); ++i) {
    const harness::Unit& u = units[i];
    // serial: per call that would have spawned without a cutoff.
    const std::int64_t spawned = fib_spawns(p.n, cutoff_of[i]);
    const double per = static_cast<double>(spawned > 0 ? spawned : 1);
    std::vector<double> ms, ns;
    for (double s : u.samples) {
      ms.push_back(s * 1e3);
      ns.push_back(s * 1e9 / per);
    }
    const std::string note = !u.runs() ? u.why_not
                             : cutoff_of[i] > 0 ? "cutoff " + std::to_string(cutoff_of[i])
                                                : std::string();
    Row a = make_row(u.variant, u.threads, "ms", "ms", std::move(ms), u.why_not);
    a.note = teams[i].note(note);
    a.labels.cutoff = cutoff_of[i];
    a.labels.spawns = u.variant == "serial" ? 0 : spawned;
    Row b = with_metric(a, "ns_per_task", "ns", std::move(ns));
    if (u.variant == "serial") b.note = "per call that spawns in the parallel variants";
    r.rows.push_back(std::move(a));
    r.rows.push_back(std::move(b));
  }
  return r;
}

// The registration: `weft fib`, its sizes in the report, its figure.
namespace {

void print_compare(const Result& r) {
  print_weft_over_tbb(
      r, [](Key k, const Row& row) { return k.cutoff(row.labels.cutoff.value_or(0)); },
      [](const Row& row) {
        const int cutoff = row.labels.cutoff.value_or(0);
        return fmt::format("{} threads, {:<10}", row.threads,
                           cutoff > 0 ? fmt::format("cutoff {}", cutoff) : std::string("no cutoff"));
      });
}

const Register<FibParams> reg{{
    .name = "fib", .page = 80, .seconds = {1, 2, 5},
    .title = "Fork-join fib: the cost of a spawn",
    .summary = "Recursive fork-join Fibonacci: the cost of a spawn",
    .options = {integer("--n", &FibParams::n, "fib(n), spawning ~1.6^n tasks", 2, kFibMaxN),
                integer("--cutoff", &FibParams::cutoff,
                        "Also measure with calls below this n computed serially (0: only no cutoff)", 0, kFibMaxN),
                counts("--workers,-w", &FibParams::workers, "Thread counts", "available_parallelism"),
                variants(&FibParams::variants, fib_variants), reps(&FibParams::reps)},
    .sizes = {[](FibParams& p) {
                p.n = 25;
                p.reps = 3;
              },
              nullptr,
              [](FibParams& p) {
                p.reps = 9;
                p.cutoff = 12;
              }},
    .check =
        [](const FibParams& p) {
          if (p.cutoff > p.n)
            throw BadParam(fmt::format("--cutoff {} is above --n {}: nothing would spawn", p.cutoff, p.n));
        },
    .run = run_fib,
    .heading = [](const FibParams& p) { return fmt::format("Fork-join fib({}): ms per run and ns per spawned task", p.n); },
    .print = print_compare,
    .figures = {"fib_ms"}, .headlines = {"ms"},
}};

}  // namespace

}  // namespace weft::xp
