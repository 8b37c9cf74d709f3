// weft suite's CLI contract: every workload's answer checked (a wrong one
// would fail the run, exit 1), the UTS trees' published counts, the call
// trees' sizes, the rows per workload, variant and metric (measured, or a
// note saying why not), peak memory from a process per variant, the goals,
// and bad input -> exit status 2 naming the option. Tiny sizes; no timed
// assertions.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

const std::set<std::string> kVariants{"serial", "weft", "weft-coro", "tbb", "openmp"};
const std::set<std::string> kSmall{"fib", "skynet", "nqueens", "integrate", "matmul", "knapsack"};

const nlohmann::json& small_run() {
  return run_json_once(
      "suite --workload fib,skynet,nqueens,integrate,matmul,knapsack --fib 16 --skynet 3 --nqueens 8 "
      "--integrate 50 --matmul 64 --reps 1 --workers 1,2");
}

TEST(Suite, EveryWorkloadAndVariantRunsAndIsChecked) {
  const auto& j = small_run();
  expect_common_fields(j, "suite");
  for (const auto& row : j.at("results")) {
    const std::string v = row.at("variant");
    EXPECT_TRUE(kSmall.count(row.at("workload").get<std::string>())) << row.dump();
    EXPECT_TRUE(kVariants.count(v)) << row.dump();
    // serial and weft's are built in, so measured; tbb and openmp unless not built.
    expect_measured_unless_not_built(row, {"tbb", "openmp"});
    if (row.at("measured").get<bool>() && (v == "serial" || v.rfind("weft", 0) == 0)) {
      // The peak memory above serial's may be below it.
      EXPECT_GT(row.at("median").get<double>(), row.at("metric") == "peak_rss_above_serial_mb" ? -1e9 : 0.0)
          << row.dump();
    }
  }
  // serial once, the four others at 1 and 2 workers: every run's answer
  // passed its check, or the command would have failed.
  EXPECT_EQ(cells(j, {"workload", "variant", "threads"}, "ms").size(), kSmall.size() * (1 + 4 * 2));
}

TEST(Suite, CallTreesHaveTheirSizes) {
  const auto& tasks = small_run().at("params").at("tasks");
  EXPECT_EQ(tasks.at("fib"), 3193);      // 2 fib(17) - 1 calls
  EXPECT_EQ(tasks.at("skynet"), 1111);   // 1 + 10 + 100 + 1000
  EXPECT_EQ(tasks.at("nqueens"), 2057);  // the 8-queens search tree's nodes
  EXPECT_EQ(tasks.at("matmul"), 73);     // 64 -> 32 -> 16: 1 + 8 + 64
  EXPECT_EQ(tasks.at("knapsack"), 0);    // varies with the search order
  EXPECT_GT(tasks.at("integrate").get<long>(), 1);
}

TEST(Suite, NsPerTaskAtOneWorkerSpeedupAtEveryCount) {
  std::set<std::string> per_task, speedups;
  for (const auto& row : small_run().at("results")) {
    const std::string m = row.at("metric");
    const std::string key = row.at("workload").get<std::string>() + "/" + row.at("variant").get<std::string>();
    if (m == "ns_per_task") {
      per_task.insert(key);
      if (row.contains("threads")) {
        EXPECT_EQ(row.at("threads"), 1) << row.dump();
      }
    }
    if (m == "speedup") speedups.insert(key + "/" + std::to_string(row.at("threads").get<int>()));
  }
  EXPECT_TRUE(per_task.count("fib/serial"));
  EXPECT_TRUE(per_task.count("fib/weft"));
  EXPECT_TRUE(per_task.count("skynet/weft-coro"));
  EXPECT_FALSE(per_task.count("knapsack/weft")) << "knapsack's task count varies";
  EXPECT_TRUE(speedups.count("matmul/weft/2"));
  EXPECT_FALSE(speedups.count("matmul/serial/0"));
}

TEST(Suite, PeakMemoryFromAProcessPerVariant) {
  int rows = 0;
  for (const auto& row : small_run().at("results")) {
    if (row.at("metric") != "peak_rss_above_serial_mb") continue;
    ++rows;
    EXPECT_EQ(row.at("workload"), "skynet") << row.dump();
    EXPECT_EQ(row.at("threads"), 2) << row.dump();
    if (row.at("measured").get<bool>()) {
      EXPECT_NE(row.at("note").get<std::string>().find("serial's peak"), std::string::npos) << row.dump();
    }
  }
  EXPECT_EQ(rows, 4);  // every variant but serial, the baseline
}

TEST(Suite, PeakMemoryIsMeasuredOncePerRepetition) {
  const auto& j = run_json_once("suite --workload skynet --skynet 3 --reps 2 --workers 2 --variant serial,weft");
  const nlohmann::json* row = nullptr;
  for (const auto& r : j.at("results"))
    if (r.at("metric") == "peak_rss_above_serial_mb") row = &r;
  ASSERT_NE(row, nullptr);
  ASSERT_TRUE(row->at("measured").get<bool>()) << row->dump();
  EXPECT_EQ(row->at("reps"), 2) << row->dump();
  EXPECT_NE(row->at("note").get<std::string>().find("2 runs"), std::string::npos) << row->dump();
}

TEST(Suite, GoalsAtEveryWorkerCount) {
  const auto whats = goals(small_run());
  EXPECT_TRUE(whats.count("fib: weft-coro / weft (1 worker)"));
  EXPECT_TRUE(whats.count("skynet: weft-coro / weft (2 workers)"));
  EXPECT_TRUE(whats.count("fib: weft's faster form per task / a serial call (1 worker)"));
  if (tbb_built(small_run())) {
    EXPECT_TRUE(whats.count("nqueens: weft's faster form / tbb (2 workers)"));
  }
}

// The UTS trees must be the real ones: exactly UTS's published node, leaf
// and depth counts, which every run checks (a miscount exits 1).
TEST(Suite, UtsTreesHaveThePublishedCounts) {
  const auto j = run_json("suite --workload uts-t1,uts-t3 --variant serial,weft,weft-coro --workers 2 --reps 1 "
                          "--memory 0");
  EXPECT_EQ(j.at("params").at("tasks").at("uts-t1"), 4130071);
  EXPECT_EQ(j.at("params").at("tasks").at("uts-t3"), 4112897);
  int measured = 0;
  for (const auto& row : j.at("results")) measured += row.at("measured").get<bool>() ? 1 : 0;
  EXPECT_GE(measured, 2 * 3);
}

TEST(Suite, TableAndHelp) {
  expect_table_shows("suite --workload fib --fib 10 --reps 1 --workers 1 --memory 0", {"ns_per_task"});
  expect_help_lists("suite", {"--workload", "--fib", "--skynet", "--nqueens", "--integrate", "--matmul", "--workers",
                              "--oversubscribe", "--variant", "--memory", "uts-t3l"});
}

WEFT_BAD_INPUT_TESTS(SuiteBadInput, BadInput{"suite --matmul 100", "--matmul 100 is not a power of two"},
                     BadInput{"suite --matmul 8", "--matmul must be at least 16, got 8"},
                     BadInput{"suite --fib 1", "--fib must be at least 2, got 1"},
                     BadInput{"suite --nqueens 17", "--nqueens"}, BadInput{"suite --skynet 10", "--skynet"},
                     BadInput{"suite --workload nope", "nope"}, BadInput{"suite --variant taskflow", "taskflow"},
                     BadInput{"suite --memory 2", "--memory"}, BadInput{"suite --oversubscribe -1", "--oversubscribe"},
                     BadInput{"suite --workers 0", "--workers"}, BadInput{"suite --reps 0", "--reps"});

}  // namespace
