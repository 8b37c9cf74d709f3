// weft algo's CLI contract: the JSON names (variant, workload, metric),
// every variant present for every workload (measured, or with a note saying
// why not), weft's reductions deterministic, and bad input -> exit status 2
// with a message naming the option. Tiny sizes; no timed assertions.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

const std::set<std::string> kWorkloads{"reduce",   "transform-reduce", "inclusive-scan", "exclusive-scan",
                                       "sort-u64", "sort-f64",         "stable-sort",    "find-half",
                                       "find-end", "pipeline"};
const std::set<std::string> kReductions{"reduce", "transform-reduce"};

// One small run shared by the tests that only read its JSON.
const nlohmann::json& small_run() {
  return run_json_once("algo --n 100000 --sort-n 20000 --pipeline-n 2000 --det-runs 2 --reps 1 --workers 2");
}

TEST(Algo, JsonShape) {
  const auto& j = small_run();
  expect_common_fields(j, "algo",
                       {"n", "sort_n", "pipeline_n", "workers", "reps", "det_runs", "det_workers", "workloads", "warmup"});
  EXPECT_EQ(j.at("params").at("n"), 100000);
  EXPECT_EQ(j.at("params").at("det_workers"), nlohmann::json::array({1, 2, 4}));
  ASSERT_FALSE(j.at("results").empty());
  for (const auto& row : j.at("results")) {
    expect_row_shape(row, Threads::either);  // serial runs on no pool
    const std::string metric = row.at("metric");
    EXPECT_TRUE(metric == "ms" || metric == "speedup" || metric == "deterministic") << row.dump();
    EXPECT_TRUE(kWorkloads.count(row.at("workload").get<std::string>())) << row.dump();
    const std::string v = row.at("variant");
    EXPECT_TRUE(v == "serial" || v == "std-par" || v == "tbb" || v == "tbb-deterministic" || v == "openmp" ||
                v == "weft")
        << v;
    if (!row.at("measured").get<bool>()) {
      const std::string note = row.at("note");
      EXPECT_TRUE(note.find("not built") != std::string::npos || note.find("not offered") != std::string::npos)
          << row.dump();
    }
  }
}

TEST(Algo, EveryVariantHasARowForEveryWorkload) {
  const auto& j = small_run();
  const auto seen = cells(j, {"workload", "variant"}, "ms");
  for (const std::string& w : kWorkloads) {
    for (const char* v : {"serial", "std-par", "tbb", "openmp", "weft"})
      EXPECT_TRUE(seen.count(w + "/" + v)) << w << " " << v;
    EXPECT_EQ(seen.count(w + "/tbb-deterministic"), kReductions.count(w)) << w;
  }
  // weft and serial are built in: measured everywhere; oneTBB has no stable
  // sort, and its row says so when oneTBB is built.
  for (const auto& row : j.at("results")) {
    if (row.at("variant") == "weft" || row.at("variant") == "serial") {
      EXPECT_TRUE(row.at("measured").get<bool>()) << row.dump();
    }
    if (tbb_built(j) && row.at("variant") == "tbb" && row.at("workload") == "stable-sort") {
      EXPECT_NE(row.at("note").get<std::string>().find("not offered"), std::string::npos) << row.dump();
    }
    if (row.at("variant") == "std-par" && row.at("workload") == "pipeline") {
      EXPECT_FALSE(row.at("measured").get<bool>()) << row.dump();
    }
    // OpenMP has the reductions, the scans and find (a for loop), and no
    // sort or pipeline; a measured row says where its team ran.
    if (row.at("variant") == "openmp" && row.at("metric") == "ms") {
      const std::string w = row.at("workload");
      const bool offered = w.find("sort") == std::string::npos && w != "pipeline";
      const std::string note = row.at("note");
      if (!offered) {
        EXPECT_FALSE(row.at("measured").get<bool>()) << row.dump();
      } else if (row.at("measured").get<bool>()) {
        EXPECT_NE(note.find("team of 2 threads"), std::string::npos) << row.dump();
      } else {
        EXPECT_NE(note.find("not built"), std::string::npos) << row.dump();
      }
    }
  }
}

TEST(Algo, EveryMeasuredParallelRowHasASpeedup) {
  const auto& j = small_run();
  std::map<std::string, double> speedup;
  for (const auto& row : j.at("results"))
    if (row.at("metric") == "speedup" && row.at("measured").get<bool>())
      speedup[row.at("workload").get<std::string>() + "/" + row.at("variant").get<std::string>()] =
          row.at("median").get<double>();
  int parallel = 0;
  for (const auto& row : j.at("results")) {
    if (row.at("metric") != "ms" || row.at("variant") == "serial" || !row.at("measured").get<bool>()) continue;
    ++parallel;
    const std::string key = row.at("workload").get<std::string>() + "/" + row.at("variant").get<std::string>();
    ASSERT_TRUE(speedup.count(key)) << key;
    EXPECT_GT(speedup[key], 0.0) << key;
    EXPECT_EQ(row.at("threads"), 2) << row.dump();
  }
  EXPECT_GE(parallel, static_cast<int>(kWorkloads.size()));  // weft's, at least
}

TEST(Algo, WeftReductionsAreDeterministic) {
  const auto& j = small_run();
  std::set<std::string> weft_rows;
  for (const auto& row : j.at("results")) {
    if (row.at("metric") != "deterministic") continue;
    const std::string w = row.at("workload");
    EXPECT_TRUE(kReductions.count(w)) << row.dump();
    EXPECT_EQ(row.at("unit"), "bool");
    if (!row.at("measured").get<bool>()) continue;
    const double d = row.at("median");
    EXPECT_TRUE(d == 0.0 || d == 1.0) << row.dump();
    const std::string v = row.at("variant");
    // Each of these fixes its split tree: one bit pattern by construction.
    if (v == "weft" || v == "serial" || v == "tbb-deterministic") {
      EXPECT_EQ(d, 1.0) << row.dump();
    }
    if (v == "weft") {
      weft_rows.insert(w);
      EXPECT_NE(row.at("note").get<std::string>().find("1, 2, 4 workers"), std::string::npos) << row.dump();
    }
  }
  EXPECT_EQ(weft_rows, kReductions);
}

TEST(Algo, GoalsAreListedWhenTheirRowsWereMeasured) {
  const auto& j = small_run();
  const auto whats = goals(j);
  EXPECT_TRUE(whats.count("sort-u64: weft speed-up over serial (2 workers)"));
  if (tbb_built(j)) {
    EXPECT_TRUE(whats.count("reduce: weft / tbb time (2 workers)"));
    EXPECT_TRUE(whats.count("find-end: weft / std-par time (2 workers)"));
    EXPECT_TRUE(whats.count("reduce: weft / tbb-deterministic (2 workers)"));
  }
}

TEST(Algo, WorkloadAndVariantSelectTheRows) {
  const auto j = run_json("algo --n 5000 --sort-n 3000 --det-runs 1 --reps 1 --workers 1 --workload sort-u64,reduce "
                          "--variant serial,weft");
  EXPECT_EQ(cells(j, {"workload"}), (std::set<std::string>{"sort-u64", "reduce"}));
  EXPECT_EQ(cells(j, {"variant"}), (std::set<std::string>{"serial", "weft"}));
}

// A scan larger than a thread's default 8 MB stack: clang's omp scan keeps
// one element per iteration on the stack of the thread that starts it, and
// crashed the report here before the openmp variant got a stack of its own.
// The run checks every scan's output against the serial one.
TEST(Algo, OpenMpScansLargerThanADefaultStack) {
  const auto j = run_json("algo --n 3000000 --reps 1 --workers 2 --workload inclusive-scan,exclusive-scan "
                          "--variant serial,openmp");
  int measured = 0;
  for (const auto& row : j.at("results"))
    if (row.at("variant") == "openmp" && row.at("metric") == "ms") {
      EXPECT_EQ(row.at("measured").get<bool>(), openmp_built(j)) << row.dump();
      measured += row.at("measured").get<bool>() ? 1 : 0;
    }
  EXPECT_EQ(measured, openmp_built(j) ? 2 : 0);
}

TEST(Algo, TableAndHelp) {
  expect_table_shows("algo --n 5000 --sort-n 3000 --det-runs 1 --reps 1 --workers 2 --workload find-half",
                     {"find-half"});
  expect_help_lists("algo", {"--workload", "--sort-n", "--det-runs", "--workers", "stable-sort"});
}

WEFT_BAD_INPUT_TESTS(AlgoBadInput, BadInput{"algo --n 0", "--n"}, BadInput{"algo --n 300000000", "--n"},
                     BadInput{"algo --sort-n 0", "--sort-n"}, BadInput{"algo --det-runs 0", "--det-runs"},
                     BadInput{"algo --workload nope", "nope"}, BadInput{"algo --workload ,", "workload"},
                     BadInput{"algo --variant nope", "nope"}, BadInput{"algo --workers 0", "--workers"},
                     BadInput{"algo --reps 0", "--reps"}, BadInput{"algo --n x", "--n"});

}  // namespace
