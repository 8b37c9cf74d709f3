// weft smt — threads, affinity and hyperthreading (Bendersky 2016: affinity and hyperthreading): a plain sum
// and a sum of sines on one thread, on two cores, on two SMT siblings and
// time-sliced on one CPU.
#include <fmt/format.h>

#include <memory>

#include "cli.hpp"
#include "weft/xp/smt.hpp"

namespace weft::cli {
namespace {

const xp::Row* find_row(const xp::Result& r, const std::string& variant, const std::string& workload,
                        const std::string& metric) {
  for (const auto& row : r.rows)
    if (row.variant == variant && row.metric == metric && row.extra.value("workload", std::string()) == workload)
      return &row;
  return nullptr;
}

// Per workload: median ms per thread, [slowdown against single], with the
// article's figures under it.
void print_published(const xp::Result& r) {
  fmt::print("\nThis run, median ms per thread [slowdown vs single]:\n{:<9}", "workload");
  for (const auto& v : xp::smt_variants()) fmt::print(" {:>17}", v);
  fmt::print("\n");
  for (const auto& w : xp::smt_workloads()) {
    fmt::print("{:<9}", w);
    for (const auto& v : xp::smt_variants()) {
      const xp::Row* ms = find_row(r, v, w, "ms");
      const xp::Row* sd = find_row(r, v, w, "slowdown");
      std::string cell = "not measured";
      if (ms != nullptr && ms->measured) {
        cell = fmt::format("{:.0f}", ms->stats.median);
        if (sd != nullptr && sd->measured) cell += fmt::format(" [{:.2f}x]", sd->stats.median);
      }
      fmt::print(" {:>17}", cell);
    }
    fmt::print("\n");
  }
  const auto& pub = r.published;
  if (pub.is_null()) return;
  fmt::print("\nThe article ({}; 10^8 floats per thread):\n", pub.value("machine", std::string()));
  fmt::print("{:<9} {:>17} {:>17} {:>17} {:>17}\n", "workload", "single", "two-cores", "smt-siblings", "same-cpu");
  fmt::print("{:<9} {:>17} {:>17} {:>17} {:>17}\n", "sum", "-", "unchanged", "unchanged", "-");
  fmt::print("{:<9} {:>17} {:>17} {:>17} {:>17}\n", "sin", "540", "unchanged", "> 1.75x each", "-");
  for (const auto& c : pub.value("claims", nlohmann::json::array())) fmt::print("  - {}\n", c.get<std::string>());
  const long long size = r.params.value("size", 0LL);
  if (size != 100'000'000)
    fmt::print("  (this run: {} floats per thread; scale the article's ms by {:.2g})\n", size,
               static_cast<double>(size) / 1e8);
}

// The generic table shows no workload column: name it beside the variant.
xp::Result for_display(xp::Result r) {
  for (auto& row : r.rows) row.variant += " [" + row.extra.value("workload", std::string()) + "]";
  return r;
}

struct SmtOptions {
  Common common;
  long long size = 100'000'000;
  long long reps = 3;
};

xp::SmtParams to_params(const SmtOptions& o) {
  xp::SmtParams p;
  // The cap only keeps the byte count below overflow; memory decides below.
  constexpr long long kMaxSize = 1LL << 40;
  if (o.size < 1) throw UsageError(fmt::format("--size must be at least 1, got {}", o.size));
  if (o.size > kMaxSize) throw UsageError(fmt::format("--size must be at most {}, got {}", kMaxSize, o.size));
  const std::uint64_t need = xp::smt_bytes_needed(o.size);
  const std::uint64_t have = xp::physical_memory_bytes();
  if (have != 0 && need > have) {
    throw UsageError(fmt::format("--size {} needs {:.1f} GiB (two arrays of {} floats), the machine has {:.1f} GiB",
                                 o.size, static_cast<double>(need) / (1 << 30), o.size,
                                 static_cast<double>(have) / (1 << 30)));
  }
  p.size = o.size;
  p.reps = positive("--reps", o.reps, 1000);
  return p;
}

constexpr const char* kTitle = "Sum and sin over a float array per thread: ms per thread and slowdown vs one thread";

const Register reg{{
    "smt",
    [](CLI::App& app) {
      auto o = std::make_shared<SmtOptions>();
      auto* sub = app.add_subcommand("smt", "Threads on cores, on SMT siblings and on one CPU (Bendersky 2016: affinity and hyperthreading)");
      sub->add_option("--size,-n", o->size, "Floats per thread (default 100000000, as the article)");
      sub->add_option("--reps,-r", o->reps, "Repetitions, interleaved across variants (default 3)");
      sub->add_flag("--json", o->common.json, "Print one JSON object");
      sub->callback([o] {
        const xp::SmtParams p = to_params(*o);
        if (validate_only()) return;
        const xp::Result r = xp::run_smt(p);
        emit(o->common.json ? r : for_display(r), o->common, kTitle, [&] { print_published(r); });
      });
    },
    [](bool quick) {
      xp::SmtParams p;
      p.size = quick ? 10'000'000 : 50'000'000;
      p.reps = 3;
      return xp::run_smt(p);
    },
    kTitle,
    print_published,
}};

}  // namespace
}  // namespace weft::cli
