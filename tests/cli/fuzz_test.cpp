// Argument fuzzing: a thousand random argument vectors (a new seed each
// run), built from every subcommand, every option and a pile of hostile
// values, go to the weft binary with WEFT_VALIDATE_ONLY=1 (parse and
// validate, run nothing). Every run must end in exit 0 or exit 2 with
// "weft: error: ..." on stderr: never a signal, another status, or a hang.
//
// The seed is printed; WEFT_FUZZ_SEED=<n> reproduces a run, and
// WEFT_FUZZ_VECTORS=<n> overrides how many vectors run.
//
// `weft report` is fuzzed too: under WEFT_VALIDATE_ONLY it checks its
// options and its output directory, and writes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "sanitizers.hpp"

namespace {

// Every run starts a sanitized process: ~10x the cost of a release one.
// 1,000 release runs take ~20 s on 2 CPUs; the seed differs from run to
// run, so runs of the test add up to more vectors.
constexpr int kDefaultVectors = weft::test::kSanitized ? 300 : 1000;
constexpr auto kHangTimeout = std::chrono::seconds(10);

struct Subcommand {
  std::string name;
  std::vector<std::string> options;
};

// The lines of a `--help` text from the line after `heading` up to the next
// blank line.
std::vector<std::string> help_section(const std::string& help, const std::string& heading) {
  std::vector<std::string> lines;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside) {
      inside = line == heading;
    } else if (line.empty()) {
      break;
    } else {
      lines.push_back(line);
    }
  }
  return lines;
}

// The first word of an indented help line: "  -n,--tasks INT  ..." gives
// "-n,--tasks"; "  ring   Token-ring ..." gives "ring".
std::string first_word(const std::string& line) {
  const std::size_t from = line.find_first_not_of(' ');
  if (from == std::string::npos) return {};
  return line.substr(from, line.find(' ', from) - from);
}

// Every subcommand and its options, read off the binary's own --help (so an
// option added to a registration is fuzzed without this file changing).
// Hidden options (--internal-child) are not listed there: only weft itself
// passes them, and a valid spec runs a measurement.
const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> s = [] {
    std::vector<Subcommand> subs;
    const weft::test::CliRun root = weft::test::run_cli("--help");
    EXPECT_EQ(root.status, 0) << root;
    for (const std::string& line : help_section(root.out, "Subcommands:")) {
      Subcommand sub{first_word(line), {}};
      const weft::test::CliRun help = weft::test::run_cli(sub.name + " --help");
      EXPECT_EQ(help.status, 0) << help;
      for (const std::string& opt : help_section(help.out, "Options:")) {
        std::istringstream names(first_word(opt));
        for (std::string name; std::getline(names, name, ',');)
          if (name != "-h" && name != "--help") sub.options.push_back(name);
      }
      EXPECT_FALSE(sub.options.empty()) << "no options read from 'weft " << sub.name << " --help':\n" << help;
      if (sub.options.empty()) sub.options.emplace_back("--json");  // keeps pick() in range; the test has failed
      subs.push_back(std::move(sub));
    }
    return subs;
  }();
  return s;
}

TEST(CliFuzz, ReadsEverySubcommandsOptionsOffItsHelp) {
  const auto& subs = subcommands();
  const auto find = [&](const std::string& name) -> const Subcommand* {
    for (const auto& sub : subs)
      if (sub.name == name) return &sub;
    return nullptr;
  };
  for (const char* name : {"ring", "tasks", "scale", "report", "topo", "trace"}) EXPECT_NE(find(name), nullptr) << name;
  // Options written only in a registration, and short names, are there.
  if (const Subcommand* tasks = find("tasks")) {
    for (const char* opt : {"--async-tasks", "--round-trip-tasks", "-n", "--tasks", "--workers", "--json"})
      EXPECT_NE(std::find(tasks->options.begin(), tasks->options.end(), opt), tasks->options.end()) << opt;
  }
}

// Values: plausible ones (so that runs get past the first check) and junk.
std::vector<std::string> values() {
  std::vector<std::string> v = {
      "0", "1", "2", "3", "4", "8", "16", "256", "257", "1000", "-1", "-0", "+1", "2147483647", "2147483648",
      "-2147483649", "9223372036854775807", "9223372036854775808", "99999999999999999999", "1e309", "-1e309",
      "1e-320", "nan", "inf", "-inf", "0.5", "0.0", "1.5", "3600", "3601", "1e12", "0x10", "010", "1_000", " 1",
      "1 ", "abc", "1,2,,3", ",", ",,", "0-", "-0-1", "5-2", "0-1", "0-1023", "0-1024", "1,2", "2,1,2", "1-",
      "all", "none", "compact", "spread", "one_per_core", "release", "seq_cst", "condvar", "pause", "atomic_wait",
      "futex", "weft", "serial", "tbb", "std_async", "glibc", "busy", "yield", "sleep", "fine", "coarse", "/",
      "/tmp", "/nonexistent", "/dev/null", "/proc/self", ".", "..", "", "-", "--", "--=", "-x", "=", "==",
      "\xc3\xb1", "\xe2\x80\x94", "\xf0\x9f\x98\x80", "\xff\xfe", "\xc3", "\x01", "\t", "\n", "\x1b[31m", "\x7f",
      "%s%s%n", "{}", "{0}", "\\", "'", "\"", "$(true)",
  };
  v.push_back(std::string(300, '9'));
  v.push_back(std::string(20000, 'a'));
  v.push_back("1," + std::string(5000, ','));
  std::string many;
  for (int i = 0; i < 2000; ++i) many += std::to_string(i % 300) + ",";
  v.push_back(many);
  return v;
}

const std::vector<std::string> kJunk = {"",   "-",  "--", "--=", "-x",  "-",       "---json", "--json=1",
                                        "-rr", "-r2", "--reps=", "--help", "-h", "--version", "report", "--=1"};

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed), values_(values()) {}

  std::vector<std::string> next() {
    std::vector<std::string> args;
    const auto& subs = subcommands();
    const Subcommand* sub = nullptr;
    const unsigned start = pick(100);
    if (start < 3) {
      // Root-level junk, or nothing at all.
      for (unsigned i = pick(3); i > 0; --i) args.push_back(any_value());
      return args;
    }
    if (start < 5) return {"report", "--help"};
    sub = &subs[pick(subs.size())];
    args.push_back(sub->name);
    for (unsigned i = pick(7); i > 0; --i) {
      const unsigned kind = pick(100);
      if (kind < 45) {
        args.emplace_back(own_option(*sub));
        args.push_back(any_value());
      } else if (kind < 60) {
        args.push_back(own_option(*sub) + "=" + any_value());
      } else if (kind < 70) {
        args.emplace_back(own_option(*sub));
      } else if (kind < 80) {
        // Another subcommand's option, or a second subcommand.
        const Subcommand& other = subs[pick(subs.size())];
        args.push_back(pick(4) == 0 ? other.name : own_option(other));
        if (pick(2) == 0) args.push_back(any_value());
      } else if (kind < 90) {
        args.push_back(any_value());
      } else {
        args.push_back(kJunk[pick(kJunk.size())]);
      }
    }
    return args;
  }

 private:
  unsigned pick(std::size_t n) { return static_cast<unsigned>(std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_)); }
  const std::string& own_option(const Subcommand& s) { return s.options[pick(s.options.size())]; }
  std::string any_value() {
    return values_[pick(values_.size())];
  }

  std::mt19937_64 rng_;
  std::vector<std::string> values_;
};

// The vector as a C-quoted list, so a failure can be pasted back.
std::string quote(const std::vector<std::string>& args) {
  std::string s = "weft";
  for (const auto& a : args) {
    s += " \"";
    std::size_t shown = 0;
    for (const char c : a) {
      if (++shown > 80) {
        s += "...(" + std::to_string(a.size()) + " bytes)";
        break;
      }
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", u);
        s += hex;
      } else {
        s += c;
      }
    }
    s += '"';
  }
  return s;
}

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0') {
    ADD_FAILURE() << name << "='" << v << "' is not a number; using " << fallback;
    return fallback;
  }
  return n;
}

TEST(CliFuzz, EveryArgumentVectorEndsInExitZeroOrTwo) {
  const std::uint64_t seed = env_number("WEFT_FUZZ_SEED", std::random_device{}());
  const std::uint64_t count = env_number("WEFT_FUZZ_VECTORS", kDefaultVectors);
  std::printf("fuzz seed %llu (WEFT_FUZZ_SEED=%llu reproduces), %llu vectors\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(count));
  std::fflush(stdout);

  // No shell: the values hold arbitrary bytes.
  const weft::test::RunOptions opts{.env = {"WEFT_VALIDATE_ONLY=1"}, .timeout = kHangTimeout};

  Generator gen(seed);
  std::uint64_t zero = 0, two = 0, failures = 0;
  constexpr std::uint64_t kMaxReported = 20;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::vector<std::string> args = gen.next();
    const weft::test::CliRun o = weft::test::run_cli_argv(args, opts);
    std::string problem;
    if (o.hung) {
      problem = "hang: killed after " + std::to_string(kHangTimeout.count()) + " s";
    } else if (o.status < 0) {
      problem = "killed by signal " + std::to_string(o.signal) + " (" + strsignal(o.signal) + ")";
    } else if (o.status == 0) {
      ++zero;
      if (o.out.find("error") != std::string::npos || o.err.find("error") != std::string::npos)
        problem = "exit 0 but the output mentions an error";
    } else if (o.status == 2) {
      ++two;
      if (!weft::test::has_line_starting(o.err, "weft: error:")) problem = "exit 2 without a 'weft: error:' line on stderr";
    } else {
      problem = "exit status " + std::to_string(o.status) + " (expected 0 or 2)";
    }
    if (!problem.empty()) {
      ++failures;
      if (failures <= kMaxReported) {
        ADD_FAILURE() << "vector " << i << " (seed " << seed << "): " << quote(args) << "\n  " << problem
                      << "\n  stderr: " << o.err.substr(0, 2000) << "\n  stdout: " << o.out.substr(0, 500);
      }
    }
  }
  std::printf("ran %llu vectors: %llu exited 0, %llu exited 2, %llu failed\n",
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(zero),
              static_cast<unsigned long long>(two), static_cast<unsigned long long>(failures));
  EXPECT_EQ(failures, 0U) << "seed " << seed;
  // A generator that never got past the parser would test little.
  if (count >= 100) {
    EXPECT_GT(zero, 0U);
    EXPECT_GT(two, 0U);
  }
}

}  // namespace
