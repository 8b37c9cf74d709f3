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

const nlohmann::json& small_run() {
  static const nlohmann::json j = run_json("graph --nodes 300 --reruns 2 --reps 1 --workers 2");
  return j;
}

TEST(Graph, JsonShapeAndEveryCell) {
  const auto& j = small_run();
  expect_common_fields(j, "graph");
  for (const char* k : {"nodes", "reruns", "workloads", "graphs", "workers", "reps", "variants", "warmup"})
    EXPECT_TRUE(j.at("params").contains(k)) << k;
  std::set<std::string> cells;
  for (const auto& row : j.at("results")) {
    const std::string w = row.at("workload");
    const std::string v = row.at("variant");
    const std::string m = row.at("metric");
    EXPECT_TRUE(kWorkloads.count(w)) << row.dump();
    EXPECT_TRUE(kVariants.count(v)) << row.dump();
    EXPECT_TRUE(m == "build_run_ns_per_node" || m == "rerun_ns_per_node") << row.dump();
    if (v == "serial") {
      EXPECT_FALSE(row.contains("threads")) << "no pool: " << row.dump();
    } else {
      expect_row_shape(row);
      EXPECT_EQ(row.at("threads"), 2) << row.dump();
    }
    if (!row.at("measured").get<bool>()) {
      EXPECT_NE(row.at("note").get<std::string>().find("not built"), std::string::npos) << row.dump();
    }
    if (v == "serial" || v == "weft") {
      EXPECT_TRUE(row.at("measured").get<bool>()) << row.dump();
    }
    cells.insert(w + "/" + v + "/" + m);
  }
  EXPECT_EQ(cells.size(), kWorkloads.size() * kVariants.size() * 2);
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
  std::set<std::string> whats;
  for (const auto& g : j.at("ratios")) {
    EXPECT_GT(g.at("value").get<double>(), 0.0) << g.dump();
    ASSERT_TRUE(g.contains("met")) << g.dump();
    whats.insert(g.at("what").get<std::string>());
  }
  if (tbb_built(j)) {
    EXPECT_TRUE(whats.count("chain: weft / tbb re-run (2 workers)"));
    EXPECT_TRUE(whats.count("level: weft / tbb build and run once (2 workers)"));
  }
}

TEST(Graph, WorkloadVariantAndWorkersSelectTheRows) {
  const auto j = run_json("graph --nodes 64 --reruns 1 --reps 1 --workers 1,3 --workload chain,level --variant weft");
  std::set<std::string> cells;
  for (const auto& row : j.at("results"))
    cells.insert(row.at("workload").get<std::string>() + "/" + row.at("metric").get<std::string>() + "/" +
                 std::to_string(row.at("threads").get<int>()));
  EXPECT_EQ(cells.size(), 8u);
  EXPECT_TRUE(cells.count("level/rerun_ns_per_node/3"));
  for (const auto& g : j.at("ratios")) EXPECT_FALSE(g.contains("met")) << g.dump();
}

TEST(Graph, TableAndHelp) {
  const CliRun r = run_cli("graph --nodes 64 --reruns 1 --reps 1 --workload chain");
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("rerun_ns_per_node"), std::string::npos) << r;
  const CliRun help = run_cli("graph --help");
  EXPECT_EQ(help.status, 0) << help;
  for (const char* opt : {"--nodes", "--reruns", "--workload", "--workers", "--variant", "wavefront"})
    EXPECT_NE(help.out.find(opt), std::string::npos) << opt << "\n" << help;
}

WEFT_BAD_INPUT_TESTS(GraphBadInput, BadInput{"graph --nodes 0", "--nodes must be at least 1, got 0"},
                     BadInput{"graph --nodes 99999999999", "--nodes"}, BadInput{"graph --reruns 0", "--reruns"},
                     BadInput{"graph --workload nope", "nope"}, BadInput{"graph --variant taskflow", "taskflow"},
                     BadInput{"graph --workers 0", "--workers"}, BadInput{"graph --reps 0", "--reps"},
                     BadInput{"graph --nodes x", "--nodes"});

}  // namespace
