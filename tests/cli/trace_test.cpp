// weft trace's CLI contract: the file it writes is Chrome trace-event JSON
// (traceEvents with ph/ts/pid/tid, a thread per worker of each pool, task
// runs as complete events), WEFT_TRACE traces any run, and bad input exits
// 2 with a message naming it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.hpp"
#include "temp_dir.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << p;
  return nlohmann::json::parse(in);
}

// Every event's fields, and per pool (pid) its thread names by tid.
std::map<std::uint64_t, std::map<int, std::string>> check_events(const nlohmann::json& j) {
  std::map<std::uint64_t, std::map<int, std::string>> threads;
  EXPECT_TRUE(j.at("traceEvents").is_array());
  for (const auto& e : j.at("traceEvents")) {
    for (const char* k : {"ph", "name", "pid", "tid"}) EXPECT_TRUE(e.contains(k)) << k << " in " << e.dump();
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "M" || ph == "X" || ph == "i") << e.dump();
    if (ph != "M") {
      EXPECT_TRUE(e.at("ts").is_number()) << e.dump();
    }
    if (ph == "X") {
      EXPECT_GE(e.at("dur").get<double>(), 0.0) << e.dump();
    }
    if (ph == "M" && e.at("name") == "thread_name") {
      auto& names = threads[e.at("pid").get<std::uint64_t>()];
      EXPECT_TRUE(names.emplace(e.at("tid").get<int>(), e.at("args").at("name").get<std::string>()).second)
          << "a second name for one thread: " << e.dump();
    }
  }
  return threads;
}

TEST(Trace, FibQuickWritesChromeJsonWithAThreadPerWorker) {
  TempDir dir;
  const auto out = dir / "x.json";
  const CliRun r = run_cli("trace fib --quick --workers 2 --variant weft --reps 1 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.err.find("weft trace: wrote"), std::string::npos) << r;
  const nlohmann::json j = read_json(out);
  const auto threads = check_events(j);
  ASSERT_FALSE(threads.empty());
  for (const auto& [pid, names] : threads) {
    EXPECT_EQ(names.size(), 2U) << "pool " << pid;
    for (const auto& [tid, name] : names) EXPECT_EQ(name, "worker " + std::to_string(tid));
  }
  std::set<std::uint64_t> pools_with_tasks;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "X") pools_with_tasks.insert(e.at("pid").get<std::uint64_t>());
  EXPECT_FALSE(pools_with_tasks.empty());
  // The experiment's own table still reaches stdout.
  EXPECT_NE(r.out.find("fib"), std::string::npos) << r;
}

TEST(Trace, TheEnvironmentVariableTracesAnyRun) {
  TempDir dir;
  const auto out = dir / "env.json";
  RunOptions opts;
  opts.env = {"WEFT_TRACE=" + out.string()};
  const CliRun r = run_cli("pfor --rounds 5 --workers 2 --reps 1 --variant weft", opts);
  ASSERT_EQ(r.status, 0) << r;
  const auto threads = check_events(read_json(out));
  EXPECT_FALSE(threads.empty());
}

WEFT_BAD_INPUT_TESTS(TraceBadInput, BadInput{"trace nosuch --out /tmp/x.json", "nosuch"},
                     BadInput{"trace fib --out /nonexistent/dir/x.json", "/nonexistent/dir"},
                     BadInput{"trace fib --out /", "is a directory"},
                     BadInput{"trace fib --quick --full", "exclude"},
                     BadInput{"trace fib --n 0 --out /tmp/weft-trace-bad.json", "--n"},
                     BadInput{"trace", "experiment"});

}  // namespace
