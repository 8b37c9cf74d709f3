#include "weft/xp/tasks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>

#include "article_pool.hpp"
#include "peer_support.hpp"
#include "weft/detail/cache_line.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"
#include "weft/xp/ring.hpp"

#ifdef WEFT_HAVE_OPENMP
#include <omp.h>
#endif

#ifdef WEFT_HAVE_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#endif

namespace weft::xp {

namespace {

// The whole work of a task. Its own line, so that only the tasks share it.
struct alignas(detail::kCacheLine) Counter {
  std::atomic<std::int64_t> n{0};
  // relaxed: the task's work is the increment itself; each variant's own
  // completion wait orders it before the final check.
  void bump() noexcept { n.fetch_add(1, std::memory_order_relaxed); }
};

// The std::async variants keep this many futures before get()ting them: all
// of a million would hold a million states (and, for launch::async, that
// many unjoined threads).
constexpr std::size_t kFutureBatch = 256;

enum class Mode { fire_and_forget, round_trip };

// One timed run: the variant's threads (0: no pool), its mode, its tasks.
struct Run {
  int threads = 0;
  Mode mode = Mode::fire_and_forget;
  std::int64_t tasks = 0;
  OmpTeamSeen* team = nullptr;  // openmp: where the team ran
};

double elapsed_s(std::int64_t t0) { return static_cast<double>(wall_ns() - t0) / 1e9; }

// The yardstick of the remote round trip's goal: `u.tasks` hops of `weft
// ring`'s release ring between two unpinned threads, measured in this run
// (the host's cross-CPU latency moves from minute to minute). The counter
// holds the hops, all made (release_ring_seconds() throws otherwise).
double run_ring_hop(const Run& u, Counter& c) {
  const double s = release_ring_seconds(u.tasks);
  c.n.store(u.tasks, std::memory_order_relaxed);  // relaxed: read after the run, on this thread
  return s;
}
// At least this many hops: a short ring is all start-up.
constexpr std::int64_t kMinRingHops = 100'000;

void check(const std::string& variant, const Run& u, const Counter& c) {
  const std::int64_t got = c.n.load(std::memory_order_relaxed);  // relaxed: the run has been waited for
  if (got != u.tasks) {
    throw std::runtime_error(variant + " with " + std::to_string(u.threads) + " threads ran " +
                             std::to_string(got) + " of " + std::to_string(u.tasks) + " tasks");
  }
}

double run_sync(std::int64_t n, Counter& c) {
  auto task = [&c] { c.bump(); };
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) task();
  return elapsed_s(t0);
}

double run_std(std::launch policy, std::int64_t n, Counter& c) {
  auto task = [&c] { c.bump(); };
  std::vector<std::future<void>> futures;
  futures.reserve(kFutureBatch);
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    futures.push_back(std::async(policy, task));
    if (futures.size() == kFutureBatch || i + 1 == n) {
      for (auto& f : futures) f.get();
      futures.clear();
    }
  }
  return elapsed_s(t0);
}

double run_article_pool(int w, std::int64_t n, Counter& c) {
  ArticlePool pool(w);
  pool.submit([] {});
  pool.wait_idle();  // the workers are up
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) pool.submit([&c] { c.bump(); });
  pool.wait_idle();
  return elapsed_s(t0);
}

double run_article_pool_future(int w, std::int64_t n, Counter& c) {
  ArticlePool pool(w);
  pool.submit([] {});
  pool.wait_idle();
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    std::promise<void> done;
    std::future<void> f = done.get_future();
    pool.submit([&c, &done] {
      c.bump();
      done.set_value();
    });
    f.get();
  }
  return elapsed_s(t0);
}

double run_weft_post(int w, std::int64_t n, Counter& c) {
  ThreadPool pool(PoolOptions{.workers = w});
  pool.post([] {});
  pool.wait_idle();
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) pool.post([&c] { c.bump(); });
  pool.wait_idle();
  return elapsed_s(t0);
}

template <bool kRemote>
double run_weft_submit_get(int w, std::int64_t n, Counter& c) {
  ThreadPool pool(PoolOptions{.workers = w});
  pool.post([] {});
  pool.wait_idle();
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    auto f = pool.submit([&c] { c.bump(); });
    if constexpr (kRemote) {
      detail::wait_remote(f);  // the forced remote wait: a worker must run the task
    } else {
      f.get();
    }
  }
  return elapsed_s(t0);
}

#ifdef WEFT_HAVE_TBB
namespace tbb = oneapi::tbb;

double run_tbb_enqueue(int w, std::int64_t n, Counter& c) {
  TbbThreads limit(w);
  // No slot reserved for this thread: enqueued tasks are run by w workers.
  tbb::task_arena arena(w, 0);
  arena.initialize();
  std::atomic<std::int64_t> done{0};
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    arena.enqueue([&c, &done, n] {
      c.bump();
      // acq_rel: the last task sees every other task's work before it wakes
      // the waiter, whose acquire load then sees it too.
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == n) done.notify_all();
    });
  }
  // acquire: pairs with the last task's increment.
  for (std::int64_t v = done.load(std::memory_order_acquire); v != n; v = done.load(std::memory_order_acquire))
    done.wait(v, std::memory_order_acquire);
  return elapsed_s(t0);
}

double run_tbb_task_group(int w, std::int64_t n, Counter& c, Mode mode) {
  TbbThreads limit(w);
  // Concurrency w with one slot for this thread, which runs tasks in wait().
  tbb::task_arena arena(w);
  arena.initialize();
  double s = 0;
  arena.execute([&] {
    tbb::task_group g;
    const std::int64_t t0 = wall_ns();
    if (mode == Mode::fire_and_forget) {
      for (std::int64_t i = 0; i < n; ++i) g.run([&c] { c.bump(); });
      g.wait();
    } else {
      for (std::int64_t i = 0; i < n; ++i) {
        g.run([&c] { c.bump(); });
        g.wait();
      }
    }
    s = elapsed_s(t0);
  });
  return s;
}
#endif

#ifdef WEFT_HAVE_OPENMP
// OpenMP tasks as its users write them, on one thread of a team (`omp
// single`, inside omp_team()): n tasks of task(), then one taskwait
// (fire-and-forget), or a taskwait after each (round trips). The team runs
// them, the creator too while it waits, as in tbb-task_group.
template <class F>
void omp_spawn(std::int64_t n, Mode mode, const F& task) {
  if (mode == Mode::fire_and_forget) {
    for (std::int64_t i = 0; i < n; ++i) {
#pragma omp task
      task();
    }
#pragma omp taskwait
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
#pragma omp task
      task();
#pragma omp taskwait
    }
  }
}

double run_openmp_task(const Run& u, Counter& c) {
  return omp_team(
      u.threads,
      [&] {
        Counter* counter = &c;  // each task copies the pointer (firstprivate), not the counter
        const std::int64_t t0 = wall_ns();
        omp_spawn(u.tasks, u.mode, [counter] { counter->bump(); });
        return elapsed_s(t0);
      },
      *u.team);
}

// Where run_openmp_task()'s tasks ran, from one more run, untimed, each
// task noting its thread: the share run by the thread that created them.
// libgomp runs a task at once on its creator (undeferred) when too many
// are queued, so a fast row may be mostly a serial loop.
double openmp_creator_share(const Run& u) {
  std::atomic<std::int64_t> on_creator{0};
  OmpTeamSeen ignored;
  omp_team(
      u.threads,
      [&] {
        std::atomic<std::int64_t>* count = &on_creator;
        omp_spawn(u.tasks, u.mode, [count, creator = omp_get_thread_num()] {
          // relaxed: a count, read after the region's closing barrier.
          if (omp_get_thread_num() == creator) count->fetch_add(1, std::memory_order_relaxed);
        });
        return 0.0;
      },
      ignored);
  // relaxed: the region has joined (its barrier orders the tasks' adds).
  return static_cast<double>(on_creator.load(std::memory_order_relaxed)) / static_cast<double>(u.tasks);
}
#endif

#ifdef WEFT_HAVE_ASIO
double run_asio_post(int w, std::int64_t n, Counter& c) {
  boost::asio::thread_pool pool(static_cast<std::size_t>(w));
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) boost::asio::post(pool, [&c] { c.bump(); });
  pool.join();  // waits for the queued work, then the threads exit
  return elapsed_s(t0);
}
#endif

// Every runner takes the run and the counter its tasks bump.
using RunFn = double (*)(const Run&, Counter&);

struct TaskVariant {
  std::string_view name;
  harness::Peer peer;
  bool pooled = true;
  RunFn run = nullptr;
  bool round_trip = false;  // waits for each task before queuing the next
  bool both_modes = false;  // measured fire-and-forget and round trip
};

template <std::launch kPolicy>
double std_runner(const Run& u, Counter& c) { return run_std(kPolicy, u.tasks, c); }
template <double (*kRun)(int, std::int64_t, Counter&)>
double pool_runner(const Run& u, Counter& c) { return kRun(u.threads, u.tasks, c); }

#ifdef WEFT_HAVE_TBB
double tbb_task_group_runner(const Run& u, Counter& c) { return run_tbb_task_group(u.threads, u.tasks, c, u.mode); }
#endif

// tbb-task_group is measured both ways: run all + wait (its tasks_per_s
// row), and run + wait per task (its round_trip_ns row).
// ring-hop is no pool: the hop of a two-thread ring, the remote round
// trip's yardstick (its only row is ns_per_hop).
const std::array<TaskVariant, 13> kVariants{{
    {"sync", kBuiltIn, false, [](const Run& u, Counter& c) { return run_sync(u.tasks, c); }},
    {"std-deferred", kBuiltIn, false, std_runner<std::launch::deferred>},
    {"std-async", kBuiltIn, false, std_runner<std::launch::async>},
    {"article-pool", kBuiltIn, true, pool_runner<run_article_pool>},
    {"article-pool-future", kBuiltIn, true, pool_runner<run_article_pool_future>, true},
    {"weft-post", kBuiltIn, true, pool_runner<run_weft_post>},
    {"weft-submit-get", kBuiltIn, true, pool_runner<run_weft_submit_get<false>>, true},
    {"weft-submit-get-remote", kBuiltIn, true, pool_runner<run_weft_submit_get<true>>, true},
    {"tbb-enqueue", kTbb, true, WEFT_XP_IF_TBB(pool_runner<run_tbb_enqueue>)},
    {"tbb-task_group", kTbb, true, WEFT_XP_IF_TBB(tbb_task_group_runner), false, true},
    {"openmp-task", kOpenMp, true, WEFT_XP_IF_OPENMP(run_openmp_task), false, true},
    {"asio-post", kAsio, true, WEFT_XP_IF_ASIO(pool_runner<run_asio_post>)},
    {"ring-hop", kBuiltIn, false, run_ring_hop, true},
}};

std::string count_note(std::int64_t used, std::int64_t asked, const char* why) {
  if (used == asked) return {};
  return std::to_string(used) + " of the " + std::to_string(asked) + " tasks (" + why + ")";
}


// The goals weft's pool is held to, from this run's medians at
// kGoalWorkers workers; the report and the CLI print them from here.

nlohmann::json tasks_ratios(const Result& r) {
  nlohmann::json ratios = nlohmann::json::array();
  const Key post("weft-post", "tasks_per_s", kGoalWorkers);
  // The peers an outside thread posts to, as weft-post does; task_group and
  // OpenMP tasks run some of them on the posting thread itself (their notes
  // say how many), so those two are figures, not goals.
  std::optional<double> best;
  for (const char* peer : {"article-pool", "tbb-enqueue", "asio-post"})
    if (const auto m = median(r, Key(peer, "tasks_per_s", kGoalWorkers))) best = std::max(best.value_or(0.0), *m);
  if (const auto weft = median(r, post); weft && best)
    add_ratio(ratios, "fire-and-forget: weft-post / best of article-pool, tbb-enqueue, asio-post", *weft / *best,
              ">= 1.5");
  add_ratio(ratios, "fire-and-forget: weft-post / tbb-task_group",
            ratio(r, post, Key("tbb-task_group", "tasks_per_s", kGoalWorkers).mode("fire_and_forget")), "");
  add_ratio(ratios, "fire-and-forget: weft-post / openmp-task",
            ratio(r, post, Key("openmp-task", "tasks_per_s", kGoalWorkers).mode("fire_and_forget")), "");
  add_ratio(ratios, "round trip: weft-submit-get / tbb-task_group run+wait, ns",
            ratio(r, Key("weft-submit-get", "round_trip_ns", kGoalWorkers),
                  Key("tbb-task_group", "round_trip_ns", kGoalWorkers)),
            "<= 1.0");
  add_ratio(ratios, "round trip: weft-submit-get / article-pool-future, tasks/s",
            ratio(r, Key("weft-submit-get", "tasks_per_s", kGoalWorkers),
                  Key("article-pool-future", "tasks_per_s", kGoalWorkers)),
            ">= 50");
  add_ratio(ratios, "forced remote round trip (weft-submit-get-remote), ns",
            median(r, Key("weft-submit-get-remote", "round_trip_ns", kGoalWorkers)), "");
  add_ratio(ratios, "forced remote round trip / ring hop of this run (ring-hop), ns",
            ratio(r, Key("weft-submit-get-remote", "round_trip_ns", kGoalWorkers), Key("ring-hop", "ns_per_hop")),
            "<= 5");
  return ratios;
}

}  // namespace

const std::vector<std::string>& tasks_variants() { return harness::names_of<kVariants>(); }

Result run_tasks(const TasksParams& p) {
  const std::int64_t async_n = std::min(p.tasks, p.async_tasks);
  const std::int64_t rt_n = std::min(p.tasks, p.round_trip_tasks);

  // The chosen variants in the table's order; runs[i] says how units[i] runs.
  std::vector<std::string> chosen;
  for (const auto& v : kVariants)
    if (std::find(p.variants.begin(), p.variants.end(), v.name) != p.variants.end()) chosen.emplace_back(v.name);
  std::vector<harness::Unit> units;
  std::vector<Run> runs;
  std::vector<std::string> notes;
  const auto add = [&](harness::Unit u, Mode mode) {
    const bool rt = mode == Mode::round_trip;
    const std::int64_t n = u.variant == "ring-hop"  ? std::max(rt_n, kMinRingHops)
                           : rt                       ? rt_n
                           : u.variant == "std-async" ? async_n
                                                      : p.tasks;
    runs.push_back(Run{u.threads, mode, n, nullptr});
    notes.push_back(!u.runs() ? u.why_not
                    : rt      ? count_note(rt_n, p.tasks, "round trips")
                              : count_note(n, p.tasks, "a thread per task"));
    units.push_back(std::move(u));
  };
  for (harness::Unit& u : harness::plan_units(kVariants, chosen, p.workers)) {
    const TaskVariant& v = harness::variant(kVariants, u.variant);
    if (v.both_modes) add(u, Mode::round_trip);  // and run + wait per task
    add(std::move(u), v.round_trip ? Mode::round_trip : Mode::fire_and_forget);
  }

  std::vector<OmpTeamSeen> teams(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) runs[i].team = &teams[i];
  const harness::PlanOptions plan{p.reps, true};
  harness::run_units(units, plan, [&](const harness::Unit& u, std::size_t i) {
    const Run& run = runs[i];
    Counter c;
    const double s = harness::variant(kVariants, u.variant).run(run, c);
    check(u.variant, run, c);
    return s;
  });

#ifdef WEFT_HAVE_OPENMP
  for (std::size_t i = 0; i < units.size(); ++i) {
    const harness::Unit& u = units[i];
    if (!u.runs() || u.variant.rfind("openmp-", 0) != 0) continue;
    const double share = openmp_creator_share(runs[i]);
    const std::string where = std::to_string(static_cast<int>(share * 100 + 0.5)) +
                              "% of the tasks ran on the thread that created them (an extra untimed run)";
    notes[i] = notes[i].empty() ? where : notes[i] + "; " + where;
  }
#endif

  Result r;
  r.experiment = "tasks";
  r.params = {{"async_tasks", async_n},
              {"round_trip_tasks", rt_n},
              {"task", "one relaxed atomic fetch_add"},
              {"std_future_batch", kFutureBatch},
              {"tbb_threads", "task_group: arena of `threads` incl. the caller; enqueue: `threads` workers"},
              {"openmp_threads", "omp parallel num_threads(`threads`) incl. the calling thread, the tasks "
                                 "created in omp single; OMP_PROC_BIND as the environment sets it (the notes say)"},
              {"warmup", harness::warmup_text(plan)}};
  for (std::size_t i = 0; i < units.size(); ++i) {
    const harness::Unit& u = units[i];
    const Run& run = runs[i];
    const bool rt = run.mode == Mode::round_trip;
    auto row = [&](const char* metric, const char* unit, double (*f)(double, std::int64_t)) {
      std::vector<double> samples;
      for (double s : u.samples) samples.push_back(f(s, run.tasks));
      Row out = make_row(u.variant, u.threads, metric, unit, std::move(samples), u.why_not);
      out.note = teams[i].note(notes[i]);
      out.labels.mode = rt ? "round_trip" : "fire_and_forget";
      out.labels.tasks = run.tasks;
      return out;
    };
    auto rate = [](double s, std::int64_t n) { return static_cast<double>(n) / s; };
    auto per = [](double s, std::int64_t n) { return s * 1e9 / static_cast<double>(n); };
    if (u.variant == "ring-hop") {
      Row hop = row("ns_per_hop", "ns", per);
      if (u.runs()) hop.note = fmt::format("`weft ring`'s release flag, 2 unpinned threads, {} hops a run", run.tasks);
      r.rows.push_back(std::move(hop));
      continue;
    }
    // A variant measured both ways reports its round trip in ns only: its
    // tasks_per_s row is the fire-and-forget one.
    if (!(rt && harness::variant(kVariants, u.variant).both_modes))
      r.rows.push_back(row("tasks_per_s", "tasks/s", rate));
    if (rt) r.rows.push_back(row("round_trip_ns", "ns", per));
  }
  r.published = published("001_async_vs_pool");
  r.extra["ratios"] = tasks_ratios(r);
  const int most = p.workers.empty() ? 0 : *std::max_element(p.workers.begin(), p.workers.end());
  if (auto note = harness::oversubscribed_note("workers", most, "the extra threads only add contention");
      !note.empty())
    r.notes.push_back(std::move(note));
  r.notes.push_back("weft-submit-get may run the task in place on the waiting thread (like tbb-task_group's "
                    "run+wait); weft-submit-get-remote always waits for a worker");
  return r;
}

// The registration: `weft tasks`, its sizes in the report, its figure.
namespace {

void print_published(const Result& r) {
  const auto& pub = r.published;
  if (pub.is_null()) return;
  const auto& qps = pub["tasks_per_s"];
  fmt::print("\nThe article ({}), tasks per second beside this run's medians:\n",
             pub.value("machine", std::string()));
  fmt::print("{:<22} {:>7} {:>14} {:>14} {:>9}\n", "variant", "threads", "article", "this run", "ratio");
  for (const auto& row : r.rows) {
    if (row.metric != "tasks_per_s" || !qps.contains(row.variant)) continue;
    const auto& figure = qps[row.variant];
    double article = 0;
    if (figure.is_number()) {
      article = figure.get<double>();
    } else {
      const std::string key = std::to_string(row.threads);
      if (!figure.contains(key)) continue;
      article = figure[key].get<double>();
    }
    const std::string ours = row.measured ? fmt::format("{:.4g}", row.stats.median) : std::string("-");
    const std::string ratio = row.measured ? fmt::format("{:.2f}x", row.stats.median / article) : std::string("-");
    fmt::print("{:<22} {:>7} {:>14.4g} {:>14} {:>9}\n", row.variant, row.threads > 0 ? std::to_string(row.threads) : "",
               article, ours, ratio);
  }
}

void print_tasks(const Result& r) {
  print_published(r);
  print_goals(r, 62);
}

const Register<TasksParams> reg{{
    .name = "tasks", .page = 30, .article = "001_async_vs_pool", .seconds = {8, 18, 120},
    .title = "Tiny tasks: std::async against thread pools",
    .summary = "Tiny tasks through std::async and thread pools (Tkrzw blog 2021: std::async vs a thread pool)",
    .options = {integer("--tasks,-n", &TasksParams::tasks,
                        "Tasks per run (std-async and round trips at most the two options below)", 1, 1'000'000'000),
                integer("--async-tasks", &TasksParams::async_tasks, "At most this many std-async tasks (a thread each)",
                        1, 1'000'000),
                integer("--round-trip-tasks", &TasksParams::round_trip_tasks, "At most this many round trips per run",
                        1, 1'000'000'000),
                counts("--workers,-w", &TasksParams::workers, "Worker counts"),
                variants(&TasksParams::variants, tasks_variants), reps(&TasksParams::reps)},
    .sizes = {[](TasksParams& p) {
                p.tasks = 200'000;
                p.async_tasks = 5'000;
                p.round_trip_tasks = 5'000;  // the article's pool: 40-80 us a round trip on 2 CPUs
                p.workers = {1, 2, 4};
                p.reps = 2;
              },
              [](TasksParams& p) {
                p.tasks = 500'000;
                p.async_tasks = 10'000;
                p.round_trip_tasks = 20'000;
                p.workers = {1, 2, 4, 8};
                p.reps = 3;
              },
              nullptr},
    .run = run_tasks,
    .heading = "Tiny tasks (one atomic increment each): tasks per second, and ns per round trip",
    .print = print_tasks,
    .figures = {"tasks_per_s"}, .headlines = {"tasks_per_s", "round_trip_ns"},
}};

}  // namespace

}  // namespace weft::xp
