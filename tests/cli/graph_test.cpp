// weft graph's CLI contract: the JSON names (variant, workload, metric),
// every workload's variants in both phases (measured, or with a "not built"
// note), each graph's size, the goals with their verdict at 2 workers, and
// bad input -> exit status 2 with a message naming the option. Tiny sizes;
// no timed assertions.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

const std::set<std::string> kWorkloads{"chain", "tree", "wavefront", "level", "embarrassing"};
const std::set<std::string> kVariants{"serial", "weft", "tbb", "openmp"};

const nlohmann::json& small_run() { return run_json_once("graph --nodes 300 --reruns 2 --reps 1 --workers 2"); }

TEST(Graph, JsonShapeAndEveryCell) {
  const auto& j = small_run();
  expect_common_fields(j, "graph", {"nodes", "reruns", "workloads", "graphs", "workers", "reps", "variants", "warmup"});
  expect_rows(j, {.poolless = {"serial"}, .workers = {2}, .peers = {"tbb", "openmp"}});
  std::set<std::string> want;
  for (const std::string& w : kWorkloads)
    for (const std::string& v : kVariants)
      for (const char* m : {"build_run_ns_per_node", "rerun_ns_per_node"}) want.insert(w + "/" + v + "/" + m);
  EXPECT_EQ(cells(j, {"workload", "variant", "metric"}), want);
}

TEST(Graph, TheGraphsHaveTheirShapes) {
  const auto& g = small_run().at("params").at("graphs");
  EXPECT_EQ(g.at("chain").at("nodes"), 300);
  EXPECT_EQ(g.at("chain").at("edges"), 299);
  EXPECT_EQ(g.at("tree").at("nodes"), 255);  // 8 whole layers fit in 300
  EXPECT_EQ(g.at("tree").at("edges"), 254);
  EXPECT_EQ(g.at("wavefront").at("nodes"), 289);  // 17 x 17
  EXPECT_EQ(g.at("wavefront").at("edges"), 2 * 17 * 16);
  EXPECT_EQ(g.at("embarrassing").at("edges"), 0);
  const int level_nodes = g.at("level").at("nodes");
  EXPECT_LE(level_nodes, 300);
  EXPECT_GE(level_nodes, 280);
  EXPECT_GE(g.at("level").at("edges").get<int>(), level_nodes - level_nodes / 32);  // >= 1 per node but the last level's
}

TEST(Graph, GoalsCarryAVerdictAtTwoWorkers) {
  const auto& j = small_run();
  const auto whats = goals(j, Verdicts::all);
  if (tbb_built(j)) {
    EXPECT_TRUE(whats.count("chain: weft / tbb re-run (2 workers)"));
    EXPECT_TRUE(whats.count("level: weft / tbb build and run once (2 workers)"));
  }
}

TEST(Graph, WorkloadVariantAndWorkersSelectTheRows) {
  const auto j = run_json("graph --nodes 64 --reruns 1 --reps 1 --workers 1,3 --workload chain,level --variant weft");
  const auto c = cells(j, {"workload", "metric", "threads"});
  EXPECT_EQ(c.size(), 8u) << nlohmann::json(c).dump();
  EXPECT_TRUE(c.count("level/rerun_ns_per_node/3"));
  for (const auto& g : j.at("ratios")) EXPECT_FALSE(g.contains("met")) << g.dump();
}

TEST(Graph, TableAndHelp) {
  expect_table_shows("graph --nodes 64 --reruns 1 --reps 1 --workload chain", {"rerun_ns_per_node"});
  expect_help_lists("graph", {"--nodes", "--reruns", "--workload", "--workers", "--variant", "wavefront"});
}

WEFT_BAD_INPUT_TESTS(GraphBadInput, BadInput{"graph --nodes 0", "--nodes must be at least 1, got 0"},
                     BadInput{"graph --nodes 99999999999", "--nodes"}, BadInput{"graph --reruns 0", "--reruns"},
                     BadInput{"graph --workload nope", "nope"}, BadInput{"graph --variant taskflow", "taskflow"},
                     BadInput{"graph --workers 0", "--workers"}, BadInput{"graph --reps 0", "--reps"},
                     BadInput{"graph --nodes x", "--nodes"});

}  // namespace
