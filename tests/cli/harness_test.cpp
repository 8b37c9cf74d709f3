// The measuring half's shared pieces: the process spawner every child goes
// through, the typed row lookups, the experiment registry (and how `weft
// report` follows it), and the warm-up every experiment records.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cli_run.hpp"
#include "weft/harness/process.hpp"
#include "weft/harness/run.hpp"
#include "weft/xp/registry.hpp"
#include "weft/xp/result.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks
namespace harness = weft::harness;
namespace xp = weft::xp;

TEST(Spawn, CapturesBothStreamsAndTheExitStatus) {
  const auto c = harness::spawn({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(c.status, 3);
  EXPECT_EQ(c.signal, 0);
  EXPECT_FALSE(c.hung);
  EXPECT_EQ(c.out, "out\n");
  EXPECT_EQ(c.err, "err\n");
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.describe(), "exited with status 3");
}

TEST(Spawn, MergesStderrWhenAsked) {
  harness::SpawnOptions o;
  o.merge_stderr = true;
  const auto c = harness::spawn({"/bin/sh", "-c", "echo one; echo two >&2"}, o);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.out, "one\ntwo\n");
  EXPECT_TRUE(c.err.empty());
}

TEST(Spawn, MissingBinaryIsAClearError) {
  try {
    harness::spawn({"/nonexistent/weft-no-such-binary", "x"});
    ADD_FAILURE() << "spawn of a missing binary did not throw";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/weft-no-such-binary"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory) << e.what();
  }
}

TEST(Spawn, EnvironmentReplacesAndPreloadIsCleared) {
  ::setenv("WEFT_SPAWN_TEST", "parent", 1);
  harness::SpawnOptions o;
  o.env = {"WEFT_SPAWN_TEST=child"};
  o.preload = "";
  const auto c = harness::spawn({"/bin/sh", "-c", "echo \"$WEFT_SPAWN_TEST:${LD_PRELOAD-unset}\""}, o);
  EXPECT_TRUE(c.ok()) << c.describe();
  EXPECT_EQ(c.out, "child:unset\n");
  const auto inherited = harness::spawn({"/bin/sh", "-c", "echo \"$WEFT_SPAWN_TEST\""});
  EXPECT_EQ(inherited.out, "parent\n");
  ::unsetenv("WEFT_SPAWN_TEST");
}

TEST(Spawn, KillsAChildThatOutlivesItsTimeout) {
  harness::SpawnOptions o;
  o.timeout = std::chrono::milliseconds(200);
  // exec: the sleep itself is the child, so the kill reaches it.
  const auto c = harness::spawn({"/bin/sh", "-c", "exec sleep 30"}, o);
  EXPECT_TRUE(c.hung);
  EXPECT_EQ(c.signal, 9);
  EXPECT_EQ(c.status, -1);
}

TEST(Spawn, LastLineSkipsTrailingBlankLines) {
  EXPECT_EQ(harness::last_line("first\nsecond\n\n"), "second");
  EXPECT_EQ(harness::last_line("only"), "only");
  EXPECT_EQ(harness::last_line(""), "");
}

TEST(Plan, WarmupRunsEachVariantOnceUnrecordedFirstThenRoundsRotate) {
  std::vector<std::pair<int, bool>> calls;
  harness::interleave({4, true}, 3, [&](int v, bool recorded) { calls.emplace_back(v, recorded); });
  const std::vector<std::pair<int, bool>> want{{0, false}, {1, false}, {2, false},                  // warm-up
                                               {0, true},  {1, true},  {2, true},                   // round 1
                                               {1, true},  {2, true},  {0, true},                   // round 2
                                               {2, true},  {0, true},  {1, true},                   // round 3
                                               {0, true},  {1, true},  {2, true}};                  // round 4
  EXPECT_EQ(calls, want);
}

TEST(Plan, UnitsPerThreadCountAndNotBuiltPeers) {
  using RunFn = int (*)();
  const std::vector<harness::Variant<RunFn>> table{{"alone", {}, false, nullptr},
                                                 {"pool", {}, true, nullptr},
                                                 {"peer", {"libpeer-dev", false}, true, nullptr}};
  const auto units = harness::plan_units(table, {"peer", "alone", "pool"}, {1, 4});
  ASSERT_EQ(units.size(), 5u);
  EXPECT_EQ(units[0].variant, "peer");
  EXPECT_EQ(units[0].why_not, "not built: libpeer-dev missing");
  EXPECT_EQ(units[1].threads, 4);
  EXPECT_FALSE(units[1].runs());
  EXPECT_EQ(units[2].variant, "alone");
  EXPECT_EQ(units[2].threads, 0);
  EXPECT_TRUE(units[2].runs());
  EXPECT_EQ(units[4].threads, 4);
  EXPECT_THROW(harness::plan_units(table, {"nope"}, {1}), std::invalid_argument);
  EXPECT_EQ(harness::variant_names(table), (std::vector<std::string>{"alone", "pool", "peer"}));
}

xp::Result labelled_result() {
  xp::Result r;
  xp::Row a = xp::make_row("weft", 2, "ms", "ms", {3, 1, 2});
  a.labels.workload = "sum";
  xp::Row b = xp::make_row("weft", 2, "ms", "ms", {10, 10});
  b.labels.workload = "spin";
  xp::Row c = xp::make_row("tbb", 2, "ms", "ms", {4});
  c.labels.workload = "sum";
  xp::Row d = xp::make_row("tbb", 2, "ms", "ms", {}, "not built: libtbb-dev missing");
  d.labels.workload = "spin";
  r.rows = {a, b, c, d};
  return r;
}

// settle() sits between two timed runs: it must not return while a thread
// of the previous run still burns a CPU (a peer's workers spinning after
// their region), whose spin would then eat into the next run's time.
TEST(Settle, WaitsUntilTheRestOfTheProcessStopsComputing) {
  std::atomic<bool> stopped{false};
  std::thread busy([&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(60);
    while (std::chrono::steady_clock::now() < until) {
    }
    stopped.store(true);  // seq_cst (the default): a flag read once, after settle(); no order to save
  });
  // Give the spinner its CPU before settle() starts looking.
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  harness::settle();
  EXPECT_TRUE(stopped.load()) << "settle() returned while another thread was still spinning";
  busy.join();
}

TEST(Rows, LookupsByTypedLabels) {
  const xp::Result r = labelled_result();
  const xp::Row* spin = xp::find(r, xp::Key("weft", "ms", 2).workload("spin"));
  ASSERT_NE(spin, nullptr);
  EXPECT_EQ(spin->stats.median, 10);
  EXPECT_EQ(xp::median(r, xp::Key("weft", "ms", 2).workload("sum")), 2.0);
  EXPECT_EQ(xp::find(r, xp::Key("weft", "ms", 3)), nullptr);
  EXPECT_EQ(xp::ratio(r, xp::Key("weft", "ms").workload("sum"), xp::Key("tbb", "ms").workload("sum")), 0.5);
  // An unmeasured row has no median, so no ratio.
  EXPECT_FALSE(xp::median(r, xp::Key("tbb", "ms").workload("spin")).has_value());
  EXPECT_FALSE(xp::ratio(r, xp::Key("weft", "ms").workload("spin"), xp::Key("tbb", "ms").workload("spin")));
}

TEST(Rows, LabelsAreFlatKeysOfTheRowJson) {
  const nlohmann::json j = xp::to_json(labelled_result());
  const auto& row = j.at("results").at(0);
  EXPECT_EQ(row.at("workload"), "sum");
  EXPECT_EQ(row.at("median"), 2.0);
  EXPECT_FALSE(row.contains("cutoff")) << row.dump();
  EXPECT_TRUE(j.at("results").at(3).at("median").is_null());
}

TEST(Registry, EveryExperimentHasSizesForEveryLevelAndIsASubcommand) {
  const nlohmann::json reg = xp::registry_json();
  ASSERT_FALSE(reg.empty());
  std::set<std::string> names;
  for (const auto& e : reg) {
    const std::string name = e.at("name");
    EXPECT_TRUE(names.insert(name).second) << "listed twice: " << name;
    for (const char* level : {"quick", "default", "full"}) {
      ASSERT_TRUE(e.at("seconds").contains(level)) << name << " " << level;
      EXPECT_GT(e.at("seconds").at(level).get<double>(), 0) << name << " " << level;
    }
    EXPECT_LE(e.at("seconds").at("quick").get<double>(), e.at("seconds").at("full").get<double>()) << name;
    EXPECT_FALSE(e.at("summary").get<std::string>().empty()) << name;
    EXPECT_TRUE(e.at("article").is_null() || xp::published_all().contains(e.at("article").get<std::string>()))
        << name;
    // Each level's sizes are arguments the subcommand accepts.
    for (const char* level : {"quick", "default", "full"}) {
      const std::string args = e.at("args").at(level);
      const CliRun v = run_cli(name + " " + args, {{"WEFT_VALIDATE_ONLY=1"}});
      EXPECT_EQ(v.status, 0) << name << " " << level << ": " << args << "\n" << v;
    }
    // Each is a subcommand whose help is the registry's summary.
    const CliRun help = run_cli(name + " --help");
    EXPECT_EQ(help.status, 0) << name << "\n" << help;
    EXPECT_NE(help.out.find(e.at("summary").get<std::string>()), std::string::npos) << name << "\n" << help;
  }
  // The topology first, then every registered experiment by its page place.
  std::vector<const xp::Experiment*> by_page;
  for (const xp::Experiment& e : xp::experiments()) by_page.push_back(&e);
  std::stable_sort(by_page.begin(), by_page.end(),
                   [](const xp::Experiment* a, const xp::Experiment* b) { return a->page() < b->page(); });
  std::vector<std::string> page{xp::kTopo.name};
  for (const xp::Experiment* e : by_page) page.push_back(e->name());
  std::vector<std::string> order;
  for (const auto& e : reg) order.push_back(e.at("name"));
  EXPECT_EQ(order, page);
  EXPECT_GE(order.size(), 15u) << "every experiment of this build is registered";
}

TEST(Registry, ReportFollowsTheRegistryAndExportsIt) {
  const auto dir = std::filesystem::temp_directory_path() / ("weft-registry-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  // Asked in another order: the report runs them in the registry's.
  const CliRun r = run_cli("report --quick --only fib,c2c,topo --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r;
  std::ifstream in(dir / "results.json");
  const nlohmann::json all = nlohmann::json::parse(in);
  std::vector<std::string> ran;
  for (const auto& e : all.at("experiments")) ran.push_back(e.at("experiment"));
  EXPECT_EQ(ran, (std::vector<std::string>{"topo", "c2c", "fib"}));
  EXPECT_EQ(all.at("registry"), xp::registry_json());
  EXPECT_EQ(all.at("published"), xp::published_all());
  std::filesystem::remove_all(dir);
}

TEST(Warmup, EveryExperimentRecordsItsWarmup) {
  const std::vector<std::string> runs{"ring --threads 2 --flag release --hops 2000 --reps 1",
                                      "fib --n 12 --workers 1 --reps 1 --variant serial,weft",
                                      "pfor --reps 1 --rounds 2 --items 50 --sum-n 10000 --workers 1",
                                      "tasks --tasks 200 --workers 1 --reps 1 --variant sync,weft-post",
                                      "c2c --samples 1 --round-trips 100"};
  for (const auto& args : runs) {
    const auto j = run_json(args);
    EXPECT_EQ(j.at("params").value("warmup", std::string()), "one unrecorded run per variant") << args;
    for (const auto& row : j.at("results"))
      if (row.at("measured").get<bool>() && args.rfind("c2c", 0) != 0) {
        EXPECT_EQ(row.at("reps"), 1) << row.dump();
      }
  }
}

}  // namespace
