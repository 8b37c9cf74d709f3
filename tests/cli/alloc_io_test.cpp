// `weft alloc` and `weft io`: the JSON contract (names, fields, types) on
// tiny sizes, a row for every variant (measured, or with a note saying why
// not), and bad input exiting with status 2 and a message naming the option.
// No timing is asserted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.hpp"

namespace {

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks

const nlohmann::json* find_row(const nlohmann::json& j, const std::string& variant, int threads,
                               const std::string& metric) {
  for (const auto& row : j.at("results"))
    if (row.at("variant") == variant && row.value("threads", 0) == threads && row.at("metric") == metric)
      return &row;
  return nullptr;
}

TEST(CliAlloc, JsonHasEveryVariantAndMetric) {
  const auto j = run_json("alloc --rounds 2 --size 100 --threads 1,2 --reps 1 --pc-objects 2000");
  ASSERT_TRUE(j.contains("results")) << j.dump();
  expect_common_fields(j, "alloc");
  EXPECT_FALSE(j.at("published").is_null());
  EXPECT_EQ(j.at("params").at("rounds"), 2);
  EXPECT_EQ(j.at("params").at("size"), 100);
  EXPECT_EQ(j.at("params").at("threads"), nlohmann::json::array({1, 2}));
  for (const auto& row : j.at("results")) expect_row_shape(row);

  for (const char* v : {"glibc", "weft", "pmr-unsync", "pmr-sync", "mimalloc", "jemalloc"}) {
    for (int n : {1, 2}) {
      for (const char* m : {"seconds", "peak_rss_mib"}) {
        const auto* row = find_row(j, v, n, m);
        ASSERT_NE(row, nullptr) << v << " " << n << " " << m;
      }
    }
    // t(N)/t(1)/N for N > 1 only.
    EXPECT_NE(find_row(j, v, 2, "scalability"), nullptr) << v;
    EXPECT_EQ(find_row(j, v, 1, "scalability"), nullptr) << v;
    for (const char* m : {"pc_ms", "pc_peak_rss_mib"}) EXPECT_NE(find_row(j, v, 2, m), nullptr) << v << " " << m;
  }
  // The in-process allocators always run.
  for (const char* v : {"glibc", "weft", "pmr-unsync", "pmr-sync"}) {
    EXPECT_TRUE(find_row(j, v, 2, "seconds")->at("measured").get<bool>()) << v;
    EXPECT_GT(find_row(j, v, 1, "peak_rss_mib")->at("median").get<double>(), 0.0) << v;
  }
  for (const char* v : {"glibc", "weft", "pmr-sync"})
    EXPECT_TRUE(find_row(j, v, 2, "pc_ms")->at("measured").get<bool>()) << v;
  const auto* unsync_pc = find_row(j, "pmr-unsync", 2, "pc_ms");
  EXPECT_FALSE(unsync_pc->at("measured").get<bool>());
  EXPECT_NE(unsync_pc->at("note").get<std::string>().find("not applicable"), std::string::npos);
  // mimalloc and jemalloc: measured, or a note (missing library, ASan build).
  for (const char* v : {"mimalloc", "jemalloc"}) {
    const auto* row = find_row(j, v, 1, "seconds");
    if (!row->at("measured").get<bool>()) {
      const std::string note = row->at("note");
      EXPECT_TRUE(note.find("not built") == 0 || note.find("not available") == 0 || note.find("not measured") == 0)
          << note;
    }
  }
  EXPECT_TRUE(j.at("ratios").is_array());
}

TEST(CliAlloc, ScalabilityNeedsOneThread) {
  const auto j = run_json("alloc --rounds 1 --size 10 --threads 2 --reps 1 --pc-objects 100");
  const auto* row = find_row(j, "weft", 2, "scalability");
  ASSERT_NE(row, nullptr);
  EXPECT_FALSE(row->at("measured").get<bool>());
  EXPECT_NE(row->at("note").get<std::string>().find("--threads"), std::string::npos);
}

TEST(CliAlloc, TableNamesTheArticle) {
  expect_table_shows("alloc --rounds 1 --size 10 --threads 1 --reps 1 --pc-objects 100",
                     {"glibc", "weft", "pmr-unsync", "pmr-sync", "mimalloc", "jemalloc", "318x", "Ratios"});
}

TEST(CliIo, JsonHasEveryVariantAndLeavesNoFiles) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("weft-io-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto j = run_json("io --size-mb 1 --reps 1 --threads 1,2 --tmpdir " + dir.string());
  ASSERT_TRUE(j.contains("results")) << j.dump();
  expect_common_fields(j, "io");
  EXPECT_EQ(j.at("params").at("size_bytes"), 1'000'000);
  EXPECT_FALSE(j.at("published").is_null());
  std::set<std::string> seen;
  for (const auto& row : j.at("results")) {
    expect_row_shape(row);
    EXPECT_EQ(row.at("metric"), "mb_per_s");
    EXPECT_EQ(row.at("unit"), "MB/s");
    seen.insert(row.at("variant").get<std::string>() + "/" + std::to_string(row.at("threads").get<int>()));
  }
  for (const char* v : {"fgetc", "getc_unlocked", "iostream", "weft-bytes", "weft-blocks", "read-write-64k",
                        "copy_file_range"}) {
    for (int n : {1, 2}) {
      EXPECT_TRUE(seen.count(std::string(v) + "/" + std::to_string(n))) << v << " " << n;
      if (std::string(v) != "copy_file_range") {
        EXPECT_TRUE(find_row(j, v, n, "mb_per_s")->at("measured").get<bool>()) << v;
      }
    }
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "the temporary directory was not removed";
  fs::remove_all(dir);
}

WEFT_BAD_INPUT_TESTS(
    CliAllocIoBadInput,
    BadInput{"alloc --threads 0", "--threads"}, BadInput{"alloc --threads 1,x", "'x'"},
    BadInput{"alloc --rounds 0", "--rounds"}, BadInput{"alloc --size 0", "--size"},
    BadInput{"alloc --reps 0", "--reps"}, BadInput{"alloc --bogus", "--bogus"},
    BadInput{"io --threads 0", "--threads"}, BadInput{"io --size-mb 0", "--size-mb"},
    BadInput{"io --size-mb 10000000", "--size-mb"},
    BadInput{"io --size-mb 900000 --tmpdir /tmp", "free"},
    BadInput{"io --tmpdir /no/such/dir", "/no/such/dir"},
    BadInput{"io --tmpdir /proc/self/status", "not a directory"},
    BadInput{"io --reps 0", "--reps"}, BadInput{"io --bogus", "--bogus"});

}  // namespace
