// weft alloc — the global allocator as hidden synchronisation (Derevyago, the ders library):
// the article's list benchmark and a producer/consumer run per allocator.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli.hpp"
#include "weft/xp/alloc.hpp"

namespace weft::cli {
namespace {

// The hidden option that turns `weft alloc` into one child measurement.
constexpr const char* kChildOption = "--internal-child";

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
      const auto s = xp::median(r, xp::Key(v, "seconds", n));
      const auto k = xp::median(r, xp::Key(v, "scalability", n));
      const double ms = s.value_or(0) * 1e3;
      std::string cell = !s ? "-" : ms >= 100 ? fmt::format("{:.0f}", ms) : fmt::format("{:.3g}", ms);
      if (k) cell += fmt::format(" [{:.2f}]", *k);
      fmt::print(" {:>16}", cell);
    }
    fmt::print("\n");
  }
}

void print_published(const xp::Result& r) {
  print_list_summary(r);
  print_ratios(r, "Ratios from this run (medians):", 58);
  if (!print_article(r, "source", "method_alloc")) return;
  const auto& pub = r.published;
  fmt::print("  std::allocator time / ders time, per machine:\n");
  for (auto it = pub["alloc_speedup_std_over_ders"].begin(); it != pub["alloc_speedup_std_over_ders"].end(); ++it)
    fmt::print("    {:<24} {}\n", it.key(), it.value().get<std::string>());
  fmt::print("  scalability t(N)/t(1)/N:\n");
  for (auto it = pub["scalability"].begin(); it != pub["scalability"].end(); ++it)
    fmt::print("    {:<24} {}\n", it.key(), it.value().get<std::string>());
}

struct AllocOptions {
  long long rounds = 1000;
  long long size = 10'000;
  long long pc_objects = 1'000'000;
  std::string child_spec;
};

std::vector<std::string> child_command() { return {"/proc/self/exe", "alloc", kChildOption}; }

void to_params(const AllocOptions& o, xp::AllocParams& p) {
  p.rounds = positive("--rounds", o.rounds, 1'000'000);
  p.size = positive("--size", o.size, 10'000'000);
  std::sort(p.threads.begin(), p.threads.end());
  p.pc_objects = positive("--pc-objects", o.pc_objects, 1'000'000'000);
  const std::vector<int> t = p.threads.empty() ? xp::default_alloc_threads() : p.threads;
  // Every thread holds `size` list nodes (~32 bytes each) at its peak.
  constexpr long long kMaxNodes = 100'000'000;
  if (static_cast<long long>(p.size) * t.back() > kMaxNodes)
    throw UsageError(fmt::format("--size {} x {} threads is more than {} live list nodes (memory)", p.size,
                                 t.back(), kMaxNodes));
  p.child_command = child_command();
}

void add_options(CLI::App& sub, AllocOptions& o) {
  sub.add_option("--rounds", o.rounds, "Rounds per thread (default 1000)");
  sub.add_option("--size", o.size, "Ints pushed and popped per round (default 10000)");
  sub.add_option("--pc-objects", o.pc_objects, "Objects through the producer/consumer queue (default 1e6)");
  // Internal: the parent re-executes weft with this to run one measurement.
  sub.add_option(kChildOption, o.child_spec)->group("");
}

bool run_child(const AllocOptions& o) {
  if (o.child_spec.empty()) return false;
  try {
    std::cout << xp::run_alloc_child(o.child_spec) << std::endl;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return true;
}

constexpr const char* kTitle = "List benchmark (seconds, scalability t(N)/t(1)/N, peak RSS) and producer/consumer";

const Register reg{make_experiment<AllocOptions, xp::AllocParams>(
    {"alloc", with_threads(3, "Thread counts, comma list (default 1,2,4 and available_parallelism)"), add_options, to_params, xp::run_alloc, fixed<xp::AllocParams>(kTitle), print_published,
     run_child})};

}  // namespace
}  // namespace weft::cli
