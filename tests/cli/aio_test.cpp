// weft aio's CLI contract: the JSON names (variant, workload, metric), the
// variants of each workload (measured, or "not built" where the peer is
// missing), the goals with their verdict at 2 workers, the cache state and
// the files' filesystem in params, and bad input -> exit status 2 with a
// message naming the option. Tiny sizes; no timed assertions.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.hpp"
#include "temp_dir.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

const std::map<std::string, std::set<std::string>> kCells{
    {"timers", {"weft", "asio"}},
    {"pingpong", {"weft", "mpmc-threads", "mutex-condvar"}},
    {"fanin", {"weft", "mpmc-threads", "mutex-condvar"}},
    {"random-read", {"weft", "pread-threads", "pread-pool"}},
    {"seq-read", {"weft", "pread-threads", "pread-pool", "reader"}},
};
const std::map<std::string, std::set<std::string>> kMetrics{
    {"timers", {"lateness_median_us", "lateness_p99_us", "cpu_ms"}},
    {"pingpong", {"ns_per_message", "cpu_ms"}},
    {"fanin", {"ns_per_message", "cpu_ms"}},
    {"random-read", {"mb_per_s", "cpu_s_per_gb"}},
    {"seq-read", {"mb_per_s", "cpu_s_per_gb"}},
};

const nlohmann::json& small_run() {
  return run_json_once(
      "aio --timers 200 --messages 2000 --reads 256 --depth 8 --file-mb 2 --files 2 --seq-file-mb 1 --reps 1 "
      "--workers 2");
}

TEST(Aio, JsonShapeAndEveryCell) {
  const auto& j = small_run();
  expect_common_fields(j, "aio",
                       {"workloads", "timers", "messages", "producers", "reads", "depth", "file_mb", "files",
                        "seq_file_mb", "cache", "workers", "reps", "variants", "aio_backend", "filesystem", "warmup"});
  EXPECT_NE(j.at("params").at("cache").get<std::string>().find("warm"), std::string::npos);
  // reader is one thread, no pool; Asio is the one peer a build may leave out.
  expect_rows(j, {.poolless = {"reader"}, .workers = {2}, .peers = {"asio"}});
  std::set<std::string> want;
  for (const auto& [w, vs] : kCells)
    for (const std::string& v : vs)
      for (const std::string& m : kMetrics.at(w)) want.insert(w + "/" + v + "/" + m);
  EXPECT_EQ(cells(j, {"workload", "variant", "metric"}), want);
}

TEST(Aio, GoalsCarryAVerdictAtTwoWorkers) {
  const auto& j = small_run();
  const auto whats = goals(j, Verdicts::all);
  for (const char* w : {"pingpong: weft channel / MpmcQueue between threads, ns per message (2 workers)",
                        "fanin: mutex+condvar / weft channel, ns per message (throughput ratio) (2 workers)",
                        "random-read: weft / thread per read, MB/s (2 workers)",
                        "random-read: weft / thread per read, CPU per byte (2 workers)",
                        "seq-read: weft / the best thread-based variant, MB/s (2 workers)"})
    EXPECT_TRUE(whats.count(w)) << w;
  if (peer_built(j, "asio")) {
    EXPECT_TRUE(whats.count("timers: weft / asio lateness median (2 workers)"));
  }
}

TEST(Aio, ColdRunsSayWhatStayedResidentAndDirPicksTheFilesystem) {
  TempDir dir;
  const auto j = run_json("aio --workload random-read --variant weft --reads 64 --file-mb 1 --reps 1 --workers 1 "
                          "--cold on --dir " + dir.path().string());
  EXPECT_NE(j.at("params").at("cache").get<std::string>().find("cold"), std::string::npos);
  EXPECT_EQ(j.at("params").at("dir"), dir.path().string());
  ASSERT_FALSE(j.at("results").empty());
  for (const auto& row : j.at("results"))
    EXPECT_NE(row.at("note").get<std::string>().find("still resident after POSIX_FADV_DONTNEED"), std::string::npos)
        << row.dump();
}

TEST(Aio, WorkloadAndVariantSelectTheRows) {
  const auto j = run_json("aio --workload fanin,timers --variant weft --timers 50 --messages 400 --reps 1 --workers 1,2");
  // 2 worker counts x (timers' 3 metrics + fanin's 2)
  EXPECT_EQ(cells(j, {"workload", "metric", "threads"}).size(), 2u * (3 + 2));
  EXPECT_FALSE(j.at("params").contains("filesystem")) << "no file workload, no files";
}

TEST(Aio, TableAndHelp) {
  expect_table_shows("aio --workload pingpong --messages 200 --reps 1", {"ns_per_message"});
  expect_help_lists("aio", {"--timers", "--messages", "--reads", "--depth", "--cold", "--dir", "random-read", "asio"});
}

WEFT_BAD_INPUT_TESTS(AioBadInput, BadInput{"aio --timers 0", "--timers must be at least 1, got 0"},
                     BadInput{"aio --workload nope", "nope"}, BadInput{"aio --variant tokio", "tokio"},
                     BadInput{"aio --depth 0", "--depth"}, BadInput{"aio --cold maybe", "--cold takes on or off"},
                     BadInput{"aio --dir /nonexistent/weft", "is not a directory"},
                     BadInput{"aio --messages 3 --producers 4", "fewer than --producers"},
                     BadInput{"aio --workload timers --variant reader", "none of the chosen variants"},
                     BadInput{"aio --workers 0", "--workers"}, BadInput{"aio --reps 0", "--reps"});

}  // namespace
