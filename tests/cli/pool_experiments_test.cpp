// The pool experiments' CLI contract (weft tasks, fib, pfor, idle): the JSON
// fields, every variant present (measured, or with a note saying why not),
// and bad input -> exit status 2 with a message naming the option. Tiny
// sizes and no timed assertions: the numbers are only checked for shape.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "cli_run.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

// Every row's shape (a variant on a pool says its "threads", one on none
// does not); a row not measured was not built.
void expect_rows_well_formed(const nlohmann::json& j, const std::string& experiment) {
  expect_common_fields(j, experiment);
  ASSERT_TRUE(j.at("results").is_array());
  EXPECT_FALSE(j.at("results").empty());
  for (const auto& row : j.at("results")) {
    expect_row_shape(row, Threads::either);
    if (!row.at("measured").get<bool>()) {
      EXPECT_NE(row.at("note").get<std::string>().find("not built"), std::string::npos) << row.dump();
    }
  }
}

using Key = std::pair<std::string, int>;  // variant, threads (0: none)

// The median of the measured row of `variant`, `metric` and `threads` (0:
// a variant on no pool); -1 when there is none.
double median_of(const nlohmann::json& j, const std::string& variant, const std::string& metric, int threads) {
  for (const auto& row : j.at("results"))
    if (row.at("variant") == variant && row.at("metric") == metric && row.value("threads", 0) == threads &&
        row.at("measured").get<bool>())
      return row.at("median").get<double>();
  return -1.0;
}

std::set<Key> keys_with(const nlohmann::json& j, const std::string& metric) {
  std::set<Key> out;
  for (const auto& row : j.at("results"))
    if (row.at("metric") == metric) out.insert({row.at("variant").get<std::string>(), row.value("threads", 0)});
  return out;
}

TEST(PoolExperiments, TasksJsonHasEveryVariant) {
  const auto j = run_json("tasks --tasks 2000 --workers 1,2 --reps 1");
  expect_rows_well_formed(j, "tasks");
  EXPECT_EQ(j.at("params").at("tasks"), 2000);
  EXPECT_EQ(j.at("params").at("workers"), nlohmann::json::array({1, 2}));
  EXPECT_FALSE(j.at("published").is_null());
  const auto rate = keys_with(j, "tasks_per_s");
  for (const char* v : {"sync", "std-deferred", "std-async"}) EXPECT_TRUE(rate.count({v, 0})) << v;
  for (int w : {1, 2}) {
    for (const char* v : {"article-pool", "article-pool-future", "weft-post", "weft-submit-get",
                          "weft-submit-get-remote", "tbb-enqueue", "tbb-task_group", "openmp-task",
                          "asio-post"})
      EXPECT_TRUE(rate.count({v, w})) << v << " with " << w << " workers";
  }
  const auto rt = keys_with(j, "round_trip_ns");
  for (int w : {1, 2}) {
    for (const char* v :
         {"article-pool-future", "weft-submit-get", "weft-submit-get-remote", "tbb-task_group", "openmp-task"})
      EXPECT_TRUE(rt.count({v, w})) << v << " round trip with " << w << " workers";
  }
  // The remote round trip's yardstick, measured in the same run: a ring
  // hop, and the goal's ratio made of the two medians.
  const double hop = median_of(j, "ring-hop", "ns_per_hop", 0);
  const double remote = median_of(j, "weft-submit-get-remote", "round_trip_ns", 2);
  ASSERT_GT(hop, 0.0);
  ASSERT_GT(remote, 0.0);
  const auto g = goals(j);
  const auto hop_goal = g.find("forced remote round trip / ring hop of this run (ring-hop), ns");
  ASSERT_NE(hop_goal, g.end());
  EXPECT_NEAR(hop_goal->second.at("value").get<double>(), remote / hop, 1e-9 * remote / hop) << hop_goal->second.dump();
  EXPECT_EQ(hop_goal->second.at("goal"), "<= 5");
  // An OpenMP row says where its team ran (or that OpenMP was not built).
  for (const auto& row : j.at("results")) {
    const std::string v = row.at("variant");
    if (v.rfind("openmp", 0) != 0) continue;
    const std::string note = row.at("note");
    if (row.at("measured").get<bool>()) {
      EXPECT_NE(note.find("team of " + std::to_string(row.at("threads").get<int>()) + " threads"), std::string::npos)
          << row.dump();
    } else {
      EXPECT_NE(note.find("not built"), std::string::npos) << row.dump();
    }
  }
  for (const auto& row : j.at("results")) {
    ASSERT_TRUE(row.contains("mode")) << row.dump();
    const bool is_rt = row.at("mode") == "round_trip";
    EXPECT_TRUE(is_rt || row.at("mode") == "fire_and_forget") << row.dump();
    if (row.at("metric") == "round_trip_ns") {
      EXPECT_TRUE(is_rt) << row.dump();
    }
  }
}

TEST(PoolExperiments, TasksVariantSelection) {
  const auto j = run_json("tasks --tasks 500 --workers 1 --reps 2 --variant weft-post,sync");
  expect_rows_well_formed(j, "tasks");
  std::set<std::string> seen;
  for (const auto& row : j.at("results")) {
    seen.insert(row.at("variant").get<std::string>());
    EXPECT_EQ(row.at("reps"), 2) << row.dump();
  }
  EXPECT_EQ(seen, (std::set<std::string>{"sync", "weft-post"}));
}

TEST(PoolExperiments, FibJsonHasEveryVariantAndTheValue) {
  const auto j = run_json("fib --n 15 --cutoff 8 --workers 1,2 --reps 1");
  expect_rows_well_formed(j, "fib");
  EXPECT_EQ(j.at("params").at("fib"), 610);
  EXPECT_EQ(j.at("params").at("spawns_no_cutoff"), 986);  // fib(16) - 1 calls with n >= 2
  for (const char* metric : {"ms", "ns_per_task"}) {
    const auto k = keys_with(j, metric);
    EXPECT_TRUE(k.count({"serial", 0})) << metric;
    for (int w : {1, 2}) {
      EXPECT_TRUE(k.count({"weft", w})) << metric << " " << w;
      EXPECT_TRUE(k.count({"tbb", w})) << metric << " " << w;
      EXPECT_TRUE(k.count({"openmp", w})) << metric << " " << w;
    }
  }
  int with_cutoff = 0;
  for (const auto& row : j.at("results")) {
    if (row.at("cutoff") == 8) ++with_cutoff;
    // An OpenMP row says where its team ran (or that OpenMP was not built).
    if (row.at("variant") == "openmp" && row.at("metric") == "ms" && row.at("measured").get<bool>()) {
      EXPECT_NE(row.at("note").get<std::string>().find("team of " + std::to_string(row.at("threads").get<int>()) +
                                                       " threads"),
                std::string::npos)
          << row.dump();
    }
  }
  EXPECT_EQ(with_cutoff, 3 * 2 * 2);  // weft, tbb and openmp, 2 thread counts, 2 metrics
}

TEST(PoolExperiments, PforJsonHasBothWorkloads) {
  const auto j = run_json("pfor --reps 1 --rounds 3 --items 200 --sum-n 100000 --workers 2");
  expect_rows_well_formed(j, "pfor");
  std::set<std::string> seen;
  for (const auto& row : j.at("results")) {
    const std::string w = row.at("workload");
    EXPECT_TRUE(w == "spin" || w == "sum") << w;
    seen.insert(w + "/" + row.at("variant").get<std::string>() + "/" + row.at("metric").get<std::string>());
  }
  for (const char* w : {"spin", "sum"})
    for (const char* v : {"serial", "weft", "tbb", "openmp-static", "openmp-dynamic", "openmp-guided"})
      for (const char* m : {"ms", "ns_per_task"})
        EXPECT_TRUE(seen.count(std::string(w) + "/" + v + "/" + m)) << w << " " << v << " " << m;
}

TEST(PoolExperiments, IdleJsonHasEveryVariant) {
  const auto j = run_json("idle --seconds 0.05 --reps 1");
  expect_rows_well_formed(j, "idle");
  for (const char* metric : {"cpu_ms_idle_1s", "cpu_ms_tick_2s", "cpu_ms_tick_pool_2s", "cpu_ms_tick_poster_2s",
                             "start_latency_us", "start_latency_p99_us"}) {
    std::set<std::string> seen;
    for (const auto& row : j.at("results")) {
      if (row.at("metric") != metric) continue;
      seen.insert(row.at("variant").get<std::string>());
      if (row.at("measured").get<bool>()) {
        EXPECT_GE(row.at("min").get<double>(), 0.0) << row.dump();
      }
    }
    EXPECT_EQ(seen, (std::set<std::string>{"baseline", "weft", "tbb", "asio-post", "article-pool"})) << metric;
  }
  // The p99 of a run's start latencies is at least its median.
  for (const auto& row : j.at("results")) {
    if (row.at("metric") != "start_latency_p99_us" || !row.at("measured").get<bool>()) continue;
    for (const auto& m : j.at("results"))
      if (m.at("metric") == "start_latency_us" && m.at("variant") == row.at("variant")) {
        EXPECT_GE(row.at("max").get<double>(), m.at("min").get<double>()) << row.dump() << m.dump();
      }
  }
  // The tick phase's CPU splits into the pool's threads and the posting
  // thread's, both from the same run (one rep: each median is that run's).
  const auto figure = [&](const std::string& variant, const std::string& metric) {
    return median_of(j, variant, metric, variant == "baseline" ? 0 : j.at("params").at("workers").get<int>());
  };
  for (const char* v : {"baseline", "weft", "article-pool"}) {
    const double total = figure(v, "cpu_ms_tick_2s"), pool = figure(v, "cpu_ms_tick_pool_2s"),
                 poster = figure(v, "cpu_ms_tick_poster_2s");
    ASSERT_GT(total, 0.0) << v;
    ASSERT_GT(poster, 0.0) << v;
    EXPECT_NEAR(pool + poster, total, 1e-6 * total + 1e-9) << v;
  }
  // Without a pool, the ticking thread is the process (its tasks run in place).
  EXPECT_LT(figure("baseline", "cpu_ms_tick_pool_2s"), figure("baseline", "cpu_ms_tick_poster_2s"));
  // The goals, from the medians above: weft against the best of the peers.
  const auto g = goals(j);
  const auto value = [&](const std::string& what) { return g.at(what).at("value").get<double>(); };
  double best_pool_cpu = 1e300;  // over the peers measured (a peer not built has no figure: -1)
  for (const char* peer : {"tbb", "asio-post", "article-pool"})
    if (const double x = figure(peer, "cpu_ms_tick_pool_2s"); x >= 0) best_pool_cpu = std::min(best_pool_cpu, x);
  ASSERT_TRUE(g.count("one task per ms: weft's pool threads' CPU / the best peer's (same runs)"));
  EXPECT_NEAR(value("one task per ms: weft's pool threads' CPU / the best peer's (same runs)"),
              figure("weft", "cpu_ms_tick_pool_2s") / best_pool_cpu, 1e-9);
  EXPECT_TRUE(g.count("one task per ms: weft's post-to-start median / the best peer's"));
  ASSERT_TRUE(g.count("idle: weft's CPU ms per s"));
  EXPECT_EQ(value("idle: weft's CPU ms per s"), figure("weft", "cpu_ms_idle_1s"));
  EXPECT_EQ(j.at("params").at("warmup"), "one unrecorded run per variant");
}

TEST(PoolExperiments, IdleTablePrintsTheStartLatency) {
  expect_table_shows("idle --seconds 0.05 --reps 1 --variant baseline,weft",
                     {"start_latency_us", "start us", "cpu_ms_tick_pool_2s", "pool threads"});
  // Without the baseline there is no table above it, but still the goals.
  expect_table_shows("idle --seconds 0.05 --reps 1 --variant weft,article-pool",
                     {"Goals:", "one task per ms: weft's pool threads' CPU / the best peer's"});
}

WEFT_BAD_INPUT_TESTS(
    TasksFibPforIdleBadInput,
    BadInput{"tasks --workers 0", "--workers"}, BadInput{"tasks --workers ''", "--workers"},
    BadInput{"tasks --workers abc", "--workers"}, BadInput{"tasks --workers 1,,2", "--workers"},
    BadInput{"tasks --workers 2x", "--workers"}, BadInput{"tasks --tasks 0", "--tasks"},
    BadInput{"tasks --tasks 2000000000", "--tasks"}, BadInput{"tasks --variant nope", "nope"},
    BadInput{"tasks --reps 0", "--reps"}, BadInput{"fib --n 60", "--n"},
    BadInput{"fib --n 1", "--n must be at least 2, got 1"}, BadInput{"fib --cutoff -1", "--cutoff"},
    BadInput{"fib --workers 0", "--workers"}, BadInput{"pfor --workers x", "--workers"},
    BadInput{"pfor --sum-n 0", "--sum-n"}, BadInput{"pfor --items 0", "--items"},
    BadInput{"idle --seconds 0", "--seconds"}, BadInput{"idle --workers 0", "--workers"},
    BadInput{"idle --variant nope", "nope"});

}  // namespace
