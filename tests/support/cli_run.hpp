// Running the weft binary from the CLI tests (tests/cli/*.cpp, which see
// the generated cli_paths.hpp and link nlohmann/json and the harness): one way to start it
// (the harness's spawner), capture stdout
// and stderr apart, stop it if it hangs, read its JSON, and check the fields,
// rows, goals, table, help and usage-error contract the subcommands share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <unistd.h>

#include "cli_paths.hpp"  // WEFT_CLI_PATH and the rest (generated)
#include "weft/harness/process.hpp"

namespace weft::test {

struct CliRun {
  int status = -1;    // exit status; -1 when the process did not exit (signal, or never started)
  int signal = 0;     // the signal that ended it, 0 if none
  bool hung = false;  // killed after RunOptions::timeout
  std::string out;
  std::string err;
};

// For failure messages: both streams, labelled.
inline std::ostream& operator<<(std::ostream& os, const CliRun& r) {
  return os << "[status " << r.status << (r.hung ? ", hung" : "") << "]\n--- stdout:\n"
            << r.out << "\n--- stderr:\n"
            << r.err;
}

struct RunOptions {
  std::vector<std::string> env;  // "NAME=value" entries replacing any inherited NAME
  // Below ctest's 300 s per test, so that a hung child is killed and
  // reported here rather than left running when ctest kills the test.
  std::chrono::seconds timeout{240};
};

// Runs argv[0] with argv (no shell) and the environment plus `opts.env`;
// SIGKILLs it after `opts.timeout`. The harness's spawner, as the CLI's own
// children use: a child that cannot start at all is a test failure.
inline CliRun run_process(const std::vector<std::string>& args, const RunOptions& opts = {}) {
  CliRun o;
  harness::SpawnOptions so;
  so.env = opts.env;
  so.timeout = opts.timeout;
  try {
    harness::ChildResult c = harness::spawn(args, so);
    o.status = c.status;
    o.signal = c.signal;
    o.hung = c.hung;
    o.out = std::move(c.out);
    o.err = std::move(c.err);
  } catch (const std::system_error& e) {
    ADD_FAILURE() << e.what();
  }
  return o;
}

// Runs a shell command line. It is exec'd by the shell, so it must be a
// simple command: the timeout's kill then reaches it, not just the shell.
inline CliRun run_shell(const std::string& command, const RunOptions& opts = {}) {
  return run_process({"/bin/sh", "-c", "exec " + command}, opts);
}

// weft with `args` as shell words (so quoting such as '' or ' ' works).
inline CliRun run_cli(const std::string& args, const RunOptions& opts = {}) {
  return run_shell(std::string(WEFT_CLI_PATH) + " " + args, opts);
}

// weft with exactly these arguments, no shell: for arbitrary bytes.
inline CliRun run_cli_argv(const std::vector<std::string>& args, const RunOptions& opts = {}) {
  std::vector<std::string> argv{WEFT_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, opts);
}

// `weft <args> --json`: must exit 0 and print one JSON object on stdout;
// nullopt (with the test failed) otherwise.
inline std::optional<nlohmann::json> try_run_json(const std::string& args) {
  const CliRun r = run_cli(args + " --json");
  EXPECT_EQ(r.status, 0) << args << "\n" << r;
  if (r.status != 0) return std::nullopt;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << args << ": not JSON: " << e.what() << "\n" << r;
    return std::nullopt;
  }
}

// As try_run_json; on failure an empty object (the caller's lookups then
// fail the test too).
inline nlohmann::json run_json(const std::string& args) {
  return try_run_json(args).value_or(nlohmann::json::object());
}

// The run of `args` kept by an earlier test of this ctest run, if any: ctest
// runs each test in a process of its own, so run_json_once keeps runs in
// the folder WEFT_TEST_RUN_CACHE names (tests/CMakeLists.txt), which a
// fixture removes at the start of each ctest run. A file is named by a hash
// of the arguments and holds them on its first line, so a collision is a
// miss, not another run's JSON.
inline std::filesystem::path kept_run_file(const char* dir, const std::string& args) {
  return std::filesystem::path(dir) / (std::to_string(std::hash<std::string>{}(args)) + ".json");
}

inline std::optional<nlohmann::json> kept_run(const std::string& args) {
  const char* dir = std::getenv("WEFT_TEST_RUN_CACHE");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  std::ifstream in{kept_run_file(dir, args)};
  std::string first;
  if (!std::getline(in, first) || first != args) return std::nullopt;
  // A file is renamed into place whole, so it parses; if not, run again.
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// Keeps a run for the later tests of this ctest run (see kept_run). Written
// under a name of this process's and renamed, so that a test running beside
// this one (ctest -j) finds no file or the whole of one; a failure to keep
// it only costs those tests a run of their own.
inline void keep_run(const std::string& args, const nlohmann::json& j) {
  const char* dir = std::getenv("WEFT_TEST_RUN_CACHE");
  if (dir == nullptr || *dir == '\0') return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path file = kept_run_file(dir, args);
  const std::filesystem::path tmp = file.string() + "." + std::to_string(::getpid());
  std::ofstream(tmp) << args << '\n' << j.dump() << '\n';
  std::filesystem::rename(tmp, file, ec);
}

// `run_json(args)` once per ctest run (once per program outside ctest): the
// tests that only read a run's JSON share it (running it is the slow part).
// A run that failed is not kept: each test that reads it runs it again and
// fails on its own.
inline const nlohmann::json& run_json_once(const std::string& args) {
  static std::map<std::string, nlohmann::json> runs;
  if (auto it = runs.find(args); it != runs.end()) return it->second;
  std::optional<nlohmann::json> j = kept_run(args);
  if (!j || j->is_discarded()) {
    j = try_run_json(args);
    if (j) keep_run(args, *j);
  }
  return runs.emplace(args, j.value_or(nlohmann::json::object())).first->second;
}

// The fields every experiment's JSON has (docs/cli.md), and the keys its
// "params" must have.
inline void expect_common_fields(const nlohmann::json& j, const std::string& experiment,
                                 const std::vector<std::string>& params = {}) {
  EXPECT_EQ(j.at("experiment"), experiment);
  for (const char* k : {"cpu_model", "allowed_cpus", "cores", "smt", "kernel", "compiler", "weft_version"})
    EXPECT_TRUE(j.at("machine").contains(k)) << "machine." << k;
  EXPECT_TRUE(j.contains("params"));
  EXPECT_TRUE(j.at("results").is_array());
  EXPECT_TRUE(j.contains("published"));
  for (const auto& row : j.at("results"))
    for (const char* k : {"variant", "metric", "unit", "median", "min", "max", "reps"})
      EXPECT_TRUE(row.contains(k)) << "row field " << k << " in " << row.dump();
  for (const std::string& k : params)
    EXPECT_TRUE(j.at("params").contains(k)) << "params." << k << " in " << j.at("params").dump();
}

// Where a row says it ran: on a pool of "threads" workers (counted), on no
// pool and without the field (none), or either, as the variant has it.
enum class Threads { counted, none, either };

// A row's shape: measured with ordered, non-negative statistics over at
// least one repetition, or not measured with a note saying why.
inline void expect_row_shape(const nlohmann::json& row, Threads threads = Threads::counted) {
  for (const char* k : {"variant", "metric", "unit", "median", "min", "max", "reps", "measured"})
    ASSERT_TRUE(row.contains(k)) << "row field " << k << " in " << row.dump();
  for (const char* k : {"variant", "metric", "unit"}) EXPECT_TRUE(row.at(k).is_string()) << k << " in " << row.dump();
  if (threads == Threads::counted) {
    ASSERT_TRUE(row.contains("threads")) << "row field threads in " << row.dump();
  }
  if (threads == Threads::none) {
    EXPECT_FALSE(row.contains("threads")) << "no pool, no threads: " << row.dump();
  }
  if (row.contains("threads")) {
    EXPECT_TRUE(row.at("threads").is_number_integer()) << row.dump();
  }
  ASSERT_TRUE(row.at("measured").is_boolean()) << row.dump();
  if (row.at("measured").get<bool>()) {
    ASSERT_TRUE(row.at("median").is_number()) << row.dump();
    EXPECT_LE(row.at("min").get<double>(), row.at("median").get<double>()) << row.dump();
    EXPECT_LE(row.at("median").get<double>(), row.at("max").get<double>()) << row.dump();
    EXPECT_GE(row.at("min").get<double>(), 0.0) << row.dump();
    EXPECT_GE(row.at("reps").get<int>(), 1) << row.dump();
  } else {
    EXPECT_TRUE(row.at("median").is_null()) << row.dump();
    ASSERT_TRUE(row.contains("note")) << "an unmeasured row says why: " << row.dump();
    EXPECT_FALSE(row.at("note").get<std::string>().empty()) << row.dump();
  }
}

// Whether `variant` is one of a peer's: `prefix` itself or "prefix-...".
inline bool is_peer_variant(const std::string& variant, const std::string& prefix) {
  return variant == prefix || variant.rfind(prefix + "-", 0) == 0;
}

// Whether a peer's variants were built in: no row of a variant named
// `prefix` or starting with "prefix-" says "not built".
inline bool peer_built(const nlohmann::json& j, const std::string& prefix) {
  for (const auto& row : j.at("results"))
    if (is_peer_variant(row.at("variant").get<std::string>(), prefix) &&
        row.value("note", std::string()).find("not built") != std::string::npos)
      return false;
  return true;
}
inline bool tbb_built(const nlohmann::json& j) { return peer_built(j, "tbb"); }
inline bool openmp_built(const nlohmann::json& j) { return peer_built(j, "openmp"); }

// Only a peer's row (`peers` as peer_built names them: "tbb" for "tbb" and
// "tbb-..."), which a build may leave out, goes unmeasured, and it says
// "not built"; weft's own variants and the baselines are always measured.
inline void expect_measured_unless_not_built(const nlohmann::json& row, const std::vector<std::string>& peers) {
  if (row.at("measured").get<bool>()) return;
  const std::string v = row.at("variant");
  EXPECT_TRUE(std::any_of(peers.begin(), peers.end(), [&](const std::string& p) { return is_peer_variant(v, p); }))
      << "built in, so measured: " << row.dump();
  EXPECT_NE(row.value("note", std::string()).find("not built"), std::string::npos) << row.dump();
}

// An experiment run on pools of given sizes, beside variants run without one.
struct RowRules {
  std::set<std::string> poolless{};  // variants run without a pool: their rows have no "threads"
  std::set<int> workers{};           // every other row's "threads" is one of these
  std::vector<std::string> peers{};  // as expect_measured_unless_not_built
};

// Every row of `j`: its shape (a pool-less variant's without "threads"), its
// worker count, and measured unless it is a peer's that was not built.
inline void expect_rows(const nlohmann::json& j, const RowRules& rules) {
  EXPECT_FALSE(j.at("results").empty()) << "no rows";
  for (const auto& row : j.at("results")) {
    const bool poolless = rules.poolless.count(row.at("variant").get<std::string>()) > 0;
    expect_row_shape(row, poolless ? Threads::none : Threads::counted);
    if (!poolless && row.contains("threads")) {
      EXPECT_EQ(rules.workers.count(row.at("threads").get<int>()), 1u)
          << "threads not one of the runs' worker counts " << nlohmann::json(rules.workers).dump() << ": "
          << row.dump();
    }
    expect_measured_unless_not_built(row, rules.peers);
  }
}

// The cells a run has rows for: each row's `fields` joined by '/'
// ("fib/weft/2"; "-" for a field the row has not), of the rows of `metric`
// only when one is named.
inline std::set<std::string> cells(const nlohmann::json& j, const std::vector<std::string>& fields,
                                   const std::string& metric = {}) {
  std::set<std::string> out;
  for (const auto& row : j.at("results")) {
    if (!metric.empty() && row.at("metric") != metric) continue;
    std::string cell;
    for (const std::string& f : fields) {
      if (!cell.empty()) cell += '/';
      if (!row.contains(f))
        cell += '-';
      else
        cell += row.at(f).is_string() ? row.at(f).get<std::string>() : row.at(f).dump();
    }
    out.insert(cell);
  }
  return out;
}

// Whether a run's goals must all carry a verdict: it ran at the worker
// count they are set at.
enum class Verdicts { where_set, all };

// `j`'s goals ("ratios") by what they compare, each with a positive value;
// one with a verdict ("met", a boolean) has the goal it was read off.
inline std::map<std::string, nlohmann::json> goals(const nlohmann::json& j, Verdicts verdicts = Verdicts::where_set) {
  std::map<std::string, nlohmann::json> out;
  EXPECT_TRUE(j.contains("ratios")) << "no ratios in " << j.dump();
  if (!j.contains("ratios")) return out;
  for (const auto& g : j.at("ratios")) {
    EXPECT_GT(g.at("value").get<double>(), 0.0) << g.dump();
    if (verdicts == Verdicts::all) {
      EXPECT_TRUE(g.contains("met")) << "a goal without a verdict: " << g.dump();
    }
    if (g.contains("met")) {
      EXPECT_TRUE(g.at("met").is_boolean()) << g.dump();
      EXPECT_FALSE(g.at("goal").get<std::string>().empty()) << g.dump();
    }
    out[g.at("what").get<std::string>()] = g;
  }
  return out;
}

// `weft <args>` prints its table: exits 0, and the output shows each of `texts`.
inline void expect_table_shows(const std::string& args, const std::vector<std::string>& texts) {
  const CliRun r = run_cli(args);
  ASSERT_EQ(r.status, 0) << args << "\n" << r;
  for (const std::string& t : texts) EXPECT_NE(r.out.find(t), std::string::npos) << t << "\n" << r;
}

// `weft <subcommand> --help` exits 0 and lists each of `names` (options,
// workloads, variants), and never the hidden --internal-child.
inline void expect_help_lists(const std::string& subcommand, const std::vector<std::string>& names) {
  const CliRun help = run_cli(subcommand + " --help");
  EXPECT_EQ(help.status, 0) << subcommand << "\n" << help;
  for (const std::string& n : names)
    EXPECT_NE(help.out.find(n), std::string::npos) << subcommand << " --help: " << n << "\n" << help;
  EXPECT_EQ((help.out + help.err).find("--internal-child"), std::string::npos)
      << subcommand << " --help: the child option is internal\n" << help;
}

inline bool has_line_starting(const std::string& text, const std::string& prefix) {
  for (std::size_t at = 0; at < text.size();) {
    if (text.compare(at, prefix.size(), prefix) == 0) return true;
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return false;
}

// Bad input: weft exits with status 2 and a "weft: error:" line on stderr
// that names the problem.
struct BadInput {
  const char* args;
  const char* expect;  // a fragment of the message
};

inline void expect_usage_error(const BadInput& c) {
  const CliRun r = run_cli(c.args);
  EXPECT_EQ(r.status, 2) << c.args << "\n" << r;
  EXPECT_TRUE(has_line_starting(r.err, "weft: error:")) << c.args << "\n" << r;
  EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r;
}

inline std::string bad_input_name(const ::testing::TestParamInfo<BadInput>& param) {
  return "case" + std::to_string(param.index);
}

}  // namespace weft::test

// Defines the parameterised suite `suite` (one test, ExitsTwoWithAMessage,
// instantiated as Cases/suite.ExitsTwoWithAMessage/caseN) over the BadInput
// values given; each file names its own suite, so the test names stay.
#define WEFT_BAD_INPUT_TESTS(suite, ...)                                                \
  class suite : public ::testing::TestWithParam<::weft::test::BadInput> {};             \
  TEST_P(suite, ExitsTwoWithAMessage) { ::weft::test::expect_usage_error(GetParam()); } \
  INSTANTIATE_TEST_SUITE_P(Cases, suite, ::testing::Values(__VA_ARGS__), ::weft::test::bad_input_name)
