// The CLI's contract: --json prints one object with the documented fields;
// bad input exits with status 2 and a one-line message naming the problem.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"
#include "weft/topo/placement.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

TEST(Cli, TopoJson) {
  const auto j = run_json("topo");
  expect_common_fields(j, "topo");
  ASSERT_TRUE(j.at("allowed_cpus").is_array());
  EXPECT_GE(j.at("allowed_cpus").size(), 1u);
  EXPECT_GE(j.at("cores").get<int>(), 1);
  EXPECT_TRUE(j.at("smt").is_boolean());
  EXPECT_GE(j.at("available_parallelism").get<int>(), 1);
  EXPECT_LE(j.at("available_parallelism").get<std::size_t>(), j.at("allowed_cpus").size());
}

TEST(Cli, TopoTreeNamesEveryAllowedCpu) {
  const auto j = run_json("topo");
  const CliRun r = run_cli("topo");
  ASSERT_EQ(r.status, 0) << r;
  for (const auto& cpu : j.at("allowed_cpus"))
    EXPECT_NE(r.out.find("PU " + std::to_string(cpu.get<int>())), std::string::npos) << r.out;
}

TEST(Cli, RingJsonHasEveryRequestedFlag) {
  const auto j = run_json("ring --threads 2 --flag release,condvar,weft --hops 2000 --reps 2");
  expect_common_fields(j, "ring");
  int ns = 0, cpu = 0;
  for (const auto& row : j.at("results")) {
    EXPECT_EQ(row.at("threads"), 2);
    const std::string v = row.at("variant");
    EXPECT_TRUE(v == "release" || v == "condvar" || v == "weft") << v;
    if (row.at("metric") == "ns_per_hop") ++ns;
    if (row.at("metric") == "cpu_ns_per_hop") ++cpu;
    EXPECT_EQ(row.at("reps"), 2);
    EXPECT_GT(row.at("median").get<double>(), 0.0);
    EXPECT_LE(row.at("min").get<double>(), row.at("median").get<double>());
    EXPECT_LE(row.at("median").get<double>(), row.at("max").get<double>());
  }
  EXPECT_EQ(ns, 3);
  EXPECT_EQ(cpu, 3);
  EXPECT_FALSE(j.at("published").is_null());
}

TEST(Cli, RingWithMoreThreadsThanCpusFinishes) {
  // Spinning flags crawl here; the time limit stops them and says so.
  const auto j = run_json("ring --threads 4 --flag release,weft --hops 20000 --reps 1 --time-limit 1");
  bool saw_release = false;
  for (const auto& row : j.at("results"))
    if (row.at("variant") == "release") saw_release = true;
  EXPECT_TRUE(saw_release);
}

TEST(Cli, C2cJsonHasASquareMatrix) {
  const auto j = run_json("c2c --round-trips 200 --samples 1");
  expect_common_fields(j, "c2c");
  const auto& cpus = j.at("allowed_cpus");
  const auto& m = j.at("matrix_ns");
  ASSERT_EQ(m.size(), cpus.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    ASSERT_EQ(m[i].size(), cpus.size());
    EXPECT_TRUE(m[i][i].is_null());
    for (std::size_t k = 0; k < m.size(); ++k) {
      if (k != i) {
        EXPECT_GT(m[i][k].get<double>(), 0.0);
      }
    }
  }
}

WEFT_BAD_INPUT_TESTS(
    CliBadInput,
    BadInput{"frobnicate", "frobnicate"}, BadInput{"", "subcommand"},
    BadInput{"ring --threads 0", "--threads"}, BadInput{"ring --threads -3", "--threads"},
    BadInput{"ring --threads 1", "--threads must be at least 2, got 1"},
    BadInput{"ring --threads abc", "abc"}, BadInput{"ring --flag nope", "nope"},
    BadInput{"ring --hops 99999999999999999", "--hops"},
    BadInput{"ring --reps 0", "--reps"}, BadInput{"ring --placement diagonal", "diagonal"},
    BadInput{"ring --bogus", "--bogus"}, BadInput{"c2c --cpus 4095", "4095"},
    BadInput{"c2c --cpus 0-x", "--cpus"}, BadInput{"c2c --samples 0", "--samples"}, BadInput{"c2c --cpus ' '", "no CPU"});

TEST(Cli, HelpExitsZero) {
  for (const char* sub : {"", "topo", "ring", "c2c", "report"}) {
    const CliRun r = run_cli(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub << "\n" << r;
    EXPECT_NE(r.out.find("--"), std::string::npos) << r;
  }
}

// The help lists every placement the parser takes, so a new policy cannot
// stay undocumented; each (bar one_per_core, which needs two cores) runs.
TEST(Cli, RingHelpNamesEveryPlacement) {
  const CliRun help = run_cli("ring --help");
  ASSERT_EQ(help.status, 0) << help;
  for (const weft::Placement p : {weft::Placement::none, weft::Placement::compact, weft::Placement::spread,
                                  weft::Placement::one_per_core, weft::Placement::numa}) {
    const std::string name(weft::to_string(p));
    EXPECT_EQ(weft::parse_placement(name), p) << name;
    EXPECT_NE(help.out.find(name), std::string::npos) << "ring --help does not name placement " << name << "\n" << help;
    if (p == weft::Placement::one_per_core) continue;  // needs two cores; this machine may have one with SMT
    const CliRun run = run_cli("ring --threads 2 --flag weft --hops 1000 --reps 1 --placement " + name);
    EXPECT_EQ(run.status, 0) << name << "\n" << run;
  }
}

}  // namespace
