// weft tasks — a million tiny tasks through std::async, the article's pool,
// weft's pool, oneTBB, OpenMP tasks and Boost.Asio (Tkrzw blog 2021: std::async vs a thread pool).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "cli.hpp"
#include "weft/xp/tasks.hpp"

namespace weft::cli {
namespace {

constexpr const char* kTitle = "Tiny tasks (one atomic increment each): tasks per second, and ns per round trip";

// a / b of this run's medians (b / a when lower is better), against its
// goal (0: none, the figure only).
void print_ratio(const char* what, std::optional<double> ratio, double goal) {
  if (!ratio) return;
  if (goal == 0) {
    fmt::print("  {:<58} {:>8.2f}x\n", what, *ratio);
    return;
  }
  fmt::print("  {:<58} {:>8.2f}x  (goal >= {}x: {})\n", what, *ratio, goal, *ratio >= goal ? "met" : "MISSED");
}
void print_ratio(const char* what, const xp::Result& r, const xp::Key& a, const xp::Key& b, bool lower_is_better,
                 double goal) {
  print_ratio(what, lower_is_better ? xp::ratio(r, b, a) : xp::ratio(r, a, b), goal);
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
  const xp::Key post("weft-post", "tasks_per_s", kW);
  if (xp::find(r, post) == nullptr) return;
  fmt::print("\nweft against its peers, {} workers (medians of this run):\n", kW);
  // The peers an outside thread posts to, as weft-post does; task_group and
  // OpenMP tasks run some of them on the posting thread itself (their notes
  // say how many), so they are figures, not goals.
  std::optional<double> best;
  for (const char* peer : {"article-pool", "tbb-enqueue", "asio-post"})
    if (const auto m = xp::median(r, xp::Key(peer, "tasks_per_s", kW))) best = std::max(best.value_or(0.0), *m);
  if (const auto weft = xp::median(r, post); weft && best)
    print_ratio("fire-and-forget: weft-post / best of article-pool, tbb-enqueue, asio-post", *weft / *best, 1.5);
  print_ratio("fire-and-forget: weft-post / tbb-task_group", r, post,
              xp::Key("tbb-task_group", "tasks_per_s", kW).mode("fire_and_forget"), false, 0);
  print_ratio("fire-and-forget: weft-post / openmp-task", r, post,
              xp::Key("openmp-task", "tasks_per_s", kW).mode("fire_and_forget"), false, 0);
  print_ratio("round trip: weft-submit-get vs tbb-task_group run+wait (ns)", r,
              xp::Key("weft-submit-get", "round_trip_ns", kW), xp::Key("tbb-task_group", "round_trip_ns", kW), true,
              1.0);
  print_ratio("round trip: weft-submit-get / article-pool-future", r, xp::Key("weft-submit-get", "tasks_per_s", kW),
              xp::Key("article-pool-future", "tasks_per_s", kW), false, 50.0);
  if (const auto remote = xp::median(r, xp::Key("weft-submit-get-remote", "round_trip_ns", kW)))
    fmt::print("  {:<58} {:>8.0f} ns\n", "forced remote round trip (weft-submit-get-remote)", *remote);
}

struct TasksOptions {
  long long tasks = 1'000'000;
  long long async_tasks = 20'000;
  long long round_trip_tasks = 50'000;
};

void to_params(const TasksOptions& o, xp::TasksParams& p) {
  p.tasks = positive("--tasks", o.tasks, 1'000'000'000);
  p.async_tasks = positive("--async-tasks", o.async_tasks, 1'000'000);
  p.round_trip_tasks = positive("--round-trip-tasks", o.round_trip_tasks, 1'000'000'000);
}

void add_options(CLI::App& sub, TasksOptions& o) {
  sub.add_option("--tasks,-n", o.tasks,
                 "Tasks per run (default 1,000,000; std-async and round trips at most the two options below)");
  sub.add_option("--async-tasks", o.async_tasks, "At most this many std-async tasks (a thread each; default 20,000)");
  sub.add_option("--round-trip-tasks", o.round_trip_tasks, "At most this many round trips per run (default 50,000)");
}

const Register reg{make_experiment<TasksOptions, xp::TasksParams>(
    {"tasks", with_workers(5, xp::tasks_variants, "Worker counts, comma list (default 1,2,4,8,16)"), add_options, to_params, xp::run_tasks, fixed<xp::TasksParams>(kTitle), print_published})};

}  // namespace
}  // namespace weft::cli
