// weft coro's CLI contract: the JSON names (variant, workload, metric), each
// workload's variants present (measured, or with a "not built" note), the
// notes saying where the work ran, the goals with their verdict, and bad
// input -> exit status 2 with a message naming the option. Tiny sizes; no
// timed assertions.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

// Each workload's variants and metric.
const std::map<std::string, std::set<std::string>> kVariants{
    {"fib", {"weft-task", "weft-taskgroup", "tbb"}},
    {"hop", {"weft-task", "asio"}},
    {"fan-in", {"weft-future", "weft-task", "weft-taskgroup", "weft-taskgroup-caller", "tbb", "asio"}},
    {"cancel", {"weft-taskgroup", "tbb"}}};
const std::map<std::string, std::string> kMetric{
    {"fib", "ns_per_spawn"}, {"hop", "ns_per_hop"}, {"fan-in", "us_per_fan_in"}, {"cancel", "cancel_ms"}};

const nlohmann::json& small_run() {
  return run_json_once("coro --fib-n 12 --hops 500 --fan-in 200 --fan-ins 2 --cancel-tasks 2000 --reps 1");
}

TEST(Coro, JsonShape) {
  const auto& j = small_run();
  expect_common_fields(j, "coro",
                       {"fib_n", "hops", "fan_in", "fan_ins", "cancel_tasks", "workers", "reps", "workloads", "warmup"});
  EXPECT_EQ(j.at("params").at("workers"), nlohmann::json::array({2}));  // the default
  EXPECT_EQ(j.at("params").at("cancel_tasks"), 2000);
  // weft's variants are built in: always measured.
  expect_rows(j, {.workers = {2}, .peers = {"tbb", "asio"}});
  for (const auto& row : j.at("results")) {
    const std::string w = row.at("workload");
    ASSERT_TRUE(kVariants.count(w)) << row.dump();
    EXPECT_TRUE(kVariants.at(w).count(row.at("variant").get<std::string>())) << row.dump();
    const std::string metric = row.at("metric");
    EXPECT_TRUE(metric == kMetric.at(w) || (w == "fib" && metric == "ms")) << row.dump();
  }
}

TEST(Coro, EveryVariantOfEveryWorkloadHasARow) {
  const auto& j = small_run();
  std::set<std::string> seen;
  for (const auto& row : j.at("results"))
    if (row.at("metric") == kMetric.at(row.at("workload").get<std::string>()))
      seen.insert(row.at("workload").get<std::string>() + "/" + row.at("variant").get<std::string>());
  std::size_t expected = 0;
  for (const auto& [w, vs] : kVariants) {
    expected += vs.size();
    for (const auto& v : vs) EXPECT_TRUE(seen.count(w + "/" + v)) << w << " " << v;
  }
  EXPECT_EQ(seen.size(), expected);
}

TEST(Coro, NotesSayWhereTheWorkRan) {
  const auto& j = small_run();
  for (const auto& row : j.at("results")) {
    if (!row.at("measured").get<bool>()) continue;
    const std::string note = row.at("note");
    const std::string w = row.at("workload");
    if (w == "cancel") {
      EXPECT_NE(note.find("none ran"), std::string::npos) << row.dump();
      continue;
    }
    EXPECT_NE(note.find("ran on "), std::string::npos) << row.dump();
    EXPECT_NE(note.find("% on the"), std::string::npos) << row.dump();
    if (w == "hop") {
      EXPECT_NE(note.find("a hop:"), std::string::npos) << row.dump();
      EXPECT_NE(note.find("0% on the thread that called"), std::string::npos) << row.dump();  // on the pool
    }
  }
}

TEST(Coro, GoalsCarryAVerdictAtTwoWorkers) {
  const auto whats = goals(small_run(), Verdicts::all);
  EXPECT_TRUE(whats.count("fib: weft-task / weft-taskgroup ns per spawn (2 workers)"));
  EXPECT_TRUE(whats.count("cancel: weft-taskgroup ms (2 workers)"));
}

TEST(Coro, WorkloadVariantAndWorkersSelectTheRows) {
  const auto j = run_json("coro --fib-n 10 --fan-in 50 --fan-ins 1 --reps 1 --workers 1,3 --workload fib,fan-in "
                          "--variant weft-task,weft-future");
  EXPECT_EQ(cells(j, {"workload", "variant", "threads"}),
            (std::set<std::string>{"fib/weft-task/1", "fib/weft-task/3", "fan-in/weft-task/1", "fan-in/weft-task/3",
                                   "fan-in/weft-future/1", "fan-in/weft-future/3"}));
  // No goal applies away from 2 workers.
  for (const auto& g : j.at("ratios")) EXPECT_FALSE(g.contains("met")) << g.dump();
}

TEST(Coro, TableAndHelp) {
  expect_table_shows("coro --fib-n 10 --hops 100 --reps 1 --workload fib,hop", {"ns_per_hop", "Goals (at 2 workers)"});
  expect_help_lists("coro", {"--fib-n", "--hops", "--fan-in", "--fan-ins", "--cancel-tasks", "--workload", "--workers",
                             "--variant", "fan-in"});
}

WEFT_BAD_INPUT_TESTS(CoroBadInput, BadInput{"coro --fib-n 0", "--fib-n"}, BadInput{"coro --fib-n 41", "--fib-n"},
                     BadInput{"coro --hops 0", "--hops"}, BadInput{"coro --fan-in -1", "--fan-in"},
                     BadInput{"coro --fan-ins 0", "--fan-ins"}, BadInput{"coro --cancel-tasks 0", "--cancel-tasks"},
                     BadInput{"coro --cancel-tasks 200000000", "--cancel-tasks"},
                     BadInput{"coro --workload nope", "nope"}, BadInput{"coro --variant std-par", "std-par"},
                     BadInput{"coro --workers 0", "--workers"}, BadInput{"coro --reps 0", "--reps"},
                     BadInput{"coro --hops x", "--hops"});

}  // namespace
