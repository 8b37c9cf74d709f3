// Running the weft binary from the CLI tests (tests/cli/*.cpp, which define
// WEFT_CLI_PATH and link nlohmann/json and the harness): one way to start it
// (the harness's spawner), capture stdout
// and stderr apart, stop it if it hangs, read its JSON, and check the fields
// and the usage-error contract every subcommand shares.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

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

// `weft <args> --json`: must exit 0 and print one JSON object on stdout. On
// failure, an empty object (the caller's lookups then fail the test too).
inline nlohmann::json run_json(const std::string& args) {
  const CliRun r = run_cli(args + " --json");
  EXPECT_EQ(r.status, 0) << args << "\n" << r;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << args << ": not JSON: " << e.what() << "\n" << r;
    return nlohmann::json::object();
  }
}

// The fields every experiment's JSON has (docs/cli.md).
inline void expect_common_fields(const nlohmann::json& j, const std::string& experiment) {
  EXPECT_EQ(j.at("experiment"), experiment);
  for (const char* k : {"cpu_model", "allowed_cpus", "cores", "smt", "kernel", "compiler", "weft_version"})
    EXPECT_TRUE(j.at("machine").contains(k)) << "machine." << k;
  EXPECT_TRUE(j.contains("params"));
  EXPECT_TRUE(j.at("results").is_array());
  EXPECT_TRUE(j.contains("published"));
  for (const auto& row : j.at("results"))
    for (const char* k : {"variant", "metric", "unit", "median", "min", "max", "reps"})
      EXPECT_TRUE(row.contains(k)) << "row field " << k << " in " << row.dump();
}

// A row of an experiment run per thread count: measured with ordered,
// non-negative statistics, or not measured with a note saying why.
inline void expect_row_shape(const nlohmann::json& row) {
  for (const char* k : {"variant", "threads", "metric", "unit", "median", "min", "max", "reps", "measured"})
    ASSERT_TRUE(row.contains(k)) << "row field " << k << " in " << row.dump();
  EXPECT_TRUE(row.at("variant").is_string());
  EXPECT_TRUE(row.at("threads").is_number_integer());
  EXPECT_TRUE(row.at("measured").is_boolean());
  if (row.at("measured").get<bool>()) {
    EXPECT_TRUE(row.at("median").is_number()) << row.dump();
    EXPECT_LE(row.at("min").get<double>(), row.at("median").get<double>()) << row.dump();
    EXPECT_LE(row.at("median").get<double>(), row.at("max").get<double>()) << row.dump();
    EXPECT_GE(row.at("min").get<double>(), 0.0) << row.dump();
  } else {
    EXPECT_TRUE(row.at("median").is_null()) << row.dump();
    ASSERT_TRUE(row.contains("note")) << "an unmeasured row says why: " << row.dump();
    EXPECT_FALSE(row.at("note").get<std::string>().empty()) << row.dump();
  }
}

// Whether a peer's variants were built in: no row of a variant named
// `prefix` or starting with "prefix-" says "not built".
inline bool peer_built(const nlohmann::json& j, const std::string& prefix) {
  for (const auto& row : j.at("results")) {
    const std::string v = row.at("variant");
    if ((v == prefix || v.rfind(prefix + "-", 0) == 0) &&
        row.value("note", std::string()).find("not built") != std::string::npos)
      return false;
  }
  return true;
}
inline bool tbb_built(const nlohmann::json& j) { return peer_built(j, "tbb"); }
inline bool openmp_built(const nlohmann::json& j) { return peer_built(j, "openmp"); }

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
