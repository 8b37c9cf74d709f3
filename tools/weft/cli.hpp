// The CLI's shared pieces: how a subcommand registers, and how bad input is
// reported. The experiments' subcommands are not written here: each is
// derived from the experiment's registration (weft/xp/registry.hpp) by
// experiments.cpp; the files here are the commands that are not experiments
// (topo, trace, report).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"
#include "weft/xp/result.hpp"

namespace weft::cli {

// Bad input found after parsing (a CPU that does not exist, a size out of
// range): main() prints "weft: error: <what>" and exits with status 2.
using UsageError = xp::BadParam;

using xp::emit;
using xp::print_machine_header;
using xp::print_rows;

// A subcommand that is not an experiment. add_subcommands() creates it under
// the root app from `name` and `summary`, so the name the registry lists is
// the one the CLI parses; `add` then gives it its options and callback.
struct Subcommand {
  std::string name;
  std::string summary;
  std::function<void(CLI::App& sub)> add;
};
std::vector<Subcommand>& registry();

// Every subcommand: the experiments in page order, then topo, trace, report...
// as registered. `add` adds them all to `app`; `names` lists them.
void add_subcommands(CLI::App& app);
std::vector<std::string> subcommand_names();

// Registers at static-initialisation time: one per command file.
struct Register {
  explicit Register(Subcommand s) { registry().push_back(std::move(s)); }
};

// True when WEFT_VALIDATE_ONLY=1 (read once): subcommands parse and validate
// their options, then return (exit 0) without running anything, so that
// tests can throw thousands of argument vectors at the parser cheaply.
bool validate_only();

// A comma list of names checked against the allowed ones (UsageError naming
// the unknown one and listing the valid ones).
using xp::reg::parse_names;

}  // namespace weft::cli
