// The CLI's shared pieces: how a subcommand registers, how results print
// (human table or one JSON object), and how bad input is reported.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::cli {

// Bad input found after parsing (a CPU that does not exist, a size out of
// range): main() prints "weft: error: <what>" and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Options every experiment subcommand has.
struct Common {
  bool json = false;
};

// Prints a result: one JSON object on stdout with --json; otherwise the
// machine context, the parameters, the rows as a table, then `extra`
// (an experiment's own table, e.g. the article's figures) and the notes.
void emit(const xp::Result& r, const Common& common, const std::string& title,
          const std::function<void()>& extra = {});

// The machine context as google/benchmark prints it, first thing.
void print_machine_header();
// A generic table of a result's rows.
void print_rows(const xp::Result& r);

// A registered subcommand: `add` creates it under the root app; `run_default`
// runs it with default parameters for `weft report` and returns its result.
struct Subcommand {
  std::string name;
  std::function<void(CLI::App&)> add;
  std::function<xp::Result(bool quick)> run_default;  // null: not an experiment
  std::string title;                                   // the table's heading
  std::function<void(const xp::Result&)> print_extra;  // e.g. the article's figures
};
std::vector<Subcommand>& registry();

// Registers at static-initialisation time: one per subcommand file.
struct Register {
  explicit Register(Subcommand s) { registry().push_back(std::move(s)); }
};

// True when WEFT_VALIDATE_ONLY=1 (read once): subcommands parse and validate
// their options, then return (exit 0) without running anything, so that
// tests can throw thousands of argument vectors at the parser cheaply.
bool validate_only();

// Validators shared by the subcommands.
int positive(const std::string& what, long long value, long long max);
// The same for options whose bound exceeds an int.
std::int64_t positive64(const std::string& what, long long value, long long max);
// Parses a comma list of names against the allowed ones; throws UsageError
// naming the unknown one and listing the valid ones.
std::vector<std::string> parse_names(const std::string& what, const std::vector<std::string>& given,
                                     const std::vector<std::string>& allowed);
// Parses comma lists of positive integers, each at most `max` (the option may
// also be repeated), keeping the first of any repeat, in the order given.
// Throws UsageError naming `option` and calling one item a `noun` ("'x' is
// not a thread count"). Nothing given: an empty list, for the caller's default.
std::vector<int> parse_int_list(const std::string& option, const std::string& noun,
                                const std::vector<std::string>& given, long long max);

}  // namespace weft::cli
