#include "weft/xp/smt.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <thread>

#include "weft/harness/run.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

namespace weft::xp {

const std::vector<std::string>& smt_variants() {
  static const std::vector<std::string> names{"single", "two-cores", "smt-siblings", "same-cpu"};
  return names;
}

const std::vector<std::string>& smt_workloads() {
  static const std::vector<std::string> names{"sum", "sin"};
  return names;
}

namespace {

constexpr std::size_t kThreadsMax = 2;

// Kept out of line so each is the one simple loop the article times. The
// float accumulator is a dependent chain: without -ffast-math the compiler
// may not reassociate the adds, so it neither vectorises nor splits them.
[[gnu::noinline]] float sum_kernel(const float* a, std::size_t n) noexcept {
  float acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc += a[i];
  return acc;
}

// std::sin(float) is sinf: a libm call per element, the FP units' work.
[[gnu::noinline]] float sin_kernel(const float* a, std::size_t n) noexcept {
  float acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc += std::sin(a[i]);
  return acc;
}

using Kernel = float (*)(const float*, std::size_t) noexcept;

// Keeps the kernels' results alive, so the loops cannot be dropped.
volatile float g_sink = 0;

// Uniform floats in [0, 1): xorshift64, cheap enough to fill 10^8 quickly
// (and the fill is the arrays' first touch: their pages fault in here, not
// in a timed loop).
void fill(float* a, std::size_t n, std::uint64_t seed) noexcept {
  std::uint64_t x = seed | 1;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    a[i] = static_cast<float>(x >> 40) * (1.0f / 16777216.0f);  // 24 random bits
  }
}

// Runs the kernel once per CPU in `cpus` (thread i on its own array i),
// released together; returns each thread's time from the common start to
// its own finish, in ms.
using Arrays = std::array<std::unique_ptr<float[]>, kThreadsMax>;

std::vector<double> run_once(Kernel kernel, const Arrays& arrays, std::size_t n,
                             const std::vector<int>& cpus) {
  const std::size_t nt = cpus.size();
  std::vector<std::int64_t> end(nt, 0);
  std::vector<float> out(nt, 0);
  harness::StartGate gate(static_cast<int>(nt));
  std::vector<std::thread> threads;
  threads.reserve(nt);
  for (std::size_t i = 0; i < nt; ++i) {
    threads.emplace_back([&, i] {
      pin_this_thread(cpus[i]);
      gate.arrive_and_wait();
      out[i] = kernel(arrays[i].get(), n);
      end[i] = wall_ns();
    });
  }
  const std::int64_t t0 = wall_ns();
  gate.open_when_ready();
  for (auto& t : threads) t.join();
  std::vector<double> ms(nt);
  float s = 0;
  for (std::size_t i = 0; i < nt; ++i) {
    ms[i] = static_cast<double>(end[i] - t0) / 1e6;
    s += out[i];
  }
  g_sink = g_sink + s;
  return ms;
}

struct Pinning {
  std::vector<int> cpus;  // empty: not measurable here
  std::string why_not;
};

// Where each variant's threads go, from weft's view of the allowed CPUs.
std::vector<Pinning> pinnings(const Topology& topo) {
  const auto& cores = topo.cores();
  const int first = cores.front().cpus.first();
  std::vector<Pinning> out(smt_variants().size());
  out[0].cpus = {first};
  if (cores.size() >= 2) {
    out[1].cpus = {first, cores[1].cpus.first()};
  } else {
    out[1].why_not = "not measured: only one core among the allowed CPUs";
  }
  for (int cpu : topo.allowed()) {
    const CpuSet sib = topo.siblings(cpu);
    if (sib.count() >= 2) {
      out[2].cpus = {cpu, (sib - CpuSet{cpu}).first()};
      break;
    }
  }
  if (out[2].cpus.empty()) out[2].why_not = "not measured: no SMT siblings among the allowed CPUs";
  out[3].cpus = {first, first};
  return out;
}

Row smt_row(const std::string& variant, int threads, const char* metric, const char* unit,
            std::vector<double> samples, const std::string& workload, const Pinning& where) {
  Row row = make_row(variant, threads, metric, unit, std::move(samples), where.why_not);
  row.labels.workload = workload;
  row.labels.cpus = where.cpus;
  return row;
}

}  // namespace

std::uint64_t smt_bytes_needed(std::int64_t size) noexcept {
  return static_cast<std::uint64_t>(size) * sizeof(float) * kThreadsMax;
}

std::uint64_t physical_memory_bytes() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

Result run_smt(const SmtParams& p) {
  Result r;
  r.experiment = "smt";
  const harness::PlanOptions plan{p.reps, true};
  const Topology& topo = Topology::instance();
  const auto& variants = smt_variants();
  const auto& workloads = smt_workloads();
  const std::vector<Pinning> where = pinnings(topo);
  nlohmann::json pinned = nlohmann::json::object();
  for (std::size_t v = 0; v < variants.size(); ++v) pinned[variants[v]] = where[v].cpus;
  r.params = {{"bytes", smt_bytes_needed(p.size)},
              {"workloads", workloads},
              {"pinned_cpus", pinned},
              {"warmup", harness::warmup_text(plan)}};

  const auto n = static_cast<std::size_t>(p.size);
  Arrays arrays;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    arrays[i] = std::make_unique_for_overwrite<float[]>(n);
    fill(arrays[i].get(), n, 0x9E3779B97F4A7C15ull * (i + 1));
  }

  // samples[v][w]: per-thread ms (mean of the run's threads), one per rep.
  const std::size_t nv = variants.size();
  const std::size_t nw = workloads.size();
  std::vector<std::vector<std::vector<double>>> samples(nv, std::vector<std::vector<double>>(nw));
  harness::interleave(plan, static_cast<int>(nv * nw), [&](int k, bool recorded) {
    const auto v = static_cast<std::size_t>(k) / nw;
    const auto w = static_cast<std::size_t>(k) % nw;
    if (where[v].cpus.empty()) return;
    const Kernel kernel = w == 0 ? &sum_kernel : &sin_kernel;
    const std::vector<double> ms = run_once(kernel, arrays, n, where[v].cpus);
    double mean = 0;
    for (double x : ms) mean += x;
    if (recorded) samples[v][w].push_back(mean / static_cast<double>(ms.size()));
  });

  for (std::size_t w = 0; w < nw; ++w) {
    for (std::size_t v = 0; v < nv; ++v) {
      r.rows.push_back(smt_row(variants[v], v == 0 ? 1 : static_cast<int>(kThreadsMax), "ms", "ms",
                               samples[v][w], workloads[w], where[v]));
    }
  }
  // Paired by repetition: the runs of one repetition are seconds apart, so
  // a host that slowed down for a while slows both sides of the ratio.
  for (std::size_t w = 0; w < nw; ++w) {
    for (std::size_t v = 1; v < nv; ++v) {
      std::vector<double> ratio;
      const auto& single = samples[0][w];
      for (std::size_t i = 0; i < samples[v][w].size() && i < single.size(); ++i)
        ratio.push_back(samples[v][w][i] / single[i]);
      r.rows.push_back(smt_row(variants[v], static_cast<int>(kThreadsMax), "slowdown", "x", std::move(ratio),
                               workloads[w], where[v]));
    }
  }
  r.published = published("002_affinity_smt");
  if (!topo.smt()) {
    r.notes.push_back(
        "no SMT here: the article's point (siblings share a core's execution units, so the "
        "execution-bound sin sum slows down while the latency-bound sum does not) cannot be measured");
  }
  if (!topo.warning().empty()) r.notes.push_back("topology: " + topo.warning());
  return r;
}

// The registration: `weft smt`, its sizes in the report, its figure.
namespace {

// Per workload: median ms per thread, [slowdown against single], with the
// article's figures under it.
void print_published(const Result& r) {
  fmt::print("\nThis run, median ms per thread [slowdown vs single]:\n{:<9}", "workload");
  for (const auto& v : smt_variants()) fmt::print(" {:>17}", v);
  fmt::print("\n");
  for (const auto& w : smt_workloads()) {
    fmt::print("{:<9}", w);
    for (const auto& v : smt_variants()) {
      const auto ms = median(r, Key(v, "ms").workload(w));
      const auto sd = median(r, Key(v, "slowdown").workload(w));
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

// The cap only keeps the byte count below overflow; memory decides (check).
constexpr long long kMaxSize = 1LL << 40;

const Register<SmtParams> reg{{
    .name = "smt", .page = 40, .article = "002_affinity_smt", .seconds = {2, 4, 8},
    .title = "Threads on cores, SMT siblings and one CPU",
    .summary = "Threads on cores, on SMT siblings and on one CPU (Bendersky 2016: affinity and hyperthreading)",
    .options = {integer("--size,-n", &SmtParams::size, "Floats per thread, as in the article", 1, kMaxSize),
                reps(&SmtParams::reps)},
    .sizes = {[](SmtParams& p) {
                p.size = 10'000'000;
                p.reps = 3;
              },
              [](SmtParams& p) {
                p.size = 50'000'000;
                p.reps = 3;
              },
              [](SmtParams& p) {
                p.size = 50'000'000;
                p.reps = 5;
              }},
    .check =
        [](const SmtParams& p) {
          const std::uint64_t need = smt_bytes_needed(p.size);
          const std::uint64_t have = physical_memory_bytes();
          if (have != 0 && need > have) {
            throw BadParam(
                fmt::format("--size {} needs {:.1f} GiB (two arrays of {} floats), the machine has {:.1f} GiB",
                            p.size, static_cast<double>(need) / (1 << 30), p.size,
                            static_cast<double>(have) / (1 << 30)));
          }
        },
    .run = run_smt,
    .heading = "Sum and sin over a float array per thread: ms per thread and slowdown vs one thread",
    .print = print_published,
    .for_display = [](const Result& r) { return label_variants(r, &Labels::workload); },
    .figures = {"smt_slowdown"},
}};

}  // namespace

}  // namespace weft::xp
