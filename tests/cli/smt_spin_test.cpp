// `weft smt` and `weft spin`: the JSON names and types other tools rely on,
// every variant present (measured, or with a note saying why not), and bad
// input exiting with status 2 and a message naming the option. Tiny sizes:
// no timing is asserted.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

TEST(CliSmt, JsonHasEveryVariantPerWorkload) {
  const auto j = run_json("smt --size 100000 --reps 1");
  ASSERT_EQ(j.value("experiment", std::string()), "smt");
  expect_common_fields(j, "smt");
  EXPECT_FALSE(j.at("published").is_null());
  EXPECT_EQ(j.at("params").at("size"), 100000);
  const bool smt = j.at("machine").at("smt").get<bool>();
  const std::size_t cpus = j.at("machine").at("allowed_cpus").size();
  std::map<std::string, std::set<std::string>> ms;        // workload -> variants
  std::map<std::string, std::set<std::string>> slowdown;  // workload -> variants
  for (const auto& row : j.at("results")) {
    expect_row_shape(row);
    const std::string v = row.at("variant");
    const std::string w = row.at("workload");
    EXPECT_TRUE(w == "sum" || w == "sin") << w;
    EXPECT_EQ(row.at("threads").get<int>(), v == "single" ? 1 : 2) << row.dump();
    if (row.at("metric") == "ms") {
      EXPECT_EQ(row.at("unit"), "ms");
      ms[w].insert(v);
    } else {
      EXPECT_EQ(row.at("metric"), "slowdown");
      EXPECT_EQ(row.at("unit"), "x");
      slowdown[w].insert(v);
    }
    if (v == "single" || v == "same-cpu") {
      EXPECT_TRUE(row.at("measured").get<bool>()) << row.dump();
      if (row.at("measured").get<bool>()) {
        EXPECT_GT(row.at("median").get<double>(), 0.0);
        EXPECT_EQ(row.at("reps"), 1);
      }
    }
    if (v == "smt-siblings" && !smt) {
      EXPECT_FALSE(row.at("measured").get<bool>());
      EXPECT_NE(row.value("note", std::string()).find("no SMT siblings"), std::string::npos) << row.dump();
    }
    if (v == "two-cores") {
      EXPECT_EQ(row.at("measured").get<bool>(), cpus >= 2) << row.dump();
    }
  }
  const std::set<std::string> all{"single", "two-cores", "smt-siblings", "same-cpu"};
  const std::set<std::string> pairs{"two-cores", "smt-siblings", "same-cpu"};
  for (const char* w : {"sum", "sin"}) {
    EXPECT_EQ(ms[w], all) << w;
    EXPECT_EQ(slowdown[w], pairs) << w;
  }
}

TEST(CliSmt, TableNamesTheWorkloadAndTheArticle) {
  expect_table_shows("smt --size 100000 --reps 1", {"single [sin]", "540"});
}

TEST(CliSpin, JsonHasEveryVariantThreadCountAndMetric) {
  const auto j = run_json("spin --threads 2,4 --granularity fine --work-ms 5 --reps 1");
  ASSERT_EQ(j.value("experiment", std::string()), "spin");
  expect_common_fields(j, "spin");
  EXPECT_FALSE(j.at("published").is_null());
  const std::set<std::string> variants{"busy", "yield", "sleep1ms", "pause-backoff", "weft", "std-mutex"};
  const std::set<std::string> metrics{"wall_ms", "cpu_s", "ctx_switches", "energy_j"};
  std::map<std::string, std::set<std::string>> seen;  // variant/threads -> metrics
  for (const auto& row : j.at("results")) {
    expect_row_shape(row);
    const std::string v = row.at("variant");
    EXPECT_EQ(variants.count(v), 1u) << v;
    const int t = row.at("threads");
    EXPECT_TRUE(t == 2 || t == 4) << t;
    EXPECT_EQ(row.at("granularity"), "fine");
    const std::string m = row.at("metric");
    seen[v + "/" + std::to_string(t)].insert(m);
    if (m == "energy_j") {
      if (!row.at("measured").get<bool>()) {
        EXPECT_NE(row.at("note").get<std::string>().find("energy: not available"), std::string::npos);
      }
    } else {
      EXPECT_TRUE(row.at("measured").get<bool>()) << row.dump();
      EXPECT_EQ(row.at("reps"), 1);
      EXPECT_GE(row.at("median").get<double>(), 0.0);
    }
    if (m == "wall_ms") {
      EXPECT_GT(row.at("median").get<double>(), 0.0);
    }
  }
  EXPECT_EQ(seen.size(), variants.size() * 2);
  for (const auto& [key, ms] : seen) EXPECT_EQ(ms, metrics) << key;
}

TEST(CliSpin, TimeLimitStopsARunAndSaysSo) {
  // 1 s of 100 µs items in 2 s-worth of sleeps: sleep1ms cannot finish in
  // 0.05 s, whatever the machine.
  const auto j = run_json("spin --variant sleep1ms --threads 8 --granularity coarse --work-ms 1000 "
                          "--reps 1 --time-limit 0.05");
  bool saw = false;
  for (const auto& row : j.at("results")) {
    if (row.at("metric") != "wall_ms") continue;
    saw = true;
    EXPECT_NE(row.value("note", std::string()).find("stopped after"), std::string::npos) << row.dump();
    EXPECT_EQ(row.at("stopped_reps"), 1);
    EXPECT_LT(row.at("work_fraction_min").get<double>(), 1.0);
  }
  EXPECT_TRUE(saw);
}

WEFT_BAD_INPUT_TESTS(
    CliSmtSpinBadInput,
    BadInput{"smt --size 0", "--size"}, BadInput{"smt --size -5", "--size"},
    BadInput{"smt --size 1000000000000", "--size"},
    BadInput{"smt --size 1000000000000000000", "--size"}, BadInput{"smt --reps 0", "--reps"},
    BadInput{"smt --size abc", "abc"}, BadInput{"smt --bogus", "--bogus"},
    BadInput{"spin --threads 0", "--threads"}, BadInput{"spin --threads 2,x", "--threads"},
    BadInput{"spin --granularity tiny", "tiny"}, BadInput{"spin --variant nap", "nap"},
    BadInput{"spin --time-limit 0", "--time-limit"},
    BadInput{"spin --time-limit -1", "--time-limit"}, BadInput{"spin --work-ms 0", "--work-ms"},
    BadInput{"spin --reps 0", "--reps"}, BadInput{"spin --bogus", "--bogus"});

}  // namespace
