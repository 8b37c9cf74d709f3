// weft smt — threads, affinity and hyperthreading (Bendersky 2016: affinity and hyperthreading): a plain sum
// and a sum of sines on one thread, on two cores, on two SMT siblings and
// time-sliced on one CPU.
#include <fmt/format.h>

#include "cli.hpp"
#include "weft/xp/smt.hpp"

namespace weft::cli {
namespace {

// Per workload: median ms per thread, [slowdown against single], with the
// article's figures under it.
void print_published(const xp::Result& r) {
  fmt::print("\nThis run, median ms per thread [slowdown vs single]:\n{:<9}", "workload");
  for (const auto& v : xp::smt_variants()) fmt::print(" {:>17}", v);
  fmt::print("\n");
  for (const auto& w : xp::smt_workloads()) {
    fmt::print("{:<9}", w);
    for (const auto& v : xp::smt_variants()) {
      const auto ms = xp::median(r, xp::Key(v, "ms").workload(w));
      const auto sd = xp::median(r, xp::Key(v, "slowdown").workload(w));
      std::string cell = "not measured";
      if (ms) {
        cell = fmt::format("{:.0f}", *ms);
        if (sd) cell += fmt::format(" [{:.2f}x]", *sd);
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

struct SmtOptions {
  long long size = 100'000'000;
};

void to_params(const SmtOptions& o, xp::SmtParams& p) {
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
}

constexpr const char* kTitle = "Sum and sin over a float array per thread: ms per thread and slowdown vs one thread";

void add_options(CLI::App& sub, SmtOptions& o) {
  sub.add_option("--size,-n", o.size, "Floats per thread (default 100000000, as the article)");
}

xp::Result by_workload(const xp::Result& r) { return label_variants(r, &xp::Labels::workload); }

const Register reg{make_experiment<SmtOptions, xp::SmtParams>(
    {"smt", {.reps = 3}, add_options, to_params, xp::run_smt, fixed<xp::SmtParams>(kTitle), print_published,
     nullptr, by_workload})};

}  // namespace
}  // namespace weft::cli
