// weft/xp/registry.hpp — an experiment is one registration, beside its kernel.
//
// Each experiments/X.cpp ends with
//
//   const xp::Register<FibParams> reg{{
//       .name = "fib", .page = 80, .seconds = {1, 2, 5},   // the report's plan: its order and time per size
//       .title = ..., .summary = ...,
//       .options = {xp::integer("--n", &FibParams::n, "fib(n)", 2, kFibMaxN), xp::reps(&FibParams::reps), ...},
//       .sizes = {[](FibParams& p) { p.n = 25; p.reps = 3; }, nullptr, ...},   // quick, default, full
//       .run = run_fib, .heading = ..., .print = ..., .figures = {"fib_ms"}, .headlines = {"ms"}}};
//
// and everything else is derived from it: the `weft fib` subcommand with its
// options, their checks and their --help (defaults read from the parameter
// struct's own initialisers, the one place a default is written), the
// report's plan, sizes and section, the figures the plotter draws, the
// README table's rows and results.json's "registry", and each run's
// "params" (every option's value; the experiment adds what it resolved or
// fixed: the worker counts, constants, how peers' threads were set up).
// Goals are computed by the experiment into its result (add_ratio), so a
// goal lives in one place.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "weft/xp/result.hpp"

namespace weft::xp {

// How big a run is: `weft report --quick`, the default, `--full`.
enum class Level { quick, standard, full };
inline constexpr std::array<Level, 3> kLevels{Level::quick, Level::standard, Level::full};

// "quick", "default", "full": the names results.json and the CLI use.
const char* to_string(Level level) noexcept;

// Bad input: an option out of range, a name that is not a variant, options
// that contradict each other. The CLI prints "weft: error: <what>" and exits
// with status 2.
struct BadParam : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// One option of an experiment whose parameters are a `P`.
template <class P>
struct Option {
  std::string flags;  // "--n" or "--tasks,-n" (CLI11's spelling)
  std::string help;   // what it sets; "(default ...)" is appended
  bool list = false;  // a comma list, or repeated
  std::string default_text;  // the default as --help says it; empty: show(P{})
  // Sets the member from the option's values; throws BadParam naming it.
  std::function<void(P&, const std::vector<std::string>&)> set;
  // The member as it would be given on the command line (derives the
  // sizes' arguments and the default in --help).
  std::function<std::string(const P&)> show;
  std::string type = "TEXT";  // --help's name of its value: INT, NUMBER, LIST
  // results.json records the member under `key` ("--fib-n" -> "fib_n", a
  // list of names in the plural: "--workload" -> "workloads"), typed (a
  // custom() option: the text `show` gives), unless the experiment recorded
  // that key itself (a value it resolved at run time).
  std::string key{};
  std::function<nlohmann::json(const P&)> value{};
};

namespace reg {

// "--tasks,-n" -> "--tasks": how messages name an option.
std::string long_name(std::string_view flags);
// The one value of a scalar option, or BadParam "<flag> takes one value".
const std::string& one_value(const std::string& flag, const std::vector<std::string>& values);
std::int64_t parse_integer(const std::string& flag, const std::vector<std::string>& values);
// `x`, or BadParam "<flag> must be at least <least>, got <x>" (or at most).
std::int64_t in_range(const std::string& flag, std::int64_t x, long long least, long long most);
double parse_real(const std::string& flag, const std::vector<std::string>& values);
std::vector<std::string> parse_names(const std::string& what, const std::vector<std::string>& given,
                                     const std::vector<std::string>& allowed);
std::vector<int> parse_counts(const std::string& flag, const std::string& noun,
                              const std::vector<std::string>& given, long long max);
std::string join(const std::vector<std::string>& items, const char* sep = ",");
std::string join(const std::vector<int>& items, const char* sep = ",");
std::string show_real(double v);
// An option's key in results.json's "params": "--tasks,-n" -> "tasks",
// "--fib-n" -> "fib_n"; `plural` for a list of names: "--flag" -> "flags",
// "--granularity" -> "granularities".
std::string param_key(std::string_view flags, bool plural = false);

// An option's recorded value: its member, as JSON of the member's type.
template <class P, class T>
std::function<nlohmann::json(const P&)> member_value(T P::*member) {
  return [member](const P& p) { return nlohmann::json(p.*member); };
}

}  // namespace reg

// An integer member in [least, most]. --help shows the member's initialiser
// as its default, or `default_means` where that value stands for something
// computed at run time (e.g. 0: "available_parallelism").
template <class P, class T>
  requires std::is_integral_v<T>
Option<P> integer(std::string flags, T P::*member, std::string help, long long least, long long most,
                  std::string default_means = {}) {
  const std::string name = reg::long_name(flags);
  return {std::move(flags), std::move(help), false, std::move(default_means),
          [=](P& p, const std::vector<std::string>& v) {
            p.*member = static_cast<T>(reg::in_range(name, reg::parse_integer(name, v), least, most));
          },
          [=](const P& p) { return std::to_string(p.*member); }, "INT", reg::param_key(name),
          reg::member_value(member)};
}

// A real member in (least, most] when `open_least`, else [least, most].
template <class P>
Option<P> real(std::string flags, double P::*member, std::string help, double least, double most, bool open_least,
               const char* unit = "") {
  const std::string name = reg::long_name(flags);
  return {std::move(flags), std::move(help), false, {},
          [=](P& p, const std::vector<std::string>& v) {
            const double x = reg::parse_real(name, v);
            const bool low = open_least ? !(x > least) : !(x >= least);
            if (low || x > most)
              throw BadParam(name + " must be in " + (open_least ? "(" : "[") + reg::show_real(least) + ", " +
                             reg::show_real(most) + "]" + unit + ", got " + reg::show_real(x));
            p.*member = x;
          },
          [=](const P& p) { return reg::show_real(p.*member); }, "NUMBER", reg::param_key(name),
          reg::member_value(member)};
}

// A comma list of names out of `allowed()` (repeatable), e.g. variants.
template <class P>
Option<P> names(std::string flags, std::vector<std::string> P::*member, std::string help, std::string what,
                const std::vector<std::string>& (*allowed)(), std::string default_text = "all") {
  std::string key = reg::param_key(flags, true);
  return {std::move(flags), std::move(help) + ", comma list: " + reg::join(allowed(), ", "), true,
          std::move(default_text),
          [=](P& p, const std::vector<std::string>& v) { p.*member = reg::parse_names(what, v, allowed()); },
          [=](const P& p) { return reg::join(p.*member); }, "LIST", std::move(key),
          reg::member_value(member)};
}

// A comma list of positive counts, each at most `max` (repeatable; the first
// of a repeat kept): --workers and --threads lists. The default --help shows
// is the member's initialiser; `empty_means` says what an empty one stands
// for (computed at run time, e.g. "available_parallelism").
template <class P>
Option<P> counts(std::string flags, std::vector<int> P::*member, std::string help, std::string empty_means = {},
                 long long max = 256) {
  const std::string name = reg::long_name(flags);
  const std::string noun = name == "--workers" ? "worker count" : "thread count";
  return {std::move(flags), std::move(help) + ", comma list", true, std::move(empty_means),
          [=](P& p, const std::vector<std::string>& v) { p.*member = reg::parse_counts(name, noun, v, max); },
          [=](const P& p) { return reg::join(p.*member); }, "LIST", reg::param_key(name),
          reg::member_value(member)};
}

// Any other option: `set` parses and checks the values itself. Unless the
// option is a `list`, `set` is called only with exactly one value (the
// check is made here, once for every such option).
template <class P>
Option<P> custom(std::string flags, std::string help, std::string default_text,
                 std::function<void(P&, const std::vector<std::string>&)> set,
                 std::function<std::string(const P&)> show, bool list = false) {
  if (!list) {
    set = [name = reg::long_name(flags), set = std::move(set)](P& p, const std::vector<std::string>& v) {
      reg::one_value(name, v);
      set(p, v);
    };
  }
  std::string key = reg::param_key(flags);
  auto value = [show](const P& p) { return nlohmann::json(show(p)); };
  return {std::move(flags), std::move(help), list, std::move(default_text), std::move(set), std::move(show),
          list ? "LIST" : "TEXT", std::move(key), std::move(value)};
}

// The options most experiments share.
template <class P>
Option<P> reps(int P::*member) {
  return integer("--reps,-r", member, "Repetitions, interleaved across variants, after one warm-up run of each", 1,
                 1000);
}
template <class P>
Option<P> variants(std::vector<std::string> P::*member, const std::vector<std::string>& (*allowed)(),
                   std::string flags = "--variant") {
  return names(std::move(flags), member, "Variants", "variant", allowed);
}

// The line above an experiment's rows: a fixed text (`.heading = "..."`),
// or one made from the parameters (`.heading = [](const P& p) {...}`).
template <class P>
struct Heading {
  std::function<std::string(const P&)> make{};
  Heading() = default;
  Heading(const char* text) : make([t = std::string(text)](const P&) { return t; }) {}  // NOLINT: a literal
  template <class F>
    requires std::is_invocable_r_v<std::string, const F&, const P&>
  Heading(F f) : make(std::move(f)) {}  // NOLINT: a lambda
  std::string operator()(const P& p) const { return make(p); }
};

// What an experiment is, typed on its parameters. Everything but name,
// title, summary, run and heading may be left out.
template <class P>
struct Spec {
  std::string name{};     // the subcommand: "ring"
  int page = 0;           // where on the report page (ascending)
  std::string article{};  // a key of data/published.json; empty: weft's own
  std::array<double, 3> seconds{};  // estimated run time per Level on 2 CPUs
  std::string title{};    // a heading: "Token ring: inter-thread signalling latency"
  std::string summary{};  // one line: what it measures (the subcommand's help)
  std::vector<Option<P>> options{};
  // The sizes per Level (quick, default, full), applied to P{}; null: P{}.
  std::array<std::function<void(P&)>, 3> sizes{};
  // Checks across options (after all are set); throws BadParam.
  std::function<void(const P&)> check{};
  std::function<Result(const P&)> run{};
  Heading<P> heading{};
  // The terminal's tables after the rows (the article's figures, ratios).
  std::function<void(const Result&)> print{};
  // The rows as the terminal table shows them (the JSON keeps the originals).
  std::function<Result(const Result&)> for_display{};
  // A re-executed measurement: `weft X --internal-child SPEC` runs this.
  std::function<void(const std::string&)> child{};
  // P{} adjusted for a run from the command line (e.g. the child program's path).
  std::function<void(P&)> prepare{};
  // The plotter's figure ids: a drawer of tools/plot/plot.py by its id, or
  // "bars:METRIC" for its generic bars of that metric (no drawer needed).
  std::vector<std::string> figures{};
  std::vector<std::string> headlines{};  // the metrics of the README's table
};

// An option as the CLI adds it.
struct OptionInfo {
  std::string flags;
  std::string help;  // with its default
  bool list = false;
  std::string type = "TEXT";
};

// An option given: its long name and its values.
struct Given {
  std::string flag;
  std::vector<std::string> values;
};

// A run, checked and ready.
struct Prepared {
  std::string heading;
  std::string settings;  // every option as prepared ("--n 25 --reps 3 ..."): what a test compares
  std::function<Result()> run;
};

// A registered experiment, its parameter type erased.
class Experiment {
 public:
  template <class P>
  explicit Experiment(Spec<P> s);

  const std::string& name() const noexcept { return name_; }
  int page() const noexcept { return page_; }
  const std::string& article() const noexcept { return article_; }
  const std::string& title() const noexcept { return title_; }
  const std::string& summary() const noexcept { return summary_; }
  double seconds_at(Level level) const noexcept { return seconds_[static_cast<std::size_t>(level)]; }
  const std::vector<OptionInfo>& options() const noexcept { return options_; }
  const std::vector<std::string>& figures() const noexcept { return figures_; }
  const std::vector<std::string>& headlines() const noexcept { return headlines_; }
  bool has_child() const noexcept { return static_cast<bool>(child_); }

  // The run from the defaults (a level's sizes, or nothing: the command
  // line's defaults) and the given options, checked; throws BadParam.
  Prepared prepare(std::optional<Level> level, const std::vector<Given>& given = {}) const {
    return prepare_(level, given);
  }
  // The options a level's sizes amount to ("--n 25 --reps 3"): what
  // results.json records and `weft trace --quick` passes on.
  std::string args_at(Level level) const { return args_(level); }
  void print(const Result& r) const {
    if (print_) print_(r);
  }
  Result for_display(const Result& r) const { return for_display_ ? for_display_(r) : r; }
  void run_child(const std::string& spec) const { child_(spec); }

 private:
  std::string name_, article_, title_, summary_;
  int page_ = 0;
  std::array<double, 3> seconds_{};
  std::vector<OptionInfo> options_;
  std::vector<std::string> figures_, headlines_;
  std::function<Prepared(std::optional<Level>, const std::vector<Given>&)> prepare_;
  std::function<std::string(Level)> args_;
  std::function<void(const Result&)> print_;
  std::function<Result(const Result&)> for_display_;
  std::function<void(const std::string&)> child_;
};

// Every registered experiment, in page order.
const std::vector<Experiment>& experiments();

// The entry named `name`, or null.
const Experiment* find_experiment(std::string_view name);

// `weft topo`: a command, not an experiment (no sizes, no rows), but the
// report runs it first and its page opens with the machine. Described once
// here for the subcommand, the report's plan and results.json's registry.
struct Command {
  const char* name;
  const char* title;
  const char* summary;
  double seconds;  // at every level
};
inline constexpr Command kTopo{"topo", "CPU topology", "Show the CPU topology this process may use", 0.5};

// results.json's "registry": the topology first (`weft topo`, which the
// report runs first), then every experiment: [{name, article (or null), title, summary,
// seconds: {quick, default, full}, args: {quick, default, full}, figures,
// headlines}], in page order.
nlohmann::json registry_json();

namespace reg {
void add_experiment(Experiment e);
}

// Registers at static-initialisation time: one per experiment file (the
// CLI links the experiments whole, so none is dropped).
template <class P>
struct Register {
  explicit Register(Spec<P> s) { reg::add_experiment(Experiment(std::move(s))); }
};

template <class P>
Experiment::Experiment(Spec<P> s)
    : name_(s.name),
      article_(s.article),
      title_(s.title),
      summary_(s.summary),
      page_(s.page),
      seconds_(s.seconds),
      figures_(s.figures),
      headlines_(s.headlines),
      print_(s.print),
      for_display_(s.for_display),
      child_(s.child) {
  const P defaults{};
  for (const Option<P>& o : s.options) {
    const std::string def = o.default_text.empty() ? o.show(defaults) : o.default_text;
    options_.push_back({o.flags, def.empty() ? o.help : o.help + " (default " + def + ")", o.list, o.type});
  }
  auto spec = std::make_shared<const Spec<P>>(std::move(s));
  prepare_ = [spec](std::optional<Level> level, const std::vector<Given>& given) {
    P p{};
    if (spec->prepare) spec->prepare(p);
    if (level) {
      if (const auto& size = spec->sizes[static_cast<std::size_t>(*level)]) size(p);
    }
    for (const Given& g : given) {
      const Option<P>* found = nullptr;
      for (const Option<P>& o : spec->options)
        if (reg::long_name(o.flags) == g.flag) found = &o;
      if (found == nullptr) throw BadParam(spec->name + " has no option " + g.flag);
      found->set(p, g.values);
    }
    if (spec->check) spec->check(p);
    std::string settings;
    for (const Option<P>& o : spec->options) {
      if (!settings.empty()) settings += ' ';
      settings += reg::long_name(o.flags) + ' ' + o.show(p);
    }
    return Prepared{spec->heading(p), std::move(settings), [spec, p] {
                      Result r = spec->run(p);
                      for (const Option<P>& o : spec->options)
                        if (o.value && !r.params.contains(o.key)) r.params[o.key] = o.value(p);
                      return r;
                    }};
  };
  args_ = [spec](Level level) {
    const P plain{};
    P sized{};
    if (const auto& size = spec->sizes[static_cast<std::size_t>(level)]) size(sized);
    std::string out;
    for (const Option<P>& o : spec->options) {
      const std::string v = o.show(sized);
      if (v == o.show(plain)) continue;
      if (!out.empty()) out += ' ';
      out += reg::long_name(o.flags);
      out += ' ';
      out += v;
    }
    return out;
  };
}

}  // namespace weft::xp
