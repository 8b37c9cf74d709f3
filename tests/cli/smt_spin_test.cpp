// `weft smt` and `weft spin`: the JSON names and types other tools rely on,
// every variant present (measured, or with a note saying why not), and bad
// input exiting with status 2 and a message naming the option. Tiny sizes:
// no timing is asserted.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun run(const std::string& args, bool merge_stderr = true) {
  const std::string cmd = std::string(WEFT_CLI_PATH) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

nlohmann::json run_json(const std::string& args) {
  const CliRun r = run(args + " --json", false);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.out;
  return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

void expect_row_shape(const nlohmann::json& row) {
  for (const char* k : {"variant", "threads", "metric", "unit", "measured", "median", "min", "max", "reps"})
    EXPECT_TRUE(row.contains(k)) << "row field " << k << " in " << row.dump();
  EXPECT_TRUE(row.at("variant").is_string());
  EXPECT_TRUE(row.at("threads").is_number_integer());
  EXPECT_TRUE(row.at("measured").is_boolean());
  if (row.at("measured").get<bool>()) {
    EXPECT_TRUE(row.at("median").is_number()) << row.dump();
    EXPECT_LE(row.at("min").get<double>(), row.at("median").get<double>());
    EXPECT_LE(row.at("median").get<double>(), row.at("max").get<double>());
  } else {
    EXPECT_TRUE(row.at("median").is_null()) << row.dump();
    ASSERT_TRUE(row.contains("note")) << "an unmeasured row says why: " << row.dump();
    EXPECT_FALSE(row.at("note").get<std::string>().empty());
  }
}

TEST(CliSmt, JsonHasEveryVariantPerWorkload) {
  const auto j = run_json("smt --size 100000 --reps 1");
  ASSERT_EQ(j.value("experiment", std::string()), "smt");
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
  const CliRun r = run("smt --size 100000 --reps 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("single [sin]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("540"), std::string::npos) << r.out;
}

TEST(CliSpin, JsonHasEveryVariantThreadCountAndMetric) {
  const auto j = run_json("spin --threads 2,4 --granularity fine --work-ms 5 --reps 1");
  ASSERT_EQ(j.value("experiment", std::string()), "spin");
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

struct BadInput {
  const char* args;
  const char* expect;  // a fragment of the message
};

class CliSmtSpinBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliSmtSpinBadInput, ExitsTwoWithAMessage) {
  const CliRun r = run(GetParam().args);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("weft: error:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(GetParam().expect), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliSmtSpinBadInput,
    ::testing::Values(BadInput{"smt --size 0", "--size"}, BadInput{"smt --size -5", "--size"},
                      BadInput{"smt --size 1000000000000", "--size"},
                      BadInput{"smt --size 1000000000000000000", "--size"}, BadInput{"smt --reps 0", "--reps"},
                      BadInput{"smt --size abc", "abc"}, BadInput{"smt --bogus", "--bogus"},
                      BadInput{"spin --threads 0", "--threads"}, BadInput{"spin --threads 2,x", "--threads"},
                      BadInput{"spin --granularity tiny", "tiny"}, BadInput{"spin --variant nap", "nap"},
                      BadInput{"spin --time-limit 0", "--time-limit"},
                      BadInput{"spin --time-limit -1", "--time-limit"}, BadInput{"spin --work-ms 0", "--work-ms"},
                      BadInput{"spin --reps 0", "--reps"}, BadInput{"spin --bogus", "--bogus"}),
    [](const ::testing::TestParamInfo<BadInput>& param) { return "case" + std::to_string(param.index); });

TEST(CliSmtSpin, HelpExitsZero) {
  for (const char* sub : {"smt", "spin"}) {
    const CliRun r = run(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub << "\n" << r.out;
    EXPECT_NE(r.out.find("--"), std::string::npos);
  }
}

}  // namespace
