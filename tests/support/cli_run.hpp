// Running the weft binary from the CLI tests (tests/cli/*.cpp, which define
// WEFT_CLI_PATH and link nlohmann/json): one way to start it, capture stdout
// and stderr apart, stop it if it hangs, read its JSON, and check the fields
// and the usage-error contract every subcommand shares.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

extern char** environ;

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
// SIGKILLs it after `opts.timeout`.
inline CliRun run_process(const std::vector<std::string>& args, const RunOptions& opts = {}) {
  CliRun o;
  // Everything the child needs is built before fork: after it, the child
  // only calls async-signal-safe functions.
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    bool replaced = false;
    for (const auto& kv : opts.env)
      replaced = replaced || std::strncmp(*e, kv.c_str(), kv.find('=') + 1) == 0;
    if (!replaced) env_storage.emplace_back(*e);
  }
  env_storage.insert(env_storage.end(), opts.env.begin(), opts.env.end());
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return o;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return o;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    return o;
  }
  if (pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  const auto deadline = std::chrono::steady_clock::now() + opts.timeout;
  std::array<pollfd, 2> fds = {{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  std::array<std::string*, 2> sinks = {&o.out, &o.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      o.hung = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const int r = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (r < 0 && errno != EINTR) {
      ADD_FAILURE() << "poll: " << std::strerror(errno);
      ::kill(pid, SIGKILL);
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      std::array<char, 4096> buf;
      const ssize_t n = ::read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        sinks[i]->append(buf.data(), static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  // Both pipes are closed (or the child was killed): it has exited or will
  // at once, so this wait cannot hang.
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st)) {
    o.status = WEXITSTATUS(st);
  } else if (WIFSIGNALED(st)) {
    o.signal = WTERMSIG(st);
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
