// weft ring — token-ring signalling latency per flag variant.
#include <fmt/format.h>

#include <memory>

#include "cli.hpp"
#include "weft/xp/ring.hpp"

namespace weft::cli {
namespace {

void print_published(const xp::Result& r) {
  const int threads = r.params.value("threads", 0);
  const auto& pub = r.published;
  if (pub.is_null()) return;
  fmt::print("\nThe article ({}), ns per hop:\n", pub.value("machine", std::string()));
  fmt::print("{:>7} {:>10} {:>10} {:>10}\n", "threads", "condvar", "seq_cst", "release");
  for (const auto& row : pub["ns_per_hop"]) {
    const int t = row[0].get<int>();
    fmt::print("{:>7} {:>10} {:>10} {:>10}{}\n", t, row[1].get<double>(), row[2].get<double>(),
               row[3].get<double>(), t == threads ? "   <- this run's thread count" : "");
  }
}

struct RingOptions {
  int threads = 2;
  std::vector<std::string> flags;
  long long hops = 0;
  std::string placement = "none";
  double time_limit = 5.0;
};

void to_params(const RingOptions& o, xp::RingParams& p) {
  p.threads = positive("--threads", o.threads, 256);
  if (o.threads < 2) throw UsageError("--threads must be at least 2 (a ring needs two threads)");
  p.flags = o.flags.empty() ? xp::ring_flags() : parse_names("flag", o.flags, xp::ring_flags());
  if (o.hops != 0) p.hops = positive64("--hops", o.hops, 1'000'000'000'000LL);
  if (o.hops < 0) throw UsageError(fmt::format("--hops must be at least 1, got {}", o.hops));
  try {
    p.placement = parse_placement(o.placement);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (p.placement == Placement::one_per_core &&
      p.threads > static_cast<int>(Topology::instance().cores().size())) {
    throw UsageError(fmt::format("--placement one_per_core needs {} cores, only {} allowed", p.threads,
                                 Topology::instance().cores().size()));
  }
  if (!(o.time_limit > 0) || o.time_limit > 3600)
    throw UsageError(fmt::format("--time-limit must be in (0, 3600] seconds, got {}", o.time_limit));
  p.time_limit_s = o.time_limit;
}

void add_options(CLI::App& sub, RingOptions& o) {
  sub.add_option("--threads,-t", o.threads, "Threads in the ring (default 2)");
  sub.add_option("--flag,-f", o.flags,
                 "Flags to measure, comma list: condvar, seq_cst, release, pause, atomic_wait, futex, weft "
                 "(default all)");
  sub.add_option("--hops", o.hops, "Hops per run (default 5e5 spinning and weft, 5e4 sleeping flags)");
  sub.add_option("--placement", o.placement, "none, compact, spread, one_per_core, numa (default none)");
  sub.add_option("--time-limit", o.time_limit, "Seconds before a crawling run is stopped (default 5)");
}

std::string heading(const xp::RingParams& p) {
  return fmt::format("Token ring, {} threads: ns per hop (wall) and CPU ns per hop", p.threads);
}

const Register reg{make_experiment<RingOptions, xp::RingParams>(
    {"ring", {.reps = 5}, add_options, to_params, xp::run_ring, heading, print_published})};

}  // namespace
}  // namespace weft::cli
