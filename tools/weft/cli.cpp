#include "cli.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

#include "weft/topo/topology.hpp"

namespace weft::cli {

std::vector<Subcommand>& registry() {
  static std::vector<Subcommand> r;
  return r;
}

std::vector<const Subcommand*> subcommands_in_order() {
  std::vector<const Subcommand*> out;
  for (const xp::Experiment& e : xp::experiments())
    if (const Subcommand* s = find_subcommand(e.name)) out.push_back(s);
  for (const Subcommand& s : registry())
    if (xp::find_experiment(s.name) == nullptr) out.push_back(&s);
  return out;
}

const Subcommand* find_subcommand(const std::string& name) {
  for (const Subcommand& s : registry())
    if (s.name == name) return &s;
  return nullptr;
}

namespace {

std::string format_value(double v) {
  const double a = v < 0 ? -v : v;
  if (a == 0) return "0";
  if (a >= 1e9) return fmt::format("{:.3g}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 0.01) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

}  // namespace

void print_machine_header() {
  const nlohmann::json m = xp::machine_context();
  fmt::print("Machine: {}\n", m.value("cpu_model", std::string("unknown CPU")));
  fmt::print("CPUs: {} allowed ({}), {} core(s), {} package(s), SMT {}; available_parallelism {}\n",
             m["allowed_cpus"].size(), m.value("allowed_cpus_list", std::string()),
             m["cores"].get<int>(), m["packages"].get<int>(), m["smt"].get<bool>() ? "yes" : "no",
             m["available_parallelism"].get<int>());
  fmt::print("Kernel: {}; compiler: {}; weft {}; topology: {}\n", m.value("kernel", std::string("?")),
             m.value("compiler", std::string("?")), m.value("weft_version", std::string("?")),
             m.value("topology_source", std::string("?")));
  if (m.contains("topology_warning"))
    fmt::print("WARNING: {}\n", m["topology_warning"].get<std::string>());
}

void print_rows(const xp::Result& r) {
  std::size_t wv = 7;
  for (const auto& row : r.rows) wv = std::max(wv, row.variant.size());
  const bool any_threads =
      std::any_of(r.rows.begin(), r.rows.end(), [](const xp::Row& x) { return x.threads > 0; });
  std::string head = fmt::format("{:<{}}", "variant", wv);
  if (any_threads) head += fmt::format(" {:>7}", "threads");
  head += fmt::format(" {:<16} {:>10} {:>10} {:>10} {:<8} {:>4}  {}", "metric", "median", "min", "max",
                      "unit", "reps", "note");
  fmt::print("{}\n{}\n", head, std::string(head.size(), '-'));
  for (const auto& row : r.rows) {
    std::string line = fmt::format("{:<{}}", row.variant, wv);
    if (any_threads) line += row.threads > 0 ? fmt::format(" {:>7}", row.threads) : std::string(8, ' ');
    if (row.measured) {
      line += fmt::format(" {:<16} {:>10} {:>10} {:>10} {:<8} {:>4}", row.metric,
                          format_value(row.stats.median), format_value(row.stats.min),
                          format_value(row.stats.max), row.unit, row.stats.reps);
    } else {
      line += fmt::format(" {:<16} {:>10} {:>10} {:>10} {:<8} {:>4}", row.metric, "-", "-", "-", row.unit,
                          row.stats.reps);
    }
    if (!row.note.empty()) line += "  " + row.note;
    fmt::print("{}\n", line);
  }
}

void emit(const xp::Result& r, bool json, const std::string& title, const std::function<void()>& extra) {
  if (json) {
    std::cout << xp::to_json(r).dump(2) << '\n';
    return;
  }
  print_machine_header();
  fmt::print("\n{}\n", title);
  if (!r.params.empty()) {
    std::string p;
    for (auto it = r.params.begin(); it != r.params.end(); ++it) {
      if (!p.empty()) p += ", ";
      p += it.key() + "=" + (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
    }
    fmt::print("params: {}\n", p);
  }
  fmt::print("\n");
  if (!r.rows.empty()) print_rows(r);
  if (extra) extra();
  for (const auto& n : r.notes) fmt::print("note: {}\n", n);
  std::fflush(stdout);
}

void print_weft_over_tbb(const xp::Result& r, const std::function<xp::Key(xp::Key, const xp::Row&)>& qualify,
                         const std::function<std::string(const xp::Row&)>& label) {
  fmt::print("\nweft / tbb time (medians; below 1 means weft is faster):\n");
  bool any = false;
  for (const auto& row : r.rows) {
    if (row.variant != "weft" || row.metric != "ms" || !row.measured) continue;
    const auto ratio = xp::ratio(r, qualify(xp::Key("weft", "ms", row.threads), row),
                                 qualify(xp::Key("tbb", "ms", row.threads), row));
    if (!ratio) continue;
    fmt::print("  {} {:>6.2f}x\n", label(row), *ratio);
    any = true;
  }
  if (!any) fmt::print("  (no pair measured)\n");
}

void print_ratios(const xp::Result& r, const std::string& heading, int width) {
  const auto& ratios = r.extra.value("ratios", nlohmann::json::array());
  if (ratios.empty()) return;
  fmt::print("\n{}\n", heading);
  for (const auto& x : ratios) {
    const std::string goal = x.value("goal", std::string());
    fmt::print("  {:<{}} {:>7.2f}{}\n", x.at("what").get<std::string>(), width, x.at("value").get<double>(),
               goal.empty() ? "" : "   (goal " + goal + ")");
  }
}

bool print_article(const xp::Result& r, const char* by, const char* method) {
  if (r.published.is_null()) return false;
  fmt::print("\nThe article ({}):\n  method: {}\n", r.published.value(by, std::string()),
             r.published.value(method, std::string()));
  return true;
}

xp::Result label_variants(xp::Result r, std::optional<std::string> xp::Labels::*label) {
  for (auto& row : r.rows) row.variant += " [" + (row.labels.*label).value_or("") + "]";
  return r;
}

bool validate_only() {
  static const bool on = [] {
    const char* v = std::getenv("WEFT_VALIDATE_ONLY");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
}

std::int64_t positive64(const std::string& what, long long value, long long max) {
  if (value < 1) throw UsageError(fmt::format("{} must be at least 1, got {}", what, value));
  if (value > max) throw UsageError(fmt::format("{} must be at most {}, got {}", what, max, value));
  return value;
}

int positive(const std::string& what, long long value, long long max) {
  // An int result cannot carry a larger bound: such options use positive64.
  if (max > std::numeric_limits<int>::max())
    throw std::logic_error(fmt::format("{}: bound {} does not fit an int", what, max));
  return static_cast<int>(positive64(what, value, max));
}

std::vector<std::string> parse_names(const std::string& what, const std::vector<std::string>& given,
                                     const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  for (const auto& item : given) {
    std::size_t start = 0;
    while (start <= item.size()) {
      const std::size_t comma = item.find(',', start);
      const std::string name =
          item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!name.empty()) {
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
          std::string valid;
          for (const auto& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
          throw UsageError(fmt::format("unknown {} '{}' (valid: {})", what, name, valid));
        }
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (out.empty()) throw UsageError(fmt::format("no {} given", what));
  return out;
}

std::vector<int> parse_int_list(const std::string& option, const std::string& noun,
                                const std::vector<std::string>& given, long long max) {
  std::vector<int> out;
  for (const auto& item : given) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = item.find(',', start);
      const std::string tok = item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (tok.empty() && !item.empty())
        throw UsageError(fmt::format("{}: an empty {} in '{}'", option, noun, item));
      if (!tok.empty()) {
        long long v = 0;
        const auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
        if (ec != std::errc() || ptr != tok.data() + tok.size())
          throw UsageError(fmt::format("{}: '{}' is not a {}", option, tok, noun));
        const int n = positive(option, v, max);
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (!given.empty() && out.empty()) throw UsageError(fmt::format("{}: no {} given", option, noun));
  return out;
}

namespace detail {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// "--workers,-w" -> "--workers": how messages name the option.
std::string long_name(const char* flag) {
  const std::string f(flag);
  return f.substr(0, f.find(','));
}

}  // namespace

CLI::App* add_experiment(CLI::App& app, const std::string& name) {
  const xp::Experiment* e = xp::find_experiment(name);
  return app.add_subcommand(name, e != nullptr ? e->summary : std::string());
}

void add_common(CLI::App& sub, const CommonSpec& spec, CommonValues& v) {
  if (spec.counts_flag != nullptr) sub.add_option(spec.counts_flag, v.counts, spec.counts_help);
  if (spec.variants != nullptr)
    sub.add_option(spec.variant_flag, v.variants,
                   fmt::format("Variants, comma list: {} (default all)", joined(spec.variants())));
  if (spec.reps > 0) {
    v.reps = spec.reps;
    sub.add_option("--reps,-r", v.reps,
                   fmt::format("Repetitions, interleaved across variants, after one warm-up run of each (default {})",
                               spec.reps));
  }
  sub.add_flag("--json", v.json, "Print one JSON object");
}

Chosen choose(const CommonSpec& spec, const CommonValues& v) {
  Chosen c;
  c.json = v.json;
  if (spec.reps > 0) c.reps = positive("--reps", v.reps, 1000);
  if (spec.variants != nullptr && !v.variants.empty()) c.variants = parse_names("variant", v.variants, spec.variants());
  if (spec.counts_flag != nullptr) {
    const std::string flag = long_name(spec.counts_flag);
    c.counts = parse_int_list(flag, flag == "--workers" ? "worker count" : "thread count", v.counts, spec.counts_max);
  }
  return c;
}

}  // namespace detail

}  // namespace weft::cli
