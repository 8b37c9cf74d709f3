// weft alloc — the global allocator as hidden synchronisation (Derevyago, the ders library):
// the article's list benchmark and a producer/consumer run per allocator.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli.hpp"
#include "weft/xp/alloc.hpp"

namespace weft::cli {
namespace {

// The hidden option that turns `weft alloc` into one child measurement.
constexpr const char* kChildOption = "--internal-child";

const xp::Row* find_row(const xp::Result& r, const std::string& variant, int threads, const std::string& metric) {
  for (const auto& row : r.rows)
    if (row.variant == variant && row.threads == threads && row.metric == metric && row.measured) return &row;
  return nullptr;
}

// The list benchmark again, variant by thread count, with three significant
// digits (the generic table rounds sub-0.1 s times to two decimals).
void print_list_summary(const xp::Result& r) {
  const auto threads = r.params.value("threads", std::vector<int>{});
  const auto variants = r.params.value("variants", std::vector<std::string>{});
  if (threads.empty() || variants.empty()) return;
  fmt::print("\nList benchmark, median ms per run [t(N)/t(1)/N]:\n{:<11}", "variant");
  for (int n : threads) fmt::print(" {:>16}", fmt::format("{} thread{}", n, n == 1 ? "" : "s"));
  fmt::print("\n");
  for (const auto& v : variants) {
    fmt::print("{:<11}", v);
    for (int n : threads) {
      const xp::Row* s = find_row(r, v, n, "seconds");
      const xp::Row* k = find_row(r, v, n, "scalability");
      const double ms = s ? s->stats.median * 1e3 : 0;
      std::string cell = s == nullptr ? "-" : ms >= 100 ? fmt::format("{:.0f}", ms) : fmt::format("{:.3g}", ms);
      if (k != nullptr) cell += fmt::format(" [{:.2f}]", k->stats.median);
      fmt::print(" {:>16}", cell);
    }
    fmt::print("\n");
  }
}

void print_published(const xp::Result& r) {
  print_list_summary(r);
  const auto& ratios = r.extra.value("ratios", nlohmann::json::array());
  if (!ratios.empty()) {
    fmt::print("\nRatios from this run (medians):\n");
    for (const auto& x : ratios) {
      const std::string goal = x.value("goal", std::string());
      fmt::print("  {:<58} {:>7.2f}{}\n", x.at("what").get<std::string>(), x.at("value").get<double>(),
                 goal.empty() ? "" : "   (goal " + goal + ")");
    }
  }
  const auto& pub = r.published;
  if (pub.is_null()) return;
  fmt::print("\nThe article ({}):\n  method: {}\n", pub.value("source", std::string()),
             pub.value("method_alloc", std::string()));
  fmt::print("  std::allocator time / ders time, per machine:\n");
  for (auto it = pub["alloc_speedup_std_over_ders"].begin(); it != pub["alloc_speedup_std_over_ders"].end(); ++it)
    fmt::print("    {:<24} {}\n", it.key(), it.value().get<std::string>());
  fmt::print("  scalability t(N)/t(1)/N:\n");
  for (auto it = pub["scalability"].begin(); it != pub["scalability"].end(); ++it)
    fmt::print("    {:<24} {}\n", it.key(), it.value().get<std::string>());
}

struct AllocOptions {
  Common common;
  long long rounds = 1000;
  long long size = 10'000;
  std::vector<std::string> threads;
  long long reps = 3;
  long long pc_objects = 1'000'000;
  std::string child_spec;
};

std::vector<std::string> child_command() { return {"/proc/self/exe", "alloc", kChildOption}; }

xp::AllocParams to_params(const AllocOptions& o) {
  xp::AllocParams p;
  p.rounds = positive("--rounds", o.rounds, 1'000'000);
  p.size = positive("--size", o.size, 10'000'000);
  p.threads = parse_int_list("--threads", "thread count", o.threads, 256);
  std::sort(p.threads.begin(), p.threads.end());
  p.reps = positive("--reps", o.reps, 1000);
  p.pc_objects = positive("--pc-objects", o.pc_objects, 1'000'000'000);
  const std::vector<int> t = p.threads.empty() ? xp::default_alloc_threads() : p.threads;
  // Every thread holds `size` list nodes (~32 bytes each) at its peak.
  constexpr long long kMaxNodes = 100'000'000;
  if (static_cast<long long>(p.size) * t.back() > kMaxNodes)
    throw UsageError(fmt::format("--size {} x {} threads is more than {} live list nodes (memory)", p.size,
                                 t.back(), kMaxNodes));
  p.child_command = child_command();
  return p;
}

constexpr const char* kTitle = "List benchmark (seconds, scalability t(N)/t(1)/N, peak RSS) and producer/consumer";

const Register reg{{
    "alloc",
    [](CLI::App& app) {
      auto o = std::make_shared<AllocOptions>();
      auto* sub = app.add_subcommand("alloc", "Allocators under threads: the article's list benchmark (Derevyago, the ders library)");
      sub->add_option("--rounds", o->rounds, "Rounds per thread (default 1000)");
      sub->add_option("--size", o->size, "Ints pushed and popped per round (default 10000)");
      sub->add_option("--threads,-t", o->threads,
                      "Thread counts, comma list (default 1,2,4 and available_parallelism)");
      sub->add_option("--reps,-r", o->reps, "Repetitions, interleaved across variants (default 3)");
      sub->add_option("--pc-objects", o->pc_objects, "Objects through the producer/consumer queue (default 1e6)");
      sub->add_flag("--json", o->common.json, "Print one JSON object");
      // Internal: the parent re-executes weft with this to run one measurement.
      sub->add_option(kChildOption, o->child_spec)->group("");
      sub->callback([o] {
        if (!o->child_spec.empty()) {
          try {
            std::cout << xp::run_alloc_child(o->child_spec) << std::endl;
          } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
          }
          return;
        }
        const xp::AllocParams p = to_params(*o);
        if (validate_only()) return;
        const xp::Result r = xp::run_alloc(p);
        emit(r, o->common, kTitle, [&] { print_published(r); });
      });
    },
    [](bool quick) {
      xp::AllocParams p;
      p.rounds = quick ? 100 : 300;
      p.threads = {1, 2};
      p.reps = quick ? 2 : 3;
      p.pc_objects = quick ? 300'000 : 500'000;
      p.child_command = child_command();
      return xp::run_alloc(p);
    },
    kTitle,
    print_published,
}};

}  // namespace
}  // namespace weft::cli
