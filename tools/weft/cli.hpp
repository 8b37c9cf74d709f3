// The CLI's shared pieces: how a subcommand registers, the options every
// experiment shares, how results print (human table or one JSON object), and
// how bad input is reported.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "weft/xp/registry.hpp"
#include "weft/xp/result.hpp"

namespace weft::cli {

// Bad input found after parsing (a CPU that does not exist, a size out of
// range): main() prints "weft: error: <what>" and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Prints a result: one JSON object on stdout with --json; otherwise the
// machine context, the parameters, the rows as a table, then `extra`
// (an experiment's own table, e.g. the article's figures) and the notes.
void emit(const xp::Result& r, bool json, const std::string& title, const std::function<void()>& extra = {});

// The machine context as google/benchmark prints it, first thing.
void print_machine_header();
// A generic table of a result's rows.
void print_rows(const xp::Result& r);

// "weft / tbb time" for each measured weft "ms" row that has a tbb row of
// the same thread count and qualifiers (`qualify` adds the row's to a key);
// `label` names the pair.
void print_weft_over_tbb(const xp::Result& r, const std::function<xp::Key(xp::Key, const xp::Row&)>& qualify,
                         const std::function<std::string(const xp::Row&)>& label);

// An experiment's "ratios" list (extra.ratios: what, value, goal) under
// `heading`, names padded to `width`.
void print_ratios(const xp::Result& r, const std::string& heading, int width);

// "The article (<source>): method: <method>" from the result's published
// figures (`by` and `method` name their keys); false when it has none.
bool print_article(const xp::Result& r, const char* by, const char* method);

// The rows with a label written beside the variant ("busy [fine]"): the
// generic table has no column for it.
xp::Result label_variants(xp::Result r, std::optional<std::string> xp::Labels::*label);

// A registered subcommand: `add` creates it under the root app; `run` runs
// it for `weft report` with the arguments given (the registry's sizes for a
// level), parsed and checked as on the command line, and returns its result.
struct Subcommand {
  std::string name;
  std::function<void(CLI::App&)> add;
  std::function<xp::Result(const std::string& args)> run;       // null: not an experiment
  std::function<std::string(const std::string& args)> heading;  // the table's heading for those
  std::function<void(const xp::Result&)> print_extra;           // e.g. the article's figures
};
std::vector<Subcommand>& registry();

// The registered subcommands, the experiments in the registry's (page)
// order first, then the others (report).
std::vector<const Subcommand*> subcommands_in_order();
const Subcommand* find_subcommand(const std::string& name);

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
// also be repeated), keeping the first of any repeat, in the order given:
// every --workers and --threads list. Throws UsageError naming `option` and
// calling one item a `noun` ("'x' is not a thread count"), also for an empty
// item ("1,,2"). Nothing given: an empty list, for the caller's default.
std::vector<int> parse_int_list(const std::string& option, const std::string& noun,
                                const std::vector<std::string>& given, long long max);

// The options most experiments share, and which of them a subcommand has.
struct CommonSpec {
  int reps = 0;                             // --reps,-r default; 0: none
  const std::vector<std::string>& (*variants)() = nullptr;  // the allowed --variant names; null: none
  const char* variant_flag = "--variant";
  const char* counts_flag = nullptr;        // "--workers,-w" or "--threads,-t"; null: none
  const char* counts_help = "";
  long long counts_max = 256;
};

// --reps, --variant and a --workers list: the pool experiments' set.
constexpr CommonSpec with_workers(int reps, const std::vector<std::string>& (*variants)(), const char* help) {
  return {reps, variants, "--variant", "--workers,-w", help, 256};
}
// --reps and a --threads list.
constexpr CommonSpec with_threads(int reps, const char* help) { return {reps, nullptr, "--variant", "--threads,-t", help, 256}; }

// What the common options gave, validated.
struct Chosen {
  bool json = false;
  int reps = 0;
  std::vector<std::string> variants;  // empty: the experiment's default (all)
  std::vector<int> counts;            // empty: the experiment's default
};

// Copies the chosen common options into the parameters that have them
// (reps, variants, workers or threads), keeping the defaults where none
// was given.
template <class Params>
void apply(const Chosen& c, Params& p) {
  if constexpr (requires { p.reps; })
    if (c.reps > 0) p.reps = c.reps;
  if constexpr (requires { p.variants; })
    if (!c.variants.empty()) p.variants = c.variants;
  if constexpr (requires { p.workers.push_back(0); })
    if (!c.counts.empty()) p.workers = c.counts;
  if constexpr (requires { p.threads.push_back(0); })
    if (!c.counts.empty()) p.threads = c.counts;
}

// A heading that does not depend on the parameters.
template <class Params>
std::function<std::string(const Params&)> fixed(const char* heading) {
  return [heading](const Params&) { return std::string(heading); };
}

namespace detail {

struct CommonValues {
  bool json = false;
  int reps = 0;
  std::vector<std::string> variants;
  std::vector<std::string> counts;
};

// Adds the subcommand, its help from the experiment registry.
CLI::App* add_experiment(CLI::App& app, const std::string& name);
// Adds the common options of `spec`, after the experiment's own.
void add_common(CLI::App& sub, const CommonSpec& spec, CommonValues& v);
Chosen choose(const CommonSpec& spec, const CommonValues& v);

}  // namespace detail

// One experiment subcommand: what is particular to it. The common options,
// validate-only, --json and the report's entry come from make_experiment().
template <class Options, class Params>
struct Experiment {
  std::string name{};
  CommonSpec common{};
  std::function<void(CLI::App&, Options&)> options{};        // its own options
  std::function<void(const Options&, Params&)> parse{};      // its own options into p; throws UsageError
  std::function<xp::Result(const Params&)> run{};
  std::function<std::string(const Params&)> heading{};
  std::function<void(const xp::Result&)> print_extra{};
  // An internal child run (a re-executed measurement): true when handled.
  std::function<bool(const Options&)> child{};
  // The rows as the table shows them (the JSON keeps the originals).
  std::function<xp::Result(const xp::Result&)> for_display{};
};

namespace detail {

// An experiment subcommand's parsed state: its own options and the common ones.
template <class Options>
struct State {
  Options options{};
  CommonValues common{};
};

template <class Options, class Params>
CLI::App* add_state(CLI::App& app, const Experiment<Options, Params>& e, State<Options>& st) {
  CLI::App* sub = add_experiment(app, e.name);
  if (e.options) e.options(*sub, st.options);
  add_common(*sub, e.common, st.common);
  return sub;
}

template <class Options, class Params>
Params params_of(const Experiment<Options, Params>& e, const State<Options>& st, Chosen& chosen) {
  chosen = choose(e.common, st.common);
  Params p;
  apply(chosen, p);
  e.parse(st.options, p);
  return p;
}

// The parameters `args` give, parsed by a fresh copy of the subcommand.
template <class Options, class Params>
Params params_from(const Experiment<Options, Params>& e, const std::string& args) {
  CLI::App app;
  State<Options> st;
  add_state(app, e, st);
  app.parse(e.name + " " + args, false);
  Chosen chosen;
  return params_of(e, st, chosen);
}

}  // namespace detail

template <class Options, class Params>
Subcommand make_experiment(Experiment<Options, Params> e) {
  auto shared = std::make_shared<const Experiment<Options, Params>>(std::move(e));
  Subcommand s;
  s.name = shared->name;
  s.add = [shared](CLI::App& app) {
    auto st = std::make_shared<detail::State<Options>>();
    CLI::App* sub = detail::add_state(app, *shared, *st);
    sub->callback([shared, st] {
      if (shared->child && shared->child(st->options)) return;
      Chosen chosen;
      const Params p = detail::params_of(*shared, *st, chosen);
      if (validate_only()) return;
      const xp::Result r = shared->run(p);
      const auto extra = [&] {
        if (shared->print_extra) shared->print_extra(r);
      };
      emit(chosen.json || !shared->for_display ? r : shared->for_display(r), chosen.json, shared->heading(p), extra);
    });
  };
  s.run = [shared](const std::string& args) { return shared->run(detail::params_from(*shared, args)); };
  s.heading = [shared](const std::string& args) { return shared->heading(detail::params_from(*shared, args)); };
  s.print_extra = shared->print_extra;
  return s;
}

}  // namespace weft::cli
