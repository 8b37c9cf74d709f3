// weft tasks — a million tiny tasks through std::async, the article's pool,
// weft's pool, oneTBB and Boost.Asio (Tkrzw blog 2021: std::async vs a thread pool).
#include <fmt/format.h>

#include <memory>

#include "cli.hpp"
#include "weft/xp/tasks.hpp"

namespace weft::cli {
namespace {

constexpr const char* kTitle = "Tiny tasks (one atomic increment each): tasks per second, and ns per round trip";
constexpr int kMaxWorkers = 256;

void print_ratio(const char* what, const xp::Row* a, const xp::Row* b, bool lower_is_better, double goal) {
  if (a == nullptr || b == nullptr || !a->measured || !b->measured || a->stats.median <= 0 || b->stats.median <= 0)
    return;
  const double ratio = lower_is_better ? b->stats.median / a->stats.median : a->stats.median / b->stats.median;
  fmt::print("  {:<58} {:>8.2f}x  (goal >= {}x: {})\n", what, ratio, goal, ratio >= goal ? "met" : "MISSED");
}

void print_published(const xp::Result& r) {
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
  // The goals weft's pool is held to, from this run's medians (2 workers).
  constexpr int kW = 2;
  if (xp::find_row(r, "weft-post", kW, "tasks_per_s") == nullptr) return;
  fmt::print("\nweft against its peers, {} workers (medians of this run):\n", kW);
  const auto* post = xp::find_row(r, "weft-post", kW, "tasks_per_s");
  print_ratio("fire-and-forget: weft-post / tbb-task_group", post,
              xp::find_row(r, "tbb-task_group", kW, "tasks_per_s", "fire_and_forget"), false, 1.0);
  print_ratio("fire-and-forget: weft-post / article-pool", post, xp::find_row(r, "article-pool", kW, "tasks_per_s"),
              false, 5.0);
  print_ratio("round trip: weft-submit-get vs tbb-task_group run+wait (ns)",
              xp::find_row(r, "weft-submit-get", kW, "round_trip_ns"),
              xp::find_row(r, "tbb-task_group", kW, "round_trip_ns"), true, 1.0);
  print_ratio("round trip: weft-submit-get / article-pool-future",
              xp::find_row(r, "weft-submit-get", kW, "tasks_per_s"),
              xp::find_row(r, "article-pool-future", kW, "tasks_per_s"), false, 50.0);
  if (const auto* remote = xp::find_row(r, "weft-submit-get-remote", kW, "round_trip_ns");
      remote != nullptr && remote->measured)
    fmt::print("  {:<58} {:>8.0f} ns\n", "forced remote round trip (weft-submit-get-remote)", remote->stats.median);
}

struct TasksOptions {
  Common common;
  long long tasks = 1'000'000;
  std::string workers = "1,2,4,8,16";
  std::vector<std::string> variants;
  int reps = 5;
};

xp::TasksParams to_params(const TasksOptions& o) {
  xp::TasksParams p;
  p.tasks = positive("--tasks", o.tasks, 1'000'000'000);
  try {
    p.workers = xp::parse_workers(o.workers, kMaxWorkers);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--workers: {}", e.what()));
  }
  if (!o.variants.empty()) p.variants = parse_names("variant", o.variants, xp::tasks_variants());
  p.reps = positive("--reps", o.reps, 1000);
  return p;
}

const Register reg{{
    "tasks",
    [](CLI::App& app) {
      auto o = std::make_shared<TasksOptions>();
      auto* sub = app.add_subcommand("tasks", "Tiny tasks through std::async and thread pools (Tkrzw blog 2021: std::async vs a thread pool)");
      sub->add_option("--tasks,-n", o->tasks,
                      "Tasks per run (default 1,000,000; std-async at most 20,000 and round trips at most "
                      "50,000 of them)");
      sub->add_option("--workers,-w", o->workers, "Worker counts, comma list (default 1,2,4,8,16)");
      sub->add_option("--variant", o->variants,
                      "Variants, comma list: sync, std-deferred, std-async, article-pool, article-pool-future, "
                      "weft-post, weft-submit-get, weft-submit-get-remote, tbb-enqueue, tbb-task_group, "
                      "asio-post (default all)");
      sub->add_option("--reps,-r", o->reps, "Repetitions, interleaved across variants (default 5)");
      sub->add_flag("--json", o->common.json, "Print one JSON object");
      sub->callback([o] {
        if (validate_only()) { (void)to_params(*o); return; }
        const xp::Result r = xp::run_tasks(to_params(*o));
        emit(r, o->common, kTitle, [&] { print_published(r); });
      });
    },
    [](bool quick) {
      xp::TasksParams p;
      if (quick) {
        p.tasks = 200'000;
        p.async_tasks = 5'000;
        p.round_trip_tasks = 20'000;
        p.workers = {1, 2, 4};
        p.reps = 3;
      } else {
        p.tasks = 500'000;
        p.async_tasks = 10'000;
        p.round_trip_tasks = 20'000;
        p.workers = {1, 2, 4, 8};
        p.reps = 3;
      }
      return xp::run_tasks(p);
    },
    kTitle,
    print_published,
}};

}  // namespace
}  // namespace weft::cli
