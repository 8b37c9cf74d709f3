// weft scale's CLI contract: the JSON names (variant, workload, metric), a
// time, speed-up and efficiency row per (workload, variant, workers) over
// the worker ladder, notes on the oversubscribed rows, the goals list, and
// bad input -> exit status 2 with a message naming the option. Tiny sizes;
// no timed assertions.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli_run.hpp"
#include "weft/xp/scale.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

const std::set<std::string> kWorkloads{"fib", "tasks", "pfor", "reduce"};
const std::set<std::string> kMetrics{"ms", "speedup", "efficiency"};
constexpr const char* kSmall =
    "scale --fib-n 16 --tasks 2000 --task-ns 500 --pfor-n 20000 --item-ns 100 --reduce-n 100000 --reps 1";

// One small oversubscribed run shared by the tests that only read its JSON.
const nlohmann::json& small_run() { return run_json_once(std::string(kSmall) + " --oversubscribe 2"); }

TEST(ScaleLadder, PowersOfTwoUpToTheCpusThenOnToKTimesThem) {
  using weft::xp::scale_ladder;
  EXPECT_EQ(scale_ladder(1, 1), (std::vector<int>{1}));
  EXPECT_EQ(scale_ladder(2, 1), (std::vector<int>{1, 2}));
  EXPECT_EQ(scale_ladder(2, 8), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(scale_ladder(6, 1), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(scale_ladder(6, 4), (std::vector<int>{1, 2, 4, 6, 8, 16, 24}));
  EXPECT_EQ(scale_ladder(64, 2), (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128}));
}

TEST(Scale, JsonShape) {
  const auto& j = small_run();
  expect_common_fields(j, "scale",
                       {"fib_n", "tasks", "task_ns", "pfor_n", "item_ns", "reduce_n", "oversubscribe", "cpus",
                        "workers", "reps", "variants", "workloads", "warmup"});
  const int cpus = j.at("params").at("cpus");
  EXPECT_EQ(cpus, static_cast<int>(j.at("machine").at("available_parallelism")));
  const auto workers = j.at("params").at("workers").get<std::vector<int>>();
  EXPECT_EQ(workers, weft::xp::scale_ladder(cpus, 2));
  expect_rows(j, {.workers = {workers.begin(), workers.end()}, .peers = {"tbb", "openmp"}});
  for (const auto& row : j.at("results")) {
    EXPECT_TRUE(kMetrics.count(row.at("metric").get<std::string>())) << row.dump();
    EXPECT_TRUE(kWorkloads.count(row.at("workload").get<std::string>())) << row.dump();
    const std::string v = row.at("variant");
    EXPECT_TRUE(v == "weft" || v == "tbb" || v == "openmp") << v;
  }
}

TEST(Scale, ATimeSpeedupAndEfficiencyRowPerWorkloadVariantAndCount) {
  const auto& j = small_run();
  std::map<std::tuple<std::string, std::string, int, std::string>, nlohmann::json> rows;
  for (const auto& row : j.at("results"))
    rows[{row.at("workload"), row.at("variant"), row.at("threads"), row.at("metric")}] = row;
  const auto workers = j.at("params").at("workers").get<std::vector<int>>();
  for (const std::string& w : kWorkloads) {
    for (const char* v : {"weft", "tbb", "openmp"}) {
      for (int t : workers) {
        for (const std::string& m : kMetrics)
          ASSERT_TRUE(rows.count({w, v, t, m})) << w << " " << v << " " << t << " " << m;
        if (v == std::string("tbb") && !tbb_built(j)) continue;
        if (v == std::string("openmp") && !openmp_built(j)) continue;
        const auto& speedup = rows[{w, v, t, "speedup"}];
        const auto& efficiency = rows[{w, v, t, "efficiency"}];
        ASSERT_TRUE(speedup.at("measured").get<bool>()) << speedup.dump();
        EXPECT_GT(speedup.at("median").get<double>(), 0.0) << speedup.dump();
        // One run per count: the efficiency is that run's speed-up over its workers.
        EXPECT_NEAR(efficiency.at("median").get<double>(), speedup.at("median").get<double>() / t, 1e-9)
            << efficiency.dump();
        // A variant against its own 1-worker run of the same round.
        if (t == 1) {
          EXPECT_EQ(speedup.at("median").get<double>(), 1.0) << speedup.dump();
        }
      }
    }
  }
}

TEST(Scale, RowsPastTheCpusSaySoAndTheRunNotesIt) {
  const auto& j = small_run();
  const int cpus = j.at("params").at("cpus");
  int past = 0;
  for (const auto& row : j.at("results")) {
    if (!row.at("measured").get<bool>()) continue;
    const bool says = row.at("note").get<std::string>().find("than available CPUs") != std::string::npos;
    EXPECT_EQ(says, row.at("threads").get<int>() > cpus) << row.dump();
    past += says ? 1 : 0;
  }
  EXPECT_GT(past, 0);
  bool noted = false;
  for (const auto& n : j.at("notes"))
    noted = noted || n.get<std::string>().find("oversubscription") != std::string::npos;
  EXPECT_TRUE(noted) << j.at("notes").dump();
}

TEST(Scale, GoalsListTheOversubscribedFibAndWeftAgainstTbb) {
  const auto& j = small_run();
  const int cpus = j.at("params").at("cpus");
  auto ratios = goals(j);
  const std::string fib =
      "fib(16): weft time at " + std::to_string(2 * cpus) + " workers / at " + std::to_string(cpus) + " workers";
  ASSERT_TRUE(ratios.count(fib)) << j.at("ratios").dump();
  EXPECT_EQ(ratios[fib].at("goal"), "<= 2.0");
  const std::string at = " (" + std::to_string(cpus) + " workers)";
  EXPECT_TRUE(ratios.count("reduce: weft speed-up over 1 worker" + at)) << j.at("ratios").dump();
  if (tbb_built(j)) {
    EXPECT_TRUE(ratios.count("pfor: weft / tbb time" + at)) << j.at("ratios").dump();
  }
  if (openmp_built(j)) {
    EXPECT_TRUE(ratios.count("pfor: weft / openmp time" + at)) << j.at("ratios").dump();
  }
  // An OpenMP row says where its team ran.
  for (const auto& row : j.at("results"))
    if (row.at("variant") == "openmp" && row.at("metric") == "ms" && row.at("measured").get<bool>()) {
      EXPECT_NE(row.at("note").get<std::string>().find("team of " + std::to_string(row.at("threads").get<int>())),
                std::string::npos)
          << row.dump();
    }
}

// The hot-line workloads: only when named; a time row per
// (workload, variant, workers) and the one-group / a-group-per-worker ratio
// at the CPUs and at the most workers.
TEST(Scale, GroupWorkloadsRunWhenNamedAndGiveTheOneGroupRatio) {
  const auto j = run_json("scale --group-tasks 3000 --reps 1 --oversubscribe 2 --workload group,groups");
  EXPECT_EQ(j.at("params").at("group_tasks").get<long>(), 3000);
  const int cpus = j.at("params").at("cpus");
  std::set<std::tuple<std::string, std::string, int>> timed;
  for (const auto& row : j.at("results"))
    if (row.at("metric") == "ms" && row.at("measured").get<bool>())
      timed.emplace(row.at("workload").get<std::string>(), row.at("variant").get<std::string>(),
                    row.at("threads").get<int>());
  const auto ratios = goals(j);
  for (const char* w : {"group", "groups"})
    for (const char* v : {"weft", "tbb", "openmp"}) {
      if (v == std::string("tbb") && !tbb_built(j)) continue;
      if (v == std::string("openmp") && !openmp_built(j)) continue;
      for (int t : j.at("params").at("workers").get<std::vector<int>>())
        EXPECT_TRUE(timed.count({w, v, t})) << w << " " << v << " " << t;
      for (int t : {cpus, 2 * cpus})
        EXPECT_TRUE(ratios.count(std::string("group: ") + v + " one group / a group per worker, time (" +
                                 std::to_string(t) + " workers)"))
            << v << " " << t << "\n"
            << j.at("ratios").dump();
    }
}

TEST(Scale, WorkersWorkloadAndVariantSelectTheRows) {
  const auto j = run_json(std::string(kSmall) + " --workers 3,1 --workload reduce,fib --variant weft");
  EXPECT_EQ(cells(j, {"workload"}), (std::set<std::string>{"reduce", "fib"}));
  EXPECT_EQ(cells(j, {"variant"}), (std::set<std::string>{"weft"}));
  EXPECT_EQ(cells(j, {"threads"}), (std::set<std::string>{"1", "3"}));
}

TEST(Scale, WithoutAOneWorkerRunTheSpeedupSaysWhy) {
  const auto j = run_json(std::string(kSmall) + " --workers 2 --workload fib --variant weft");
  for (const auto& row : j.at("results")) {
    if (row.at("metric") == "ms") {
      EXPECT_TRUE(row.at("measured").get<bool>()) << row.dump();
      continue;
    }
    EXPECT_FALSE(row.at("measured").get<bool>()) << row.dump();
    EXPECT_NE(row.at("note").get<std::string>().find("no 1-worker run"), std::string::npos) << row.dump();
  }
}

TEST(Scale, TableAndHelp) {
  expect_table_shows(std::string(kSmall) + " --workload pfor", {"efficiency", "Goals:"});
  expect_help_lists("scale", {"--oversubscribe", "--fib-n", "--tasks", "--task-ns", "--pfor-n", "--item-ns",
                              "--reduce-n", "--group-tasks", "--workload", "--workers", "--variant", "reduce", "groups"});
}

WEFT_BAD_INPUT_TESTS(ScaleBadInput, BadInput{"scale --fib-n 1", "--fib-n"}, BadInput{"scale --fib-n 40", "--fib-n"},
                     BadInput{"scale --fib-n x", "--fib-n"}, BadInput{"scale --tasks 0", "--tasks"},
                     BadInput{"scale --task-ns 0", "--task-ns"}, BadInput{"scale --pfor-n 0", "--pfor-n"},
                     BadInput{"scale --item-ns -1", "--item-ns"}, BadInput{"scale --reduce-n 0", "--reduce-n"},
                     BadInput{"scale --group-tasks 0", "--group-tasks"},
                     BadInput{"scale --tasks 100000000 --task-ns 1000", "minute"},
                     BadInput{"scale --oversubscribe 0", "--oversubscribe"},
                     BadInput{"scale --oversubscribe 1000", "--oversubscribe"},
                     BadInput{"scale --workers 2 --oversubscribe 2", "--oversubscribe"},
                     BadInput{"scale --workload nope", "nope"}, BadInput{"scale --workload ,", "workload"},
                     BadInput{"scale --variant nope", "nope"}, BadInput{"scale --workers 0", "--workers"},
                     BadInput{"scale --workers 300", "--workers"}, BadInput{"scale --reps 0", "--reps"});

}  // namespace
