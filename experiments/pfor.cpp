#include "weft/xp/pfor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <stdexcept>

#include "kernels.hpp"
#include "peer_support.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

#ifdef WEFT_HAVE_TBB
#include <oneapi/tbb/parallel_for.h>
#endif

namespace weft::xp {

namespace {

struct Inputs {
  std::uint64_t spin_iters = 0;
  std::vector<std::uint32_t> data;
  std::uint64_t expected_sum = 0;
};

template <class ForEach>
double time_spin(const PforParams& p, const Inputs& in, ForEach&& for_each) {
  const std::int64_t t0 = wall_ns();
  for (int r = 0; r < p.rounds; ++r) {
    for_each(p.items, [&](int) { spin(in.spin_iters); });
  }
  return static_cast<double>(wall_ns() - t0) / 1e9;
}

template <class ForEach>
double time_sum(const PforParams& p, const Inputs& in, ForEach&& for_each) {
  const std::int64_t n = static_cast<std::int64_t>(in.data.size());
  const std::int64_t block = p.sum_block;
  const int blocks = static_cast<int>((n + block - 1) / block);
  std::vector<std::uint64_t> partial(static_cast<std::size_t>(blocks), 0);
  const std::int64_t t0 = wall_ns();
  for_each(blocks, [&](int b) {
    const std::int64_t lo = static_cast<std::int64_t>(b) * block;
    const std::int64_t hi = std::min(n, lo + block);
    std::uint64_t s = 0;
    for (std::int64_t i = lo; i < hi; ++i) s += in.data[static_cast<std::size_t>(i)];
    partial[static_cast<std::size_t>(b)] = s;
  });
  const std::uint64_t sum = std::accumulate(partial.begin(), partial.end(), std::uint64_t{0});
  const double s = static_cast<double>(wall_ns() - t0) / 1e9;
  if (sum != in.expected_sum) {
    throw std::runtime_error("pfor: sum " + std::to_string(sum) + ", expected " + std::to_string(in.expected_sum));
  }
  return s;
}

struct Run {
  const PforParams* p = nullptr;
  const Inputs* in = nullptr;
  bool spin = true;  // the workload: spin items, or the sum
  int threads = 0;
  OmpTeamSeen* team = nullptr;  // openmp: where the team ran
};
using RunFn = double (*)(const Run&);

template <class ForEach>
double time_workload(const Run& r, ForEach&& for_each) {
  return r.spin ? time_spin(*r.p, *r.in, for_each) : time_sum(*r.p, *r.in, for_each);
}

double run_serial(const Run& r) {
  return time_workload(r, [](int n, const auto& f) {
    for (int i = 0; i < n; ++i) f(i);
  });
}

double run_weft(const Run& r) {
  ThreadPool pool(PoolOptions{.workers = r.threads});
  start_workers(pool);
  return time_workload(r, [&pool](int n, const auto& f) { parallel_for(pool, 0, n, f); });
}

#ifdef WEFT_HAVE_TBB
double run_tbb(const Run& r) {
  return in_tbb_arena(r.threads, [&] {
    return time_workload(r, [](int n, const auto& f) { oneapi::tbb::parallel_for(0, n, f); });
  });
}
#endif

#ifdef WEFT_HAVE_OPENMP
enum class OmpSchedule { static_, dynamic, guided };

// As OpenMP users write a loop: each parallel_for is its own
// `omp parallel for num_threads(threads) schedule(...)` region on the calling
// thread (the team's master), with the schedule's default chunk. The
// runtime keeps the team's threads between regions.
template <OmpSchedule kSchedule>
double run_openmp(const Run& r) {
  const int threads = r.threads;
  const double s = time_workload(r, [threads](int n, const auto& f) {
    if constexpr (kSchedule == OmpSchedule::static_) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int i = 0; i < n; ++i) f(i);
    } else if constexpr (kSchedule == OmpSchedule::dynamic) {
#pragma omp parallel for num_threads(threads) schedule(dynamic)
      for (int i = 0; i < n; ++i) f(i);
    } else {
#pragma omp parallel for num_threads(threads) schedule(guided)
      for (int i = 0; i < n; ++i) f(i);
    }
  });
  omp_team(threads, [] { return 0.0; }, *r.team);  // where a region of the same size ran, for the note
  return s;
}
#endif

const std::array<harness::Variant<RunFn>, 6> kVariants{{
    {"serial", kBuiltIn, false, run_serial},
    {"weft", kBuiltIn, true, run_weft},
    {"tbb", kTbb, true, WEFT_XP_IF_TBB(run_tbb)},
    {"openmp-static", kOpenMp, true, WEFT_XP_IF_OPENMP(run_openmp<OmpSchedule::static_>)},
    {"openmp-dynamic", kOpenMp, true, WEFT_XP_IF_OPENMP(run_openmp<OmpSchedule::dynamic>)},
    {"openmp-guided", kOpenMp, true, WEFT_XP_IF_OPENMP(run_openmp<OmpSchedule::guided>)},
}};

}  // namespace

const std::vector<std::string>& pfor_variants() { return harness::names_of<kVariants>(); }

Result run_pfor(const PforParams& p) {
  const std::vector<int> workers = harness::counts_or_usable(p.workers);
  Inputs in;
  in.spin_iters = calibrate_spin(p.work_ns);
  in.data.resize(static_cast<std::size_t>(p.sum_n));
  for (std::size_t i = 0; i < in.data.size(); ++i) in.data[i] = static_cast<std::uint32_t>((i * 2654435761u) >> 7);
  in.expected_sum = std::accumulate(in.data.begin(), in.data.end(), std::uint64_t{0});

  // Per workload, the variants at each thread count; spin_of[i] is units[i]'s.
  std::vector<harness::Unit> units;
  std::vector<bool> spin_of;
  for (const bool spin_workload : {true, false}) {
    for (auto& u : harness::plan_units(kVariants, p.variants, workers)) {
      units.push_back(std::move(u));
      spin_of.push_back(spin_workload);
    }
  }
  const harness::PlanOptions plan{p.reps, true};
  std::vector<OmpTeamSeen> teams(units.size());
  harness::run_units(units, plan, [&](const harness::Unit& u, std::size_t i) {
    return harness::variant(kVariants, u.variant).run(Run{&p, &in, spin_of[i], u.threads, &teams[i]});
  });

  Result r;
  r.experiment = "pfor";
  r.params = {{"spin_iters_per_item", in.spin_iters},
              {"sum_block", p.sum_block},
              {"workers", workers},
              {"grain", "default (weft: adaptive partitioner; tbb: auto_partitioner)"},
              {"tbb_threads", "arena of `threads` including the calling thread"},
              {"openmp", "a parallel for region per loop, num_threads(`threads`) including the calling thread, "
                         "the schedule's default chunk, OMP_PROC_BIND as the environment sets it (the notes say)"},
              {"warmup", harness::warmup_text(plan)}};
  const std::int64_t spin_items = static_cast<std::int64_t>(p.rounds) * p.items;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const harness::Unit& u = units[i];
    const bool is_spin = spin_of[i];
    const std::int64_t items = is_spin ? spin_items : p.sum_n;
    std::vector<double> ms, ns;
    for (double s : u.samples) {
      ms.push_back(s * 1e3);
      ns.push_back(s * 1e9 / static_cast<double>(items));
    }
    Row a = make_row(u.variant, u.threads, "ms", "ms", std::move(ms), u.why_not);
    a.labels.workload = is_spin ? "spin" : "sum";
    a.labels.items = items;
    if (u.runs()) {
      a.note = is_spin ? std::to_string(p.rounds) + " x " + std::to_string(p.items) + " items of ~" +
                             std::to_string(p.work_ns) + " ns"
                       : "sum of " + std::to_string(p.sum_n) + " ints";
      a.note = teams[i].note(a.note);
    }
    Row b = with_metric(a, "ns_per_task", "ns", std::move(ns));
    r.rows.push_back(std::move(a));
    r.rows.push_back(std::move(b));
  }
  return r;
}

// The registration: `weft pfor`, its sizes in the report, its figures.
namespace {

void print_compare(const Result& r) { print_weft_over_tbb_per_workload(r, 5, "threads"); }

const Register<PforParams> reg{{
    .name = "pfor", .page = 90, .seconds = {1, 2, 5},
    .title = "parallel_for overhead",
    .summary = "parallel_for overhead: many small loops, and a big sum",
    .options = {integer("--rounds", &PforParams::rounds, "parallel_for calls in the spin workload", 1, 100'000),
                integer("--items", &PforParams::items, "Items per call", 1, 10'000'000),
                integer("--work-ns", &PforParams::work_ns, "Spin per item, ns", 1, 1'000'000),
                integer("--sum-n", &PforParams::sum_n, "Integers in the sum workload", 1, 1'000'000'000),
                counts("--workers,-w", &PforParams::workers, "Thread counts", "available_parallelism"),
                variants(&PforParams::variants, pfor_variants), reps(&PforParams::reps)},
    .sizes = {[](PforParams& p) {
                p.rounds = 50;
                p.reps = 3;
              },
              nullptr, [](PforParams& p) { p.reps = 9; }},
    .check =
        [](const PforParams& p) {
          if (static_cast<double>(p.rounds) * p.items * p.work_ns > 600e9)
            throw BadParam("--rounds x --items x --work-ns is more than 10 minutes of serial work");
        },
    .run = run_pfor,
    .heading = "parallel_for: ms per run and ns per item (spin: ~1 us items; sum: 10^7 ints)",
    .print = print_compare,
    .figures = {"pfor_ms", "worker_strip"}, .headlines = {"ms"},
}};

}  // namespace

}  // namespace weft::xp
