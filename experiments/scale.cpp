#include "weft/xp/scale.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "kernels.hpp"
#include "peer_support.hpp"
#include "weft/detail/exec/on_workers.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/fib.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

#ifdef WEFT_HAVE_TBB
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace weft::xp {

namespace {

// ---- the libraries: the same calls, each made by one -----------------------

// The group workloads with a library's group type G (built from `args`):
// n tasks of f(i), spawned by `spawners` tasks that the workers take, into
// one group shared by all of them, or each into a group of its own. Either
// way the spawners return at once and the calling task waits (helping), so
// the tasks run the same way, taken by whichever worker finds them: the
// two differ only in how many spawners count into one group.
template <class G, class F>
void spawn_slice(G& g, std::int64_t n, int spawners, int s, const F& f) {
  for (std::int64_t i = n * s / spawners; i < n * (s + 1) / spawners; ++i) g.run([&f, i] { f(i); });
}
template <class G, class F, class... Args>
void spawn_into_one(std::int64_t n, int spawners, const F& f, Args&... args) {
  G g{args...};
  for (int s = 0; s < spawners; ++s) g.run([&g, &f, n, s, spawners] { spawn_slice(g, n, spawners, s, f); });
  g.wait();
}
template <class G, class F, class... Args>
void spawn_into_each(std::int64_t n, int spawners, const F& f, Args&... args) {
  std::vector<std::unique_ptr<G>> groups;
  for (int s = 0; s < spawners; ++s) groups.push_back(std::make_unique<G>(args...));
  G spawning{args...};
  for (int s = 0; s < spawners; ++s)
    spawning.run([g = groups[static_cast<std::size_t>(s)].get(), &f, n, s, spawners] {
      spawn_slice(*g, n, spawners, s, f);
    });
  spawning.wait();  // every task is counted in its group before the waits below
  for (auto& g : groups) g->wait();
}

struct WeftCalls {
  ThreadPool* pool = nullptr;
  std::int64_t fib(int n) const { return fib_weft(*pool, n, 0); }
  template <class F>
  void fan_out(std::int64_t n, const F& f) const {
    TaskGroup g{*pool};
    for (std::int64_t i = 0; i < n; ++i) g.run([&f, i] { f(i); });
    g.wait();
  }
  template <class F>
  void for_each(std::int64_t n, const F& f) const {
    parallel_for(*pool, std::int64_t{0}, n, f);
  }
  double sum(const std::vector<double>& x) const {
    return parallel_reduce(*pool, x.begin(), x.end(), 0.0, std::plus<>{});
  }
  template <class F>
  void one_group(std::int64_t n, int spawners, const F& f) const {
    spawn_into_one<TaskGroup>(n, spawners, f, *pool);
  }
  template <class F>
  void group_each(std::int64_t n, int spawners, const F& f) const {
    spawn_into_each<TaskGroup>(n, spawners, f, *pool);
  }
};

#ifdef WEFT_HAVE_TBB
struct TbbCalls {
  std::int64_t fib(int n) const { return fib_tbb(n, 0); }
  template <class F>
  void fan_out(std::int64_t n, const F& f) const {
    oneapi::tbb::task_group g;
    for (std::int64_t i = 0; i < n; ++i) g.run([&f, i] { f(i); });
    g.wait();
  }
  template <class F>
  void for_each(std::int64_t n, const F& f) const {
    oneapi::tbb::parallel_for(std::int64_t{0}, n, f);
  }
  double sum(const std::vector<double>& x) const {
    using Range = oneapi::tbb::blocked_range<const double*>;
    return oneapi::tbb::parallel_reduce(
        Range(x.data(), x.data() + x.size()), 0.0,
        [](const Range& r, double acc) { return std::accumulate(r.begin(), r.end(), acc); }, std::plus<>{});
  }
  template <class F>
  void one_group(std::int64_t n, int spawners, const F& f) const {
    spawn_into_one<oneapi::tbb::task_group>(n, spawners, f);
  }
  template <class F>
  void group_each(std::int64_t n, int spawners, const F& f) const {
    spawn_into_each<oneapi::tbb::task_group>(n, spawners, f);
  }
};
#endif

#ifdef WEFT_HAVE_OPENMP
// OpenMP as its users write each workload: every call is its own region of
// a team of `threads`, the calling thread its master (the runtime keeps
// the team's threads between regions). The task workloads start on one
// thread of the team (`omp single`) and the team runs their tasks; pfor and
// reduce are `omp parallel for` loops (static schedule, reduction(+:)).
struct OmpCalls {
  int threads = 1;
  std::int64_t fib(int n) const {
    std::int64_t v = 0;
#pragma omp parallel num_threads(threads)
#pragma omp single
    v = fib_omp(n, 0);
    return v;
  }
  template <class F>
  void fan_out(std::int64_t n, const F& f) const {
#pragma omp parallel num_threads(threads)
#pragma omp single
    {
      for (std::int64_t i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
        f(i);
      }
#pragma omp taskwait
    }
  }
  template <class F>
  void for_each(std::int64_t n, const F& f) const {
#pragma omp parallel for num_threads(threads)
    for (std::int64_t i = 0; i < n; ++i) f(i);
  }
  double sum(const std::vector<double>& x) const {
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(x.size());
    const double* v = x.data();
    double acc = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : acc)
    for (std::ptrdiff_t i = 0; i < n; ++i) acc += v[i];
    return acc;
  }
  // The group workloads: a taskgroup waits for its tasks and theirs.
  template <class F>
  void one_group(std::int64_t n, int spawners, const F& f) const {
#pragma omp parallel num_threads(threads)
#pragma omp single
#pragma omp taskgroup
    for (int s = 0; s < spawners; ++s) {
#pragma omp task firstprivate(s)
      slice(n, spawners, s, f);
    }
  }
  template <class F>
  void group_each(std::int64_t n, int spawners, const F& f) const {
#pragma omp parallel num_threads(threads)
#pragma omp single
    {
      for (int s = 0; s < spawners; ++s) {
#pragma omp task firstprivate(s)
        {
#pragma omp taskgroup
          slice(n, spawners, s, f);
        }
      }
#pragma omp taskwait
    }
  }

 private:
  template <class F>
  static void slice(std::int64_t n, int spawners, int s, const F& f) {
    for (std::int64_t i = n * s / spawners; i < n * (s + 1) / spawners; ++i) {
#pragma omp task firstprivate(i)
      f(i);
    }
  }
};
#endif

// ---- the workloads ----------------------------------------------------------

enum class Work { fib, tasks, pfor, reduce, group, groups };

struct Workload {
  std::string_view name;
  Work work;
  bool by_default;  // runs when no --workload is named
};

const std::array<Workload, 6> kWorkloads{{
    {"fib", Work::fib, true},
    {"tasks", Work::tasks, true},
    {"pfor", Work::pfor, true},
    {"reduce", Work::reduce, true},
    {"group", Work::group, false},
    {"groups", Work::groups, false},
}};

// The inputs every run reads, and the answers it must give.
struct Inputs {
  const ScaleParams* p = nullptr;
  std::uint64_t task_iters = 0;  // spin per task of the tasks workload
  std::uint64_t item_iters = 0;  // spin per item of the pfor workload
  std::int64_t fib = 0;
  std::vector<double> x;  // the reduce workload's input
  double sum = 0;
};

// Marks of the items a run did, checked after it: a byte per item, so each
// task writes only its own (no shared counter for the workers to fight over).
struct Marks {
  std::vector<std::uint8_t> done;
  void reset(std::int64_t n) { done.assign(static_cast<std::size_t>(n), 0); }
  void mark(std::int64_t i) noexcept { done[static_cast<std::size_t>(i)] = 1; }
  std::int64_t count() const { return std::count(done.begin(), done.end(), std::uint8_t{1}); }
};

[[noreturn]] void wrong(std::string_view workload, std::string_view variant, int threads, const std::string& what) {
  throw std::runtime_error("scale: " + std::string(workload) + ": " + std::string(variant) + " at " +
                           std::to_string(threads) + " workers " + what);
}

// One run of workload `w` through `calls`, checked. Returns the seconds of
// the call alone (the marks are cleared and counted outside the timing).
template <class Calls>
double run_work(const Calls& calls, Work w, const Inputs& in, Marks& marks, std::string_view variant, int threads) {
  const std::string_view name = kWorkloads[static_cast<std::size_t>(w)].name;
  const auto fail = [&](const std::string& what) { wrong(name, variant, threads, what); };
  const auto seconds = [](std::int64_t t0, std::int64_t t1) { return static_cast<double>(t1 - t0) / 1e9; };
  // n items of `iters` spin each, handed out by spread(n, item).
  const auto spin_items = [&](std::int64_t n, std::uint64_t iters, const auto& spread) {
    marks.reset(n);
    const std::int64_t t0 = wall_ns();
    spread(n, [&](std::int64_t i) {
      spin(iters);
      marks.mark(i);
    });
    const std::int64_t t1 = wall_ns();
    if (const std::int64_t got = marks.count(); got != n)
      fail("ran " + std::to_string(got) + " of " + std::to_string(n) + " items");
    return seconds(t0, t1);
  };
  switch (w) {
    case Work::fib: {
      const std::int64_t t0 = wall_ns();
      const std::int64_t v = calls.fib(in.p->fib_n);
      const std::int64_t t1 = wall_ns();
      if (v != in.fib) fail("gave " + std::to_string(v) + ", expected " + std::to_string(in.fib));
      return seconds(t0, t1);
    }
    case Work::tasks:
      return spin_items(in.p->tasks, in.task_iters, [&](std::int64_t n, const auto& f) { calls.fan_out(n, f); });
    case Work::pfor:
      return spin_items(in.p->pfor_n, in.item_iters, [&](std::int64_t n, const auto& f) { calls.for_each(n, f); });
    case Work::group:
      return spin_items(in.p->group_tasks, 0, [&](std::int64_t n, const auto& f) { calls.one_group(n, threads, f); });
    case Work::groups:
      return spin_items(in.p->group_tasks, 0, [&](std::int64_t n, const auto& f) { calls.group_each(n, threads, f); });
    case Work::reduce: {
      const std::int64_t t0 = wall_ns();
      const double s = calls.sum(in.x);
      const std::int64_t t1 = wall_ns();
      // Any grouping of the sum is right; a lost or doubled element (each
      // is worth about 2/n of the total) is not.
      if (!(std::fabs(s - in.sum) <= 1e-9 * in.sum))
        fail("gave " + std::to_string(s) + ", serial " + std::to_string(in.sum));
      return seconds(t0, t1);
    }
  }
  return 0;
}

// ---- the variants -----------------------------------------------------------

struct Run {
  Work work = Work::fib;
  const Inputs* in = nullptr;
  Marks* marks = nullptr;
  int threads = 0;
  OmpTeamSeen* team = nullptr;  // openmp: where the team ran
};
using RunFn = double (*)(const Run&);

double run_weft(const Run& r) {
  ThreadPool pool(PoolOptions{.workers = r.threads});
  start_workers(pool);
  // The root runs on a worker, so that `threads` threads take part, as in
  // oneTBB's arena of `threads` slots.
  return detail::on_workers(pool,
                            [&] { return run_work(WeftCalls{&pool}, r.work, *r.in, *r.marks, "weft", r.threads); });
}

#ifdef WEFT_HAVE_TBB
double run_tbb(const Run& r) {
  return in_tbb_arena(r.threads, [&] { return run_work(TbbCalls{}, r.work, *r.in, *r.marks, "tbb", r.threads); });
}
#endif

#ifdef WEFT_HAVE_OPENMP
// The team is woken before the timed call, as run_weft()'s pool is started.
double run_openmp(const Run& r) {
  omp_wake_team(r.threads, *r.team);
  return run_work(OmpCalls{r.threads}, r.work, *r.in, *r.marks, "openmp", r.threads);
}
#endif

const std::array<harness::Variant<RunFn>, 3> kVariants{{
    {"weft", kBuiltIn, true, run_weft},
    {"tbb", kTbb, true, WEFT_XP_IF_TBB(run_tbb)},
    {"openmp", kOpenMp, true, WEFT_XP_IF_OPENMP(run_openmp)},
}};

// ---- rows -------------------------------------------------------------------

// "sum of 20000000 doubles": what one run of the workload does.
std::string what_of(Work w, const ScaleParams& p) {
  switch (w) {
    case Work::fib: return "fib(" + std::to_string(p.fib_n) + "), a spawn per call";
    case Work::tasks:
      return std::to_string(p.tasks) + " tasks of ~" + std::to_string(p.task_ns) + " ns spawned by one task";
    case Work::pfor:
      return "parallel_for of " + std::to_string(p.pfor_n) + " items of ~" + std::to_string(p.item_ns) + " ns";
    case Work::reduce: return "sum of " + std::to_string(p.reduce_n) + " doubles";
    case Work::group:
      return std::to_string(p.group_tasks) + " empty tasks into one group, spawned by a task per worker";
    case Work::groups:
      return std::to_string(p.group_tasks) + " empty tasks, spawned by a task per worker, each into a group of its own";
  }
  return {};
}

std::int64_t items_of(Work w, const ScaleParams& p) {
  switch (w) {
    case Work::fib: return fib_spawns(p.fib_n, 0);
    case Work::tasks: return p.tasks;
    case Work::pfor: return p.pfor_n;
    case Work::reduce: return p.reduce_n;
    case Work::group:
    case Work::groups: return p.group_tasks;
  }
  return 0;
}

// base's samples over u's, round by round (the plan pairs them).
std::vector<double> speedups(const harness::Unit& base, const harness::Unit& u) {
  std::vector<double> out;
  for (std::size_t i = 0; i < std::min(base.samples.size(), u.samples.size()); ++i)
    if (u.samples[i] > 0) out.push_back(base.samples[i] / u.samples[i]);
  return out;
}

// The scaling goals, with this run's figures.
nlohmann::json goal_ratios(const Result& r, const ScaleParams& p, const std::vector<int>& workers, int cpus) {
  nlohmann::json ratios = nlohmann::json::array();
  const int most = *std::max_element(workers.begin(), workers.end());
  const bool has_cpus = std::find(workers.begin(), workers.end(), cpus) != workers.end();
  const auto ms = [](const char* v, const std::string& w, int t) { return Key(v, "ms", t).workload(w); };
  const auto has = [&](const char* w) {
    return std::find(p.workloads.begin(), p.workloads.end(), w) != p.workloads.end();
  };
  if (has("fib") && has_cpus && most > cpus) {
    for (const char* v : {"weft", "tbb", "openmp"})
      add_ratio(ratios,
                "fib(" + std::to_string(p.fib_n) + "): " + v + " time at " + std::to_string(most) + " workers / at " +
                    std::to_string(cpus) + " workers",
                ratio(r, ms(v, "fib", most), ms(v, "fib", cpus)), v == std::string_view("weft") ? "<= 2.0" : "");
  }
  // The hot-line figure: one group fed from every worker over a group per
  // worker (1.0: sharing the group costs nothing), at the CPUs and at the
  // most workers.
  if (has("group") && has("groups")) {
    for (int t : {cpus, most}) {
      if (std::find(workers.begin(), workers.end(), t) == workers.end() || (t == most && most == cpus)) continue;
      for (const char* v : {"weft", "tbb", "openmp"})
        add_ratio(ratios,
                  std::string("group: ") + v + " one group / a group per worker, time (" + std::to_string(t) +
                      " workers)",
                  ratio(r, ms(v, "group", t), ms(v, "groups", t)), "");
    }
  }
  if (!has_cpus) return ratios;
  const std::string at = " (" + std::to_string(cpus) + " workers)";
  for (const std::string& w : p.workloads) {
    add_ratio(ratios, w + ": weft / tbb time" + at, ratio(r, ms("weft", w, cpus), ms("tbb", w, cpus)), "<= 1.0");
    add_ratio(ratios, w + ": weft / openmp time" + at, ratio(r, ms("weft", w, cpus), ms("openmp", w, cpus)),
              "<= 1.0");
    const bool goal = cpus == 16 && (w == "fib" || w == "reduce");
    add_ratio(ratios, w + ": weft speed-up over 1 worker" + at, median(r, Key("weft", "speedup", cpus).workload(w)),
              goal ? ">= 13" : "");
  }
  return ratios;
}

}  // namespace

const std::vector<std::string>& scale_variants() { return harness::names_of<kVariants>(); }

const std::vector<std::string>& scale_workloads() { return harness::names_of<kWorkloads>(); }

const std::vector<std::string>& scale_default_workloads() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Workload& w : kWorkloads)
      if (w.by_default) out.emplace_back(w.name);
    return out;
  }();
  return names;
}

std::vector<int> scale_ladder(int cpus, int oversubscribe) {
  std::vector<int> out;
  const int most = cpus * std::max(1, oversubscribe);
  for (int w = 1; w < most; w *= 2) {
    if (w > cpus && (out.empty() || out.back() < cpus)) out.push_back(cpus);
    out.push_back(w);
  }
  if (out.empty() || out.back() < cpus) out.push_back(cpus);
  if (out.back() < most) out.push_back(most);
  return out;
}

Result run_scale(const ScaleParams& p) {
  if (p.fib_n < 2 || p.fib_n > kScaleMaxFibN) throw std::invalid_argument("scale: fib_n out of range");
  const int cpus = harness::usable_cpus();
  const std::vector<int> workers = p.workers.empty() ? scale_ladder(cpus, p.oversubscribe) : p.workers;
  Inputs in;
  in.p = &p;
  in.task_iters = calibrate_spin(p.task_ns);
  in.item_iters = calibrate_spin(p.item_ns);
  in.fib = fib_serial(p.fib_n);
  Marks marks;
  const harness::PlanOptions plan{p.reps, true};

  Result r;
  r.experiment = "scale";
  // One workload at a time, its variants and worker counts interleaved:
  // the rounds pair each run with its variant's 1-worker run.
  for (const Workload& w : kWorkloads) {
    if (std::find(p.workloads.begin(), p.workloads.end(), w.name) == p.workloads.end()) continue;
    if (w.work == Work::reduce) {
      in.x.resize(static_cast<std::size_t>(p.reduce_n));
      for (std::size_t i = 0; i < in.x.size(); ++i) in.x[i] = static_cast<double>((i * 2654435761u) % 1000) * 1e-3;
      in.sum = std::accumulate(in.x.begin(), in.x.end(), 0.0);
    }
    std::vector<harness::Unit> units = harness::plan_units(kVariants, p.variants, workers);
    std::vector<OmpTeamSeen> teams(units.size());
    harness::run_units(units, plan, [&](const harness::Unit& u, std::size_t i) {
      return harness::variant(kVariants, u.variant).run(Run{w.work, &in, &marks, u.threads, &teams[i]});
    });
    in.x = std::vector<double>{};  // free the input before the next workload

    for (const harness::Unit& u : units) {
      const auto one = std::find_if(units.begin(), units.end(), [&](const harness::Unit& b) {
        return b.variant == u.variant && b.threads == 1 && b.runs();
      });
      std::vector<double> ms;
      for (double s : u.samples) ms.push_back(s * 1e3);
      Row row = make_row(u.variant, u.threads, "ms", "ms", std::move(ms), u.why_not);
      row.labels.workload = std::string(w.name);
      row.labels.items = items_of(w.work, p);
      if (u.runs()) {
        row.note = what_of(w.work, p);
        const std::string over = harness::oversubscribed_note(
            "workers", u.threads, "oversubscribed, measures how gracefully the pool shares the CPUs");
        if (!over.empty()) row.note += "; " + over;
        row.note = teams[static_cast<std::size_t>(&u - units.data())].note(row.note);
      }
      r.rows.push_back(row);
      std::vector<double> s = u.runs() && one != units.end() ? speedups(*one, u) : std::vector<double>{};
      std::vector<double> e;
      for (double x : s) e.push_back(x / u.threads);
      Row speedup = with_metric(row, "speedup", "x", std::move(s));
      if (u.runs() && one == units.end()) {
        speedup.measured = false;
        speedup.note = "no 1-worker run to compare with";
      }
      Row efficiency = with_metric(speedup, "efficiency", "fraction", std::move(e));
      r.rows.push_back(std::move(speedup));
      r.rows.push_back(std::move(efficiency));
    }
  }
  r.params = {{"task_spin_iters", in.task_iters},
              {"item_spin_iters", in.item_iters},
              {"cpus", cpus},
              {"workers", workers},
              {"weft_threads", "a pool of `workers` workers; the workload's root runs on one of them"},
              {"tbb_threads", "task_arena of `workers` slots, the calling thread one of them"},
              {"openmp_threads", "a region per call, num_threads(`workers`) including the calling thread; "
                                 "the task workloads from `omp single`, pfor and reduce `omp parallel for`; "
                                 "OMP_PROC_BIND as the environment sets it (the notes say)"},
              {"grain", "default (weft: adaptive partitioner; tbb: auto_partitioner)"},
              {"warmup", harness::warmup_text(plan)}};
  if (*std::max_element(workers.begin(), workers.end()) > cpus)
    r.notes.push_back("rows with more workers than the " + std::to_string(cpus) +
                      " allowed CPUs measure oversubscription (how a pool shares CPUs), not speed-up");
  r.extra["ratios"] = goal_ratios(r, p, workers, cpus);
  return r;
}

// The registration: `weft scale`, its sizes in the report, its figure.
namespace {

// The most workers a run may ask for: --workers' own bound.
constexpr long long kMaxWorkers = 256;

void print_compare(const Result& r) {
  print_weft_over_tbb_per_workload(r, 6);
  print_ratios(r, "Goals:", 58);
}

// What the options' own ranges cannot say: a run of more than a minute of
// work, the worker ceiling of --oversubscribe, and --oversubscribe against
// --workers.
void check_scale(const ScaleParams& p) {
  if (static_cast<double>(p.tasks) * p.task_ns > 60e9 || static_cast<double>(p.pfor_n) * p.item_ns > 60e9)
    throw BadParam("--tasks x --task-ns or --pfor-n x --item-ns is more than a minute of work per run");
  const int cpus = available_parallelism();
  if (static_cast<long long>(p.oversubscribe) * cpus > kMaxWorkers)
    throw BadParam(fmt::format("--oversubscribe {} asks for {} workers on {} CPUs: at most {}", p.oversubscribe,
                               static_cast<long long>(p.oversubscribe) * cpus, cpus, kMaxWorkers));
  if (p.oversubscribe > 1 && !p.workers.empty())
    throw BadParam("--oversubscribe sets the worker counts that --workers gives: use one of them");
}

const Register<ScaleParams> reg{{
    .name = "scale", .page = 130, .seconds = {3, 20, 45},
    .title = "Scaling: speed-up from one worker to every CPU, and past them",
    .summary = "Speed-up of fib, tasks, parallel_for and reduce from 1 worker to every allowed CPU (and K x them with "
               "--oversubscribe): weft against oneTBB",
    // Each run holds a byte per task or item, and reduce_n doubles.
    .options = {integer("--fib-n", &ScaleParams::fib_n, "fib(n) of the fib workload, spawning ~1.6^n tasks", 2,
                        kScaleMaxFibN),
                integer("--tasks", &ScaleParams::tasks, "Tasks of the tasks workload", 1, 100'000'000),
                integer("--task-ns", &ScaleParams::task_ns, "Spin per task, ns", 1, 1'000'000),
                integer("--pfor-n", &ScaleParams::pfor_n, "Items of the pfor workload", 1, 1'000'000'000),
                integer("--item-ns", &ScaleParams::item_ns, "Spin per pfor item, ns", 1, 1'000'000),
                integer("--reduce-n", &ScaleParams::reduce_n, "Doubles of the reduce workload", 1, 500'000'000),
                integer("--group-tasks", &ScaleParams::group_tasks, "Tasks of the group and groups workloads", 1,
                        100'000'000),
                integer("--oversubscribe", &ScaleParams::oversubscribe,
                        "Go on past the allowed CPUs to K times them: 1, 2, 4, ... K x CPUs workers", 1, kMaxWorkers),
                names("--workload", &ScaleParams::workloads, "Workloads", "workload", scale_workloads,
                      reg::join(scale_default_workloads(), ", ")),
                counts("--workers,-w", &ScaleParams::workers, "Worker counts",
                       "1, 2, 4, ... up to the allowed CPUs, times --oversubscribe", kMaxWorkers),
                variants(&ScaleParams::variants, scale_variants), reps(&ScaleParams::reps)},
    .sizes = {[](ScaleParams& p) {
                p.fib_n = 24;
                p.tasks = 20'000;
                p.pfor_n = 100'000;
                p.reduce_n = 2'000'000;
                p.reps = 2;
              },
              [](ScaleParams& p) { p.oversubscribe = 2; },
              [](ScaleParams& p) {
                p.oversubscribe = 8;
                p.reps = 5;
              }},
    .check = check_scale,
    .run = run_scale,
    .heading = "Scaling: ms per run, speed-up over 1 worker, efficiency (speed-up / workers)",
    .print = print_compare,
    .figures = {"scale_speedup"}, .headlines = {"ms"},
}};

}  // namespace

}  // namespace weft::xp
