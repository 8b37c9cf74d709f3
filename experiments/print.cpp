#include "weft/xp/print.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace weft::xp {

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
  const nlohmann::json m = machine_context();
  fmt::print("Machine: {}\n", m.value("cpu_model", std::string("unknown CPU")));
  fmt::print("CPUs: {} allowed ({}), {} core(s), {} package(s), SMT {}; available_parallelism {}\n",
             m["allowed_cpus"].size(), m.value("allowed_cpus_list", std::string()),
             m["cores"].get<int>(), m["packages"].get<int>(), m["smt"].get<bool>() ? "yes" : "no",
             m["available_parallelism"].get<int>());
  fmt::print("Kernel: {}; compiler: {}; weft {}; topology: {}; pool push fences: {}\n",
             m.value("kernel", std::string("?")), m.value("compiler", std::string("?")),
             m.value("weft_version", std::string("?")), m.value("topology_source", std::string("?")),
             m.value("push_fences", std::string("?")));
  if (m.contains("topology_warning"))
    fmt::print("WARNING: {}\n", m["topology_warning"].get<std::string>());
}

void print_rows(const Result& r) {
  std::size_t wv = 7;
  for (const auto& row : r.rows) wv = std::max(wv, row.variant.size());
  const bool any_threads =
      std::any_of(r.rows.begin(), r.rows.end(), [](const Row& x) { return x.threads > 0; });
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

void emit(const Result& r, bool json, const std::string& title, const std::function<void()>& extra) {
  if (json) {
    std::cout << to_json(r).dump(2) << '\n';
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

void print_weft_over_tbb(const Result& r, const std::function<Key(Key, const Row&)>& qualify,
                         const std::function<std::string(const Row&)>& label) {
  fmt::print("\nweft / tbb time (medians; below 1 means weft is faster):\n");
  bool any = false;
  for (const auto& row : r.rows) {
    if (row.variant != "weft" || row.metric != "ms" || !row.measured) continue;
    const auto q = xp::ratio(r, qualify(Key("weft", "ms", row.threads), row),
                                 qualify(Key("tbb", "ms", row.threads), row));
    if (!q) continue;
    fmt::print("  {} {:>6.2f}x\n", label(row), *q);
    any = true;
  }
  if (!any) fmt::print("  (no pair measured)\n");
}

void print_weft_over_tbb_per_workload(const Result& r, int width, const char* noun) {
  print_weft_over_tbb(
      r, [](Key k, const Row& row) { return k.workload(row.labels.workload.value_or("")); },
      [&](const Row& row) {
        return fmt::format("{:<{}} {} {}", row.labels.workload.value_or(""), width, row.threads, noun);
      });
}

void print_ratios(const Result& r, const std::string& heading, int width) {
  const auto& ratios = r.extra.value("ratios", nlohmann::json::array());
  if (ratios.empty()) return;
  fmt::print("\n{}\n", heading);
  for (const auto& x : ratios) {
    const std::string goal = x.value("goal", std::string());
    fmt::print("  {:<{}} {:>7.2f}{}\n", x.at("what").get<std::string>(), width, x.at("value").get<double>(),
               goal.empty() ? "" : "   (goal " + goal + ")");
  }
}

void print_goals(const Result& r, int width) {
  print_ratios(r, fmt::format("Goals (at {} workers):", kGoalWorkers), width);
}

bool print_article(const Result& r, const char* by, const char* method) {
  if (r.published.is_null()) return false;
  fmt::print("\nThe article ({}):\n  method: {}\n", r.published.value(by, std::string()),
             r.published.value(method, std::string()));
  return true;
}

Result label_variants(Result r, std::optional<std::string> Labels::*label) {
  for (auto& row : r.rows) row.variant += " [" + (row.labels.*label).value_or("") + "]";
  return r;
}

}  // namespace weft::xp
