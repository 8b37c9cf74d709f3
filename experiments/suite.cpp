#include "weft/xp/suite.hpp"

#include <pthread.h>
#include <sys/resource.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "kernels.hpp"
#include "peer_support.hpp"
#include "suite_kernels.hpp"
#include "weft/detail/exec/on_workers.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/harness/process.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

#ifdef WEFT_HAVE_TBB
#include <oneapi/tbb/global_control.h>
#endif

namespace weft::xp {

namespace {

using namespace suite;

// The published trees (UTS's sample workloads): shape and exact counts.
constexpr UtsTree kT1{"uts-t1", 1, 4, 10, 0, 0, 19, 4'130'071, 3'305'118, 10};
constexpr UtsTree kT3{"uts-t3", 0, 2000, 0, 0.124875, 8, 42, 4'112'897, 3'599'034, 1'572};
constexpr UtsTree kT1L{"uts-t1l", 1, 4, 13, 0, 0, 29, 102'181'082, 81'746'377, 13};
constexpr UtsTree kT3L{"uts-t3l", 0, 2000, 0, 0.200014, 5, 7, 111'345'631, 89'076'904, 17'844};
constexpr std::array<const UtsTree*, 4> kTrees{&kT1, &kT3, &kT1L, &kT3L};

// Solutions of n queens, n = 0..16 (OEIS A000170).
constexpr std::array<std::int64_t, 17> kQueens{1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2'680, 14'200, 73'712, 365'596,
                                               2'279'184, 14'772'512};

// Worker stacks for every pool here, and the thread the deepest tree's
// serial, oneTBB and OpenMP roots run on: T3L nests 17,844 joins.
constexpr std::size_t kDeepStack = std::size_t{512} << 20;

enum class Kind { fib, skynet, nqueens, integrate, matmul, uts, knapsack };

// What a run computes: one of these fields, by the workload.
struct Answer {
  std::int64_t count = 0;  // fib, skynet, nqueens, knapsack
  double value = 0;        // integrate
  UtsCount tree;           // uts
};

// A workload ready to run: its inputs, what its check expects, and its
// call tree's size (the tasks of the parallel forms; 0 where it varies).
struct Work {
  std::string name;
  Kind kind = Kind::fib;
  int n = 0;
  const UtsTree* tree = nullptr;
  std::int64_t tasks = 0;
  std::int64_t expected = 0;  // fib, skynet, nqueens, knapsack
  std::vector<float> a, b, c, product;  // matmul: A, B, C, and the plain triple loop's A B
  std::vector<Item> items;              // knapsack
  bool deep = false;                    // needs kDeepStack on the root's thread
};

constexpr int kKnapsackItems = 32;
constexpr int kKnapsackCapacity = 900;

std::int64_t fib_iterative(int n) {
  std::int64_t a = 0, b = 1;
  for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
  return a;
}

std::int64_t pow10(int d) {
  std::int64_t x = 1;
  for (int i = 0; i < d; ++i) x *= 10;
  return x;
}

// Strongly correlated items (value = weight + 10), the hard class for
// branch and bound, from a fixed seed; sorted by value per weight.
std::vector<Item> knapsack_items() {
  std::vector<Item> items;
  std::uint64_t x = 42;
  for (int i = 0; i < kKnapsackItems; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
    const int w = 10 + static_cast<int>((x >> 33) % 91);
    items.push_back({w, w + 10});
  }
  std::sort(items.begin(), items.end(), [](const Item& l, const Item& r) {
    return std::int64_t{l.value} * r.weight > std::int64_t{r.value} * l.weight;
  });
  return items;
}

int knapsack_dp(const std::vector<Item>& items, int capacity) {
  std::vector<int> best(static_cast<std::size_t>(capacity) + 1, 0);
  for (const Item& it : items)
    for (int c = capacity; c >= it.weight; --c)
      best[static_cast<std::size_t>(c)] =
          std::max(best[static_cast<std::size_t>(c)], best[static_cast<std::size_t>(c - it.weight)] + it.value);
  return best[static_cast<std::size_t>(capacity)];
}

// The inputs and the expected answer; call_tree_size() adds the task count.
Work make_inputs(const std::string& name, const SuiteParams& p) {
  Work w;
  w.name = name;
  if (name == "fib") {
    w.kind = Kind::fib;
    w.n = p.fib_n;
    w.expected = fib_iterative(w.n);
  } else if (name == "skynet") {
    w.kind = Kind::skynet;
    w.n = p.skynet_depth;
    const std::int64_t leaves = pow10(w.n);
    w.expected = leaves * (leaves - 1) / 2;
  } else if (name == "nqueens") {
    w.kind = Kind::nqueens;
    w.n = p.nqueens_n;
    w.expected = kQueens[static_cast<std::size_t>(w.n)];
  } else if (name == "integrate") {
    w.kind = Kind::integrate;
    w.n = p.integrate_n;
  } else if (name == "matmul") {
    w.kind = Kind::matmul;
    w.n = p.matmul_n;
    const auto nn = static_cast<std::size_t>(w.n) * static_cast<std::size_t>(w.n);
    w.a.resize(nn);
    w.b.resize(nn);
    w.c.assign(nn, 0.0f);
    w.product.assign(nn, 0.0f);
    // Small integers: every sum is exact in float (at most 9 n < 2^24), so
    // any order of the additions gives the same bits as the triple loop.
    for (std::size_t i = 0; i < nn; ++i) {
      w.a[i] = static_cast<float>((i * 7 + 3) % 4);
      w.b[i] = static_cast<float>((i * 5 + 1) % 4);
    }
    matmul_leaf({w.a.data(), w.n}, {w.b.data(), w.n}, {w.product.data(), w.n}, w.n);
  } else if (name == "knapsack") {
    w.kind = Kind::knapsack;
    w.items = knapsack_items();
    w.expected = knapsack_dp(w.items, kKnapsackCapacity);
    w.tasks = 0;  // the search visits more or fewer nodes by the order it finds bounds in
  } else {
    for (const UtsTree* t : kTrees)
      if (name == t->name) w.tree = t;
    if (w.tree == nullptr) throw std::invalid_argument("suite: no workload '" + name + "'");
    w.kind = Kind::uts;
    w.tasks = w.tree->nodes;
    w.deep = w.tree->depth > 2000;
  }
  return w;
}

// Before each run (untimed): matmul's C back to zero.
void reset(Work& w) {
  if (w.kind == Kind::matmul) std::fill(w.c.begin(), w.c.end(), 0.0f);
}

template <class Fj>
Answer compute(Work& w) {
  Answer a;
  switch (w.kind) {
    case Kind::fib: a.count = fib<Fj>(w.n); break;
    case Kind::skynet: a.count = skynet<Fj>(0, pow10(w.n)); break;
    case Kind::nqueens: a.count = nqueens<Fj>(w.n, Board{0, 0, 0, 0}); break;
    case Kind::integrate: {
      const double hi = w.n;
      a.value = integrate<Fj>(0, integrand(0), hi, integrand(hi), 0);
      break;
    }
    case Kind::matmul: matmul<Fj>({w.a.data(), w.n}, {w.b.data(), w.n}, {w.c.data(), w.n}, w.n); break;
    case Kind::uts: {
      UtsNode root;
      uts_root(root, w.tree->root_seed);
      a.tree = uts<Fj>(*w.tree, root);
      break;
    }
    case Kind::knapsack: {
      Best best;
      a.count = knapsack<Fj>(w.items.data(), kKnapsackCapacity, kKnapsackItems, 0, best);
      break;
    }
  }
  return a;
}

Task<Answer> compute_co(Work& w) {
  Answer a;
  switch (w.kind) {
    case Kind::fib: a.count = co_await fib_co(w.n); break;
    case Kind::skynet: a.count = co_await skynet_co(0, pow10(w.n)); break;
    case Kind::nqueens: a.count = co_await nqueens_co(w.n, Board{0, 0, 0, 0}); break;
    case Kind::integrate: {
      const double hi = w.n;
      a.value = co_await integrate_co(0, integrand(0), hi, integrand(hi), 0);
      break;
    }
    case Kind::matmul: co_await matmul_co({w.a.data(), w.n}, {w.b.data(), w.n}, {w.c.data(), w.n}, w.n); break;
    case Kind::uts: {
      UtsNode root;
      uts_root(root, w.tree->root_seed);
      a.tree = co_await uts_co(*w.tree, root);
      break;
    }
    case Kind::knapsack: {
      Best best;
      a.count = co_await knapsack_co(w.items.data(), kKnapsackCapacity, kKnapsackItems, 0, best);
      break;
    }
  }
  co_return a;
}

// A workload ready to run: its inputs, and its call tree's size from one
// counting serial run (UTS's is published; knapsack's varies: 0).
Work make_work(const std::string& name, const SuiteParams& p) {
  Work w = make_inputs(name, p);
  if (w.kind != Kind::uts && w.kind != Kind::knapsack) {
    Counting::calls = 0;
    compute<Counting>(w);
    w.tasks = 1 + Counting::calls;
  }
  return w;
}

// The check of every run: a wrong answer fails the whole experiment.
void verify(const Work& w, const std::string& variant, const Answer& a) {
  const auto fail = [&](const std::string& what) {
    throw std::runtime_error(fmt::format("suite: {} by {} {}", w.name, variant, what));
  };
  switch (w.kind) {
    case Kind::fib:
    case Kind::skynet:
    case Kind::nqueens:
    case Kind::knapsack:
      if (a.count != w.expected) fail(fmt::format("gave {}, expected {}", a.count, w.expected));
      break;
    case Kind::integrate: {
      const double exact = integral_exact(w.n);
      if (!(std::abs(a.value - exact) <= 1e-9 * exact))
        fail(fmt::format("gave {:.17g}, the closed form is {:.17g}", a.value, exact));
      break;
    }
    case Kind::matmul:
      for (std::size_t i = 0; i < w.c.size(); ++i)
        if (w.c[i] != w.product[i])
          fail(fmt::format("gave C[{}][{}] = {}, the triple loop {}", i / static_cast<std::size_t>(w.n),
                           i % static_cast<std::size_t>(w.n), w.c[i], w.product[i]));
      break;
    case Kind::uts:
      if (a.tree.nodes != w.tree->nodes || a.tree.leaves != w.tree->leaves || a.tree.depth != w.tree->depth)
        fail(fmt::format("counted {} nodes, {} leaves, depth {}; UTS publishes {}, {}, {}", a.tree.nodes,
                         a.tree.leaves, a.tree.depth, w.tree->nodes, w.tree->leaves, w.tree->depth));
      break;
  }
}

// Runs f() on a thread with a kDeepStack stack when `deep`, else here.
template <class F>
double on_stack(bool deep, F&& f) {
  if (!deep) return f();
  struct Ctx {
    F* f;
    double out = 0;
    std::exception_ptr error;
  } ctx{&f, 0, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kDeepStack);
  pthread_t t;
  const int rc = pthread_create(
      &t, &attr,
      [](void* arg) -> void* {
        auto* c = static_cast<Ctx*>(arg);
        try {
          c->out = (*c->f)();
        } catch (...) {
          c->error = std::current_exception();
        }
        return nullptr;
      },
      &ctx);
  pthread_attr_destroy(&attr);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "suite: a thread with a deep stack");
  pthread_join(t, nullptr);
  if (ctx.error) std::rethrow_exception(ctx.error);
  return ctx.out;
}

struct Run {
  Work* work;
  int threads;
  Answer* answer;
  OmpTeamSeen* team;
};
using RunFn = double (*)(const Run&);

double seconds_since(std::int64_t t0) { return static_cast<double>(wall_ns() - t0) / 1e9; }

PoolOptions suite_pool(int threads) {
  PoolOptions o;
  o.workers = threads;
  o.stack_size = kDeepStack;
  return o;
}

// Seconds f() takes, its answer into the run's.
template <class F>
double timed(const Run& r, F&& f) {
  const std::int64_t t0 = wall_ns();
  *r.answer = f();
  return seconds_since(t0);
}

double run_serial(const Run& r) {
  return on_stack(r.work->deep, [&] { return timed(r, [&] { return compute<Serial>(*r.work); }); });
}

// The root runs on one of the P (a worker, or this thread in the pool's
// seat), as every other call does.
double run_weft(const Run& r) {
  ThreadPool pool(suite_pool(r.threads));
  start_workers(pool);
  return on_stack(r.work->deep, [&] {
    return timed(r, [&] { return detail::on_workers(pool, [&] { return compute<WeftFj>(*r.work); }); });
  });
}

// The root is spawned on the pool (sync_wait(pool, task)): the P workers
// compute, this thread waits.
double run_weft_coro(const Run& r) {
  ThreadPool pool(suite_pool(r.threads));
  start_workers(pool);
  return timed(r, [&] { return sync_wait(pool, compute_co(*r.work)); });
}

#ifdef WEFT_HAVE_TBB
double run_tbb(const Run& r) {
  // The suites' oneTBB UTS asks for big worker stacks too.
  const oneapi::tbb::global_control stack(oneapi::tbb::global_control::thread_stack_size, kDeepStack);
  return on_stack(r.work->deep, [&] {
    return in_tbb_arena(r.threads, [&] { return timed(r, [&] { return compute<TbbFj>(*r.work); }); });
  });
}
#endif

#ifdef WEFT_HAVE_OPENMP
double run_openmp(const Run& r) {
  return on_stack(r.work->deep, [&] {
    return omp_team(r.threads, [&] { return timed(r, [&] { return compute<OmpTasks>(*r.work); }); }, *r.team);
  });
}
#endif

const std::array<harness::Variant<RunFn>, 5> kVariants{{
    {"serial", kBuiltIn, false, run_serial},
    {"weft", kBuiltIn, true, run_weft},
    {"weft-coro", kBuiltIn, true, run_weft_coro},
    {"tbb", kTbb, true, WEFT_XP_IF_TBB(run_tbb)},
    {"openmp", kOpenMp, true, WEFT_XP_IF_OPENMP(run_openmp)},
}};

// One checked run of `variant` (its seconds): matmul's C reset first.
double run_once(Work& w, const std::string& variant, int threads, OmpTeamSeen& team) {
  Answer a;
  reset(w);
  const double s = harness::variant(kVariants, variant).run(Run{&w, threads, &a, &team});
  verify(w, variant, a);
  return s;
}

struct WorkloadName {
  std::string_view name;
};
const std::array<WorkloadName, 10> kWorkloads{{{"fib"},
                                               {"skynet"},
                                               {"nqueens"},
                                               {"integrate"},
                                               {"matmul"},
                                               {"uts-t1"},
                                               {"uts-t3"},
                                               {"knapsack"},
                                               {"uts-t1l"},
                                               {"uts-t3l"}}};

// Why a variant cannot run a workload here, or empty.
std::string cannot_run(const Work& w, const std::string& variant) {
  // Seen in `weft report --full`: a segfault in T3L after the earlier
  // experiments had started oneTBB's workers.
  if (variant == "tbb" && w.deep)
    return fmt::format("skipped: oneTBB gives its stack size (global_control) only to workers it has not started "
                       "yet, so workers an earlier oneTBB user in this process started keep 8 MiB stacks, which "
                       "{}'s {} levels overflow",
                       w.name, w.tree->depth);
  if (variant == "openmp" && w.deep && std::getenv("OMP_STACKSIZE") == nullptr &&
      std::getenv("GOMP_STACKSIZE") == nullptr)
    return fmt::format("skipped: {}'s {} levels overflow OpenMP's default thread stacks; set OMP_STACKSIZE=512M "
                       "to run it",
                       w.name, w.tree->depth);
  return {};
}

bool task_bound(const std::string& workload) { return workload != "matmul" && workload != "knapsack"; }
bool has_memory_row(const std::string& workload) {
  return workload == "skynet" || workload == "uts-t3" || workload == "uts-t3l";
}

// The faster of weft's two forms at `t` workers, by median.
std::optional<double> weft_best(const Result& r, const std::string& w, const char* metric, int t) {
  const auto a = median(r, Key("weft", metric, t).workload(w));
  const auto b = median(r, Key("weft-coro", metric, t).workload(w));
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

nlohmann::json goal_ratios(const Result& r, const SuiteParams& p, const std::vector<int>& workers,
                           int mem_threads) {
  nlohmann::json ratios = nlohmann::json::array();
  const auto over = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (a && b && *b > 0) return *a / *b;
    return std::nullopt;
  };
  for (const std::string& w : p.workloads) {
    const char* bound = task_bound(w) ? "<= 0.7" : "<= 1.0";
    for (int t : workers) {
      const std::string at = " (" + std::to_string(t) + (t == 1 ? " worker)" : " workers)");
      const auto best = weft_best(r, w, "ms", t);
      add_ratio(ratios, w + ": weft's faster form / tbb" + at, over(best, median(r, Key("tbb", "ms", t).workload(w))),
                bound);
      add_ratio(ratios, w + ": weft's faster form / openmp" + at,
                over(best, median(r, Key("openmp", "ms", t).workload(w))), bound);
      if (w == "fib" || w == "skynet")
        add_ratio(ratios, w + ": weft-coro / weft" + at,
                  ratio(r, Key("weft-coro", "ms", t).workload(w), Key("weft", "ms", t).workload(w)), "<= 0.8");
    }
    if (w == "fib" || w == "skynet")
      add_ratio(ratios, w + ": weft's faster form per task / a serial call (1 worker)",
                over(weft_best(r, w, "ns_per_task", 1), median(r, Key("serial", "ns_per_task").workload(w))),
                "<= 10");
    if (w == "skynet" || w == "uts-t3")
      add_ratio(ratios, w + ": weft's peak RSS above serial / tbb's",
                over(weft_best(r, w, "peak_rss_above_serial_mb", mem_threads),
                     median(r, Key("tbb", "peak_rss_above_serial_mb", mem_threads).workload(w))),
                "<= 0.25");
  }
  return ratios;
}

// One variant's run in a fresh process: its peak RSS, in KiB.
std::optional<double> child_peak_kib(const SuiteParams& p, const std::string& workload, const std::string& variant,
                                     int threads, std::string& why) {
  const std::string spec = fmt::format("{} {} {} {} {} {} {} {}", workload, variant, threads, p.fib_n,
                                       p.skynet_depth, p.nqueens_n, p.integrate_n, p.matmul_n);
  const harness::ChildResult c = harness::spawn({p.child_exe, "suite", "--internal-child", spec});
  if (!c.ok()) {
    why = fmt::format("the measuring process {}: {}", c.describe(), harness::last_line(c.err));
    return std::nullopt;
  }
  std::istringstream in(c.out);
  std::string word;
  double kib = 0;
  if (!(in >> word >> kib) || word != "peak_rss_kib") {
    why = "the measuring process printed no peak RSS";
    return std::nullopt;
  }
  return kib;
}

}  // namespace

const std::vector<std::string>& suite_variants() { return harness::names_of<kVariants>(); }
const std::vector<std::string>& suite_workloads() { return harness::names_of<kWorkloads>(); }
const std::vector<std::string>& suite_default_workloads() {
  static const std::vector<std::string> names(suite_workloads().begin(), suite_workloads().end() - 2);
  return names;
}

void run_suite_child(const std::string& spec) {
  std::istringstream in(spec);
  std::string workload, variant;
  int threads = 0;
  SuiteParams p;
  if (!(in >> workload >> variant >> threads >> p.fib_n >> p.skynet_depth >> p.nqueens_n >> p.integrate_n >>
        p.matmul_n))
    throw std::invalid_argument("suite: bad --internal-child spec '" + spec + "'");
  Work w = make_inputs(workload, p);  // the child needs no task count
  OmpTeamSeen team;
  // weft's topology is discovered once per process (hwloc's discovery, with
  // the I/O plugins hwloc loads for it, peaks about 2 MB above what it
  // keeps): done here, before the reset, so that the peak is the run's own
  // and not a one-time cost of the process, whichever variant runs.
  (void)Topology::instance();
  // The peak from here on: what starting the CLI touched and gave back
  // (parsing, the topology) would otherwise hide a smaller run's peak.
  // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+).
  const bool reset_peak = [] {
    std::ofstream f("/proc/self/clear_refs");
    return static_cast<bool>(f << "5" << std::flush);
  }();
  run_once(w, variant, threads, team);
  long kib = -1;
  std::ifstream status("/proc/self/status");
  for (std::string line; reset_peak && std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) kib = std::stol(line.substr(6));
  if (kib < 0) {  // no reset or no VmHWM: the process's peak since it started
    rusage use{};
    getrusage(RUSAGE_SELF, &use);
    kib = use.ru_maxrss;
  }
  fmt::print("peak_rss_kib {}\n", kib);
}

Result run_suite(const SuiteParams& p) {
  std::vector<int> workers = p.workers;
  if (workers.empty())
    for (int t = 1; t <= available_parallelism(); ++t) workers.push_back(t);
  // Memory is measured at the most workers asked for, not oversubscribed.
  const int mem_threads = *std::max_element(workers.begin(), workers.end());
  if (p.oversubscribe > 0) {
    const int over = p.oversubscribe * available_parallelism();
    if (std::find(workers.begin(), workers.end(), over) == workers.end()) workers.push_back(over);
  }

  std::vector<Work> works;
  std::vector<harness::Unit> units;
  std::vector<std::size_t> work_of;
  for (const std::string& name : p.workloads) {
    works.push_back(make_work(name, p));
    for (auto& u : harness::plan_units(kVariants, p.variants, workers)) {
      if (u.runs()) u.why_not = cannot_run(works.back(), u.variant);
      units.push_back(std::move(u));
      work_of.push_back(works.size() - 1);
    }
  }
  const harness::PlanOptions plan{p.reps, true};
  std::vector<OmpTeamSeen> teams(units.size());
  harness::run_units(units, plan, [&](const harness::Unit& u, std::size_t i) {
    return run_once(works[work_of[i]], u.variant, u.threads, teams[i]);
  });

  Result r;
  r.experiment = "suite";
  nlohmann::json tasks = nlohmann::json::object();
  for (const Work& w : works) tasks[w.name] = w.tasks;
  r.params = {{"integrate_epsilon", kIntegrateEpsilon},
              {"matmul_leaf", kMatmulLeaf},
              {"knapsack", {{"items", kKnapsackItems}, {"capacity", kKnapsackCapacity},
                            {"values", "weight + 10 (strongly correlated), weights 10-100 from a fixed seed"}}},
              {"tasks", tasks},
              {"workers", workers},
              {"weft_threads", "a pool of `workers` workers; the fork-join form's root runs on one of the P (a "
                               "worker, or the calling thread in the pool's seat), the coroutine form's is "
                               "spawned on the pool (sync_wait(pool, task))"},
              {"tbb_threads", "parallel_invoke (two-way forks) and task_group (n-way) in an arena of `workers` slots, "
                              "the calling thread one of them"},
              {"weft_forks", "parallel_invoke (two-way forks) and parallel_invoke_n (n-way) on "
                             "ThreadPool::current(), their tasks in the forking worker's frame"},
              {"openmp_threads", "omp parallel num_threads(`workers`) including the calling thread; one thread "
                                 "starts the recursion (omp single), the team runs its tasks; libgomp runs a task "
                                 "undeferred, as a plain call, while more than 64 per team thread are queued"},
              {"tasks_note", "calls of the call tree (every call but the last of each fork is a task); knapsack's "
                             "varies with the order bounds are found in"},
              {"warmup", harness::warmup_text(plan)}};

  for (std::size_t i = 0; i < units.size(); ++i) {
    const harness::Unit& u = units[i];
    const Work& w = works[work_of[i]];
    std::vector<double> ms, ns;
    for (double s : u.samples) {
      ms.push_back(s * 1e3);
      if (w.tasks > 0) ns.push_back(s * 1e9 / static_cast<double>(w.tasks));
    }
    Row row = make_row(u.variant, u.threads, "ms", "ms", std::move(ms), u.why_not);
    row.note = teams[i].note(u.why_not);
    row.labels.workload = w.name;
    if (w.tasks > 0) row.labels.tasks = w.tasks;
    r.rows.push_back(row);
    if (w.tasks > 0 && u.threads <= 1) {
      Row per = with_metric(row, "ns_per_task", "ns", std::move(ns));
      if (u.variant == "serial") per.note = "per call of the serial call tree";
      r.rows.push_back(std::move(per));
    }
  }
  // Speed-up over the serial call tree, per sample, against serial's median.
  for (const Work& w : works) {
    const auto serial = median(r, Key("serial", "ms").workload(w.name));
    if (!serial) continue;
    for (std::size_t i = 0; i < units.size(); ++i) {
      const harness::Unit& u = units[i];
      if (work_of[i] != static_cast<std::size_t>(&w - works.data()) || u.variant == "serial") continue;
      std::vector<double> up;
      for (double s : u.samples) up.push_back(*serial / (s * 1e3));
      Row row = make_row(u.variant, u.threads, "speedup", "x", std::move(up), u.why_not);
      row.note = teams[i].note(u.why_not);
      row.labels.workload = w.name;
      r.rows.push_back(std::move(row));
    }
  }
  // Peak RSS above the serial run's, at mem_threads, each run in a process
  // of its own: `reps` rounds, each a serial run and then every variant's,
  // so that a sample is a variant's peak less the serial peak of its round
  // (a single pair moves by ~0.1 MB from run to run, as much as a small
  // workload's whole difference).
  for (const Work& w : works) {
    if (p.memory == 0 || !has_memory_row(w.name)) continue;
    if (p.child_exe.empty()) {
      r.notes.push_back("peak RSS not measured: no weft binary to run the measuring processes");
      break;
    }
    struct MemRow {
      std::string variant, not_run;
      std::vector<double> mb;
    };
    std::vector<MemRow> rows;
    for (const std::string& v : p.variants) {
      if (v == "serial") continue;
      std::string not_run = harness::variant(kVariants, v).peer.why_not();
      if (not_run.empty()) not_run = cannot_run(w, v);
      rows.push_back({v, not_run, {}});
    }
    std::vector<double> serial_kib;
    for (int rep = 0; rep < std::max(p.reps, 1); ++rep) {
      std::string why;
      const auto serial = child_peak_kib(p, w.name, "serial", 0, why);
      if (serial) serial_kib.push_back(*serial);
      for (MemRow& m : rows) {
        if (!m.not_run.empty()) continue;
        const auto kib = serial ? child_peak_kib(p, w.name, m.variant, mem_threads, why) : std::nullopt;
        if (!kib) {
          m.not_run = why;
          m.mb.clear();
          continue;
        }
        m.mb.push_back((*kib - *serial) / 1024.0);
      }
    }
    for (MemRow& m : rows) {
      const std::size_t n = m.mb.size();
      Row row = make_row(m.variant, mem_threads, "peak_rss_above_serial_mb", "MB", std::move(m.mb), m.not_run);
      if (n > 0)
        row.note = fmt::format("serial's peak {:.1f} MB; {} in fresh processes, each less its round's serial peak",
                               summarize(serial_kib).median / 1024.0, n == 1 ? "one run" : fmt::format("{} runs", n));
      row.labels.workload = w.name;
      r.rows.push_back(std::move(row));
    }
  }
  r.extra["ratios"] = goal_ratios(r, p, workers, mem_threads);
  return r;
}

// The registration: `weft suite`, its sizes in the report, its figures.
namespace {

// A preset's kernel sizes and repetitions.
struct Sizes {
  int fib, skynet, nqueens, integrate, matmul, reps;
};
void set_sizes(SuiteParams& p, const Sizes& s) {
  p.fib_n = s.fib;
  p.skynet_depth = s.skynet;
  p.nqueens_n = s.nqueens;
  p.integrate_n = s.integrate;
  p.matmul_n = s.matmul;
  p.reps = s.reps;
}

const Register<SuiteParams> reg{{
    .name = "suite", .page = 107, .seconds = {8, 75, 300},
    .title = "The task-parallel suite: fib, skynet, nqueens, integrate, matmul, UTS, knapsack",
    .summary = "The recursive benchmarks task runtimes are compared on (fib, skynet, nqueens, integrate, matmul, "
               "UTS T1/T3, knapsack): weft's fork-join (parallel_invoke) and coroutines against oneTBB and OpenMP "
               "tasks, with speed-up, ns per task and peak memory",
    .options = {names("--workload", &SuiteParams::workloads, "Workloads", "workload", suite_workloads,
                      "all but uts-t1l,uts-t3l"),
                integer("--fib", &SuiteParams::fib_n, "fib(n), no cutoff: ~1.6^n tasks", 2, 45),
                integer("--skynet", &SuiteParams::skynet_depth, "skynet depth: 10^depth leaves", 1, 9),
                integer("--nqueens", &SuiteParams::nqueens_n, "nqueens board size", 1, 16),
                integer("--integrate", &SuiteParams::integrate_n, "integrate (x^2+1)x over [0, n] to 1e-9", 1,
                        100'000),
                integer("--matmul", &SuiteParams::matmul_n, "matmul of n x n floats (a power of two, >= 16)", 16,
                        8192),
                counts("--workers,-w", &SuiteParams::workers, "Worker counts", "1, 2, ... available_parallelism"),
                integer("--oversubscribe", &SuiteParams::oversubscribe,
                        "Also run at this many workers per available CPU (0: not)", 0, 16),
                variants(&SuiteParams::variants, suite_variants),
                integer("--memory", &SuiteParams::memory,
                        "Peak RSS above serial for skynet and the UTS T3 trees, one process per variant and "
                        "repetition (0: not)",
                        0, 1),
                reps(&SuiteParams::reps)},
    .sizes = {[](SuiteParams& p) {
                // Not UTS: T1, the smallest tree the UTS specification
                // defines, is three quarters of the quick run (ask for it by name).
                p.workloads = {"fib", "skynet", "nqueens", "integrate", "matmul", "knapsack"};
                set_sizes(p, {.fib = 25, .skynet = 5, .nqueens = 10, .integrate = 200, .matmul = 128, .reps = 1});
              },
              nullptr,
              // 2 repetitions; the large UTS trees only by name. OpenMP's 2-worker runs are 3-9x its 1-worker
              // ones here, so the other sizes stay a few times the
              // defaults (integrate over [0, 10,000], libfork's size, would
              // take OpenMP minutes per run on 2 CPUs; ask for it by name).
              [](SuiteParams& p) {
                set_sizes(p, {.fib = 32, .skynet = 7, .nqueens = 13, .integrate = 2000, .matmul = 1024, .reps = 2});
              }},
    .check =
        [](const SuiteParams& p) {
          if ((p.matmul_n & (p.matmul_n - 1)) != 0)
            throw BadParam(fmt::format("--matmul {} is not a power of two", p.matmul_n));
        },
    .run = run_suite,
    .heading = [](const SuiteParams& p) {
      return fmt::format("Task-parallel suite (fib({}), skynet depth {}, {}-queens, integrate [0, {}], matmul {}): "
                         "ms per run, speed-up over serial, ns per task at 1 worker, peak RSS above serial",
                         p.fib_n, p.skynet_depth, p.nqueens_n, p.integrate_n, p.matmul_n);
    },
    .print = [](const Result& r) { print_ratios(r, "Goals (at every worker count):", 70); },
    .child = run_suite_child,
    .prepare = [](SuiteParams& p) { p.child_exe = "/proc/self/exe"; },
    .figures = {"bars:speedup", "bars:peak_rss_above_serial_mb"}, .headlines = {"speedup"},
}};

}  // namespace

}  // namespace weft::xp
