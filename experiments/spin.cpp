#include "weft/xp/spin.hpp"

#include <sched.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/harness/run.hpp"
#include "weft/sync/cpu_relax.hpp"
#include "weft/sync/event.hpp"
#include "weft/sync/wait_options.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

namespace weft::xp {


const std::vector<std::string>& spin_granularities() {
  static const std::vector<std::string> names{"coarse", "medium", "fine"};
  return names;
}

double spin_item_us(const std::string& granularity) {
  if (granularity == "coarse") return 100;
  if (granularity == "medium") return 10;
  if (granularity == "fine") return 1;
  throw std::invalid_argument("unknown granularity '" + granularity + "'");
}

namespace {

// ---- the work: a dependent multiply-add chain on a local ----------------

// The empty asm makes each step opaque, so the compiler can neither vectorise
// the chain nor replace it by a closed form: its time is iterations x the
// multiply-add latency, and it touches no memory another thread uses.
std::uint64_t work_chain(std::uint64_t iters, std::uint64_t x) noexcept {
  for (std::uint64_t i = 0; i < iters; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// Chain steps per µs on this machine, measured once: the fastest of a few
// 2 ms batches, so a preemption during one batch does not shrink every item.
double steps_per_us() {
  static const double value = [] {
    constexpr std::uint64_t kSteps = 1'000'000;
    double best_ns = 1e18;
    std::uint64_t x = 1;
    for (int i = 0; i < 7; ++i) {
      const std::int64_t t0 = wall_ns();
      x = work_chain(kSteps, x);
      best_ns = std::min(best_ns, static_cast<double>(wall_ns() - t0));
    }
    asm volatile("" : : "r"(x));
    return static_cast<double>(kSteps) / (std::max(best_ns, 1.0) / 1e3);
  }();
  return value;
}

// ---- the stop request of a run over its time limit -----------------------

using Stop = harness::StopFlag;
constexpr unsigned kStopPollMask = 1023;

// ---- the locks: lock(stop) returns false only if the run was stopped -----
// Each one guards a plain count: taking the lock is an acquire and releasing
// it a release, which is all a mutex needs for the next holder to see the
// last holder's update of the count (no ordering with other locations).

struct BusyLock {
  std::atomic<bool> held{false};
  bool lock(const Stop& s) noexcept {
    // acquire: the winner sees the count as the last holder left it.
    for (unsigned i = 1; held.exchange(true, std::memory_order_acquire); ++i)
      if ((i & kStopPollMask) == 0 && s.requested()) return false;
    return true;
  }
  // release: publishes this holder's update of the count.
  void unlock() noexcept { held.store(false, std::memory_order_release); }
};

struct YieldLock {
  std::atomic<bool> held{false};
  bool lock(const Stop& s) noexcept {
    while (held.exchange(true, std::memory_order_acquire)) {  // acquire: as BusyLock
      if (s.requested()) return false;
      sched_yield();
    }
    return true;
  }
  void unlock() noexcept { held.store(false, std::memory_order_release); }  // release: as BusyLock
};

struct Sleep1msLock {
  std::atomic<bool> held{false};
  bool lock(const Stop& s) {
    while (held.exchange(true, std::memory_order_acquire)) {  // acquire: as BusyLock
      if (s.requested()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }
  void unlock() noexcept { held.store(false, std::memory_order_release); }  // release: as BusyLock
};

struct PauseBackoffLock {
  std::atomic<bool> held{false};
  bool lock(const Stop& s) noexcept {
    Backoff backoff;
    for (unsigned i = 1;; ++i) {
      // relaxed test: only a hint that the exchange may win (the exchange's
      // acquire orders, as BusyLock); reading keeps the line shared among
      // the waiters instead of bouncing it on every try.
      if (!held.load(std::memory_order_relaxed) && !held.exchange(true, std::memory_order_acquire))
        return true;
      backoff.snooze();
      if ((i & 63) == 0 && s.requested()) return false;
    }
  }
  void unlock() noexcept { held.store(false, std::memory_order_release); }  // release: as BusyLock
};

// Drepper's futex mutex ("Futexes are tricky": mutex 2 in its final form,
// the exchange-based slow path of "take 3"): 0 free, 1 held, 2 held and
// maybe sleepers. Waiters first run weft's adaptive spin-then-yield
// (detail::spin_until, fed back through detail::adapt), trying to take the
// free lock on each poll; only then mark it contended and park on the futex.
// unlock() makes the wake system call only when the word said 2.
class WeftLock {
 public:
  bool lock(const Stop&) noexcept {
    std::uint32_t c = kFree;
    // acquire: as BusyLock; relaxed on failure: nothing was taken.
    if (word_.compare_exchange_strong(c, kHeld, std::memory_order_acquire, std::memory_order_relaxed))
      return true;
    const WaitOptions opts;
    const detail::SpinOutcome spun = detail::spin_until(
        [this] {
          std::uint32_t expected = kFree;
          // relaxed test: a hint; the CAS that takes the lock is acquire.
          return word_.load(std::memory_order_relaxed) == kFree &&
                 word_.compare_exchange_strong(expected, kHeld, std::memory_order_acquire,
                                               std::memory_order_relaxed);
        },
        opts);
    if (spun.satisfied) {
      detail::adapt(spun, opts, 0);
      return true;
    }
    // Taken when the old value was kFree; marking kContended even then is
    // Drepper's price for not knowing whether other sleepers remain.
    // acquire: as BusyLock, for the exchange that finds it free.
    while (word_.exchange(kContended, std::memory_order_acquire) != kFree)
      detail::futex_wait(word_, kContended);
    detail::adapt(spun, opts, detail::now_ns());
    return true;
  }
  void unlock() noexcept {
    // release (both): publishes the count to whoever takes the word next.
    if (word_.fetch_sub(1, std::memory_order_release) != kHeld) {
      word_.store(kFree, std::memory_order_release);
      detail::futex_wake(word_, 1);
    }
  }

 private:
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kHeld = 1;
  static constexpr std::uint32_t kContended = 2;
  std::atomic<std::uint32_t> word_{kFree};
};

struct StdMutexLock {
  std::mutex m;
  bool lock(const Stop&) {
    m.lock();
    return true;
  }
  void unlock() { m.unlock(); }
};

// ---- energy from the powercap interface ----------------------------------

class Energy {
 public:
  Energy() {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/sys/class/powercap", ec)) {
      // Top-level zones only ("intel-rapl:0"): subzones ("intel-rapl:0:0")
      // are counted inside their package's figure.
      const std::string name = e.path().filename().string();
      if (name.rfind("intel-rapl:", 0) != 0 || name.find(':') != name.rfind(':')) continue;
      Zone z{(e.path() / "energy_uj").string(), 0};
      std::uint64_t range = 0;
      std::uint64_t now = 0;
      if (!read_u64(z.path, now) || !read_u64((e.path() / "max_energy_range_uj").string(), range)) continue;
      z.range_uj = range;
      zones_.push_back(std::move(z));
    }
  }
  [[nodiscard]] bool available() const noexcept { return !zones_.empty(); }
  [[nodiscard]] std::vector<std::uint64_t> read() const {
    std::vector<std::uint64_t> v(zones_.size(), 0);
    for (std::size_t i = 0; i < zones_.size(); ++i) read_u64(zones_[i].path, v[i]);
    return v;
  }
  // Joules between two readings; a counter that passed its range wrapped.
  [[nodiscard]] double joules(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) const {
    double uj = 0;
    for (std::size_t i = 0; i < zones_.size(); ++i)
      uj += static_cast<double>(b[i] >= a[i] ? b[i] - a[i] : zones_[i].range_uj - a[i] + b[i]);
    return uj / 1e6;
  }

 private:
  struct Zone {
    std::string path;
    std::uint64_t range_uj;
  };
  static bool read_u64(const std::string& path, std::uint64_t& out) {
    std::ifstream f(path);
    return static_cast<bool>(f >> out);
  }
  std::vector<Zone> zones_;
};

constexpr const char* kNoEnergy = "energy: not available on this machine (no readable /sys/class/powercap)";

// ---- one run ------------------------------------------------------------

struct RunOutcome {
  double wall_ms = 0;
  double cpu_s = 0;
  double ctx_switches = 0;
  double energy_j = 0;
  double fraction = 1;  // of the items whose work was done
  bool stopped = false;
};

long context_switches() noexcept {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_nvcsw + u.ru_nivcsw;
}

template <class Lock>
RunOutcome run_once(int nthreads, std::int64_t items, std::uint64_t steps, double limit_s,
                    const Energy& energy) {
  // The count shares the lock's line, as data behind a lock usually does.
  struct alignas(detail::kCacheLine) Queue {
    Lock lock;
    std::int64_t remaining = 0;
  };
  auto queue = std::make_unique<Queue>();
  queue->remaining = items;
  Stop stop;
  const auto n = static_cast<std::size_t>(nthreads);
  std::vector<std::int64_t> done(n, 0);
  std::atomic<std::uint64_t> sink{0};
  harness::StartGate gate(nthreads);
  std::atomic<int> running{nthreads};
  Event finished;
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      gate.arrive_and_wait();
      std::uint64_t x = i + 1;
      std::int64_t count = 0;
      while (!stop.requested()) {
        if (!queue->lock.lock(stop)) break;
        const bool got = queue->remaining > 0;
        if (got) --queue->remaining;
        queue->lock.unlock();
        if (!got) break;
        x = work_chain(steps, x);
        ++count;
      }
      done[i] = count;
      sink.fetch_xor(x, std::memory_order_relaxed);  // relaxed: only keeps the work alive
      // acq_rel: the last one out sees every other thread's count.
      if (running.fetch_sub(1, std::memory_order_acq_rel) == 1) finished.set();
    });
  }
  const std::vector<std::uint64_t> e0 = energy.available() ? energy.read() : std::vector<std::uint64_t>{};
  const long ctx0 = context_switches();
  const std::int64_t cpu0 = process_cpu_ns();
  const std::int64_t t0 = wall_ns();
  gate.open_when_ready();
  RunOutcome o;
  if (!finished.wait_for(std::chrono::nanoseconds(static_cast<std::int64_t>(limit_s * 1e9)))) {
    o.stopped = true;
    stop.request();
    finished.wait();
  }
  const std::int64_t t1 = wall_ns();
  const std::int64_t cpu1 = process_cpu_ns();
  const long ctx1 = context_switches();
  if (energy.available()) o.energy_j = energy.joules(e0, energy.read());
  for (auto& t : threads) t.join();
  o.wall_ms = static_cast<double>(t1 - t0) / 1e6;
  o.cpu_s = static_cast<double>(cpu1 - cpu0) / 1e9;
  o.ctx_switches = static_cast<double>(ctx1 - ctx0);
  std::int64_t total = 0;
  for (auto d : done) total += d;
  o.fraction = items > 0 ? static_cast<double>(total) / static_cast<double>(items) : 1;
  // A run whose workers finished the last items while draining was not cut short.
  o.stopped = o.stopped && total < items;
  return o;
}

using RunFn = RunOutcome (*)(int nthreads, std::int64_t items, std::uint64_t steps, double limit_s,
                            const Energy& energy);
struct LockVariant {
  std::string_view name;
  RunFn run;
};
constexpr std::array<LockVariant, 6> kLocks{{
    {"busy", run_once<BusyLock>},
    {"yield", run_once<YieldLock>},
    {"sleep1ms", run_once<Sleep1msLock>},
    {"pause-backoff", run_once<PauseBackoffLock>},
    {"weft", run_once<WeftLock>},
    {"std-mutex", run_once<StdMutexLock>},
}};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

}  // namespace

const std::vector<std::string>& spin_variants() { return harness::names_of<kLocks>(); }

Result run_spin(const SpinParams& p) {
  for (const auto& g : p.granularities) spin_item_us(g);  // rejects unknown names up front
  Result r;
  r.experiment = "spin";
  const double rate = steps_per_us();
  const Energy energy;
  r.params = {{"work_steps_per_us", rate}};

  const std::size_t ng = p.granularities.size();
  const std::size_t nt = p.threads.size();
  const std::size_t nv = p.variants.size();
  const std::size_t nconf = ng * nt * nv;
  std::vector<std::vector<RunOutcome>> runs(nconf);
  std::vector<std::int64_t> items(ng);
  std::vector<std::uint64_t> steps(ng);
  for (std::size_t g = 0; g < ng; ++g) {
    const double us = spin_item_us(p.granularities[g]);
    items[g] = std::max<std::int64_t>(1, std::llround(p.work_ms * 1e3 / us));
    steps[g] = static_cast<std::uint64_t>(std::max(1.0, std::round(us * rate)));
  }

  const harness::PlanOptions plan{p.reps, true};
  r.params["warmup"] = harness::warmup_text(plan);
  harness::interleave(plan, static_cast<int>(nconf), [&](int k, bool recorded) {
    const auto c = static_cast<std::size_t>(k);
    const std::size_t g = c / (nt * nv);
    const std::size_t t = c / nv % nt;
    const std::size_t v = c % nv;
    const RunOutcome o =
        harness::variant(kLocks, p.variants[v]).run(p.threads[t], items[g], steps[g], p.time_limit_s, energy);
    if (recorded) runs[c].push_back(o);
  });

  for (std::size_t c = 0; c < nconf; ++c) {
    const std::size_t g = c / (nt * nv);
    const std::size_t t = c / nv % nt;
    const std::size_t v = c % nv;
    std::vector<double> wall, cpu, ctx, joules;
    int stopped = 0;
    double worst_fraction = 1;
    double longest = 0;
    for (const RunOutcome& o : runs[c]) {
      wall.push_back(o.wall_ms);
      cpu.push_back(o.cpu_s);
      ctx.push_back(o.ctx_switches);
      joules.push_back(o.energy_j);
      if (o.stopped) {
        ++stopped;
        worst_fraction = std::min(worst_fraction, o.fraction);
        longest = std::max(longest, o.wall_ms / 1e3);
      }
    }
    std::string note;
    if (stopped > 0) {
      note = "stopped after " + seconds_text(longest) + " s (time limit) in " + std::to_string(stopped) +
             " of " + std::to_string(runs[c].size()) + " reps, " +
             std::to_string(static_cast<int>(worst_fraction * 100)) +
             "% of the work done at worst; figures are for the partial runs";
    }
    Row base;
    base.variant = p.variants[v];
    base.threads = p.threads[t];
    base.note = note;
    base.labels.granularity = p.granularities[g];
    base.labels.item_us = spin_item_us(p.granularities[g]);
    base.labels.items = items[g];
    base.labels.stopped_reps = stopped;
    base.labels.work_fraction_min = worst_fraction;
    const auto add = [&](const char* metric, const char* unit, std::vector<double> samples) {
      r.rows.push_back(with_metric(base, metric, unit, std::move(samples)));
    };
    add("wall_ms", "ms", std::move(wall));
    add("cpu_s", "s", std::move(cpu));
    add("ctx_switches", "count", std::move(ctx));
    if (energy.available()) {
      add("energy_j", "J", std::move(joules));
    } else {
      Row row = base;
      row.metric = "energy_j";
      row.unit = "J";
      row.measured = false;
      row.note = kNoEnergy;
      r.rows.push_back(std::move(row));
    }
  }

  r.published = published("004_sleep_loops");
  if (!energy.available()) r.notes.push_back(kNoEnergy);
  const int most = p.threads.empty() ? 0 : *std::max_element(p.threads.begin(), p.threads.end());
  if (auto note = harness::oversubscribed_note(
          "threads", most, "on purpose: a waiter that keeps its CPU delays the lock holder it waits for");
      !note.empty())
    r.notes.push_back(std::move(note));
  r.notes.push_back("cpu_s is the power proxy: CPU time the process burned, busy waiting included");
  return r;
}

// The registration: `weft spin`, its sizes in the report, its figure.
namespace {

// One matrix per metric: thread counts down, variants across; a '*' marks a
// cell with runs stopped by the time limit.
void print_matrix(const Result& r, const std::string& gran, const std::vector<int>& threads,
                  const std::vector<std::string>& variants, const std::string& metric, const char* what) {
  fmt::print("  {}:\n  {:>7}", what, "threads");
  for (const auto& v : variants) fmt::print(" {:>13}", v);
  fmt::print("\n");
  for (int t : threads) {
    fmt::print("  {:>7}", t);
    for (const auto& v : variants) {
      const Row* row = find(r, Key(v, metric, t).granularity(gran));
      std::string cell = "-";
      if (row != nullptr && row->measured) {
        const double m = row->stats.median;
        cell = m >= 100 ? fmt::format("{:.0f}", m) : fmt::format("{:.3g}", m);
        if (row->labels.stopped_reps.value_or(0) > 0) cell += "*";
      }
      fmt::print(" {:>13}", cell);
    }
    fmt::print("\n");
  }
}

double median_of(const Result& r, const std::string& v, int t, const std::string& g, const std::string& m) {
  return median(r, Key(v, m, t).granularity(g)).value_or(0);
}

void print_published(const Result& r) {
  const auto variants = r.params.value("variants", std::vector<std::string>{});
  const auto threads = r.params.value("threads", std::vector<int>{});
  const auto grans = r.params.value("granularities", std::vector<std::string>{});
  for (const auto& g : grans) {
    fmt::print("\nGranularity {} ({:g} us of work per item), medians (* = stopped by the time limit):\n", g,
               spin_item_us(g));
    print_matrix(r, g, threads, variants, "wall_ms", "wall ms");
    print_matrix(r, g, threads, variants, "cpu_s", "CPU s (power proxy)");
    print_matrix(r, g, threads, variants, "ctx_switches", "context switches");
  }
  const bool have = [&] {
    for (const char* v : {"busy", "yield", "pause-backoff"})
      if (std::find(variants.begin(), variants.end(), v) == variants.end()) return false;
    return true;
  }();
  if (have) {
    fmt::print("\nThis run against the article: wall time of busy and of yield over pause-backoff "
               "(> 1: backoff faster), and busy's CPU time over backoff's:\n");
    fmt::print("  {:<8} {:>7} {:>14} {:>14} {:>14}\n", "gran", "threads", "busy/backoff", "yield/backoff",
               "CPU busy/bkoff");
    for (const auto& g : grans) {
      for (int t : threads) {
        const double b = median_of(r, "pause-backoff", t, g, "wall_ms");
        const double bc = median_of(r, "pause-backoff", t, g, "cpu_s");
        if (b <= 0 || bc <= 0) continue;
        fmt::print("  {:<8} {:>7} {:>14.2f} {:>14.2f} {:>14.2f}\n", g, t, median_of(r, "busy", t, g, "wall_ms") / b,
                   median_of(r, "yield", t, g, "wall_ms") / b, median_of(r, "busy", t, g, "cpu_s") / bc);
      }
    }
  }
  if (!print_article(r, "machine", "method")) return;
  const auto& pub = r.published;
  for (const auto& c : pub.value("claims", nlohmann::json::array())) fmt::print("  - {}\n", c.get<std::string>());
}

Result by_granularity(const Result& r) { return label_variants(r, &Labels::granularity); }

const Register<SpinParams> reg{{
    .name = "spin", .page = 70, .article = "004_sleep_loops", .seconds = {4, 40, 90},
    .title = "How lock waiters wait",
    .summary =
        "How lock waiters wait: busy, yield, sleep, pause backoff (Intel: sleep loops for power and performance)",
    .options = {names("--granularity,-g", &SpinParams::granularities,
                      "Work per item (coarse 100 us, medium 10 us, fine 1 us)", "granularity", spin_granularities),
                real("--work-ms", &SpinParams::work_ms, "Computation per run in ms, summed over its items", 1, 600'000,
                     false, " ms"),
                real("--time-limit", &SpinParams::time_limit_s, "Seconds before a crawling run is stopped", 0, 3600,
                     true, " seconds"),
                counts("--threads,-t", &SpinParams::threads, "Thread counts", {}, 1024),
                variants(&SpinParams::variants, spin_variants, "--variant,-v"), reps(&SpinParams::reps)},
    .sizes = {[](SpinParams& p) {
                p.work_ms = 150;
                p.time_limit_s = 5;
                p.threads = {2, 8};
                p.granularities = {"medium"};
              },
              [](SpinParams& p) {
                p.work_ms = 400;
                p.time_limit_s = 5;
              },
              [](SpinParams& p) { p.time_limit_s = 5; }},
    .run = run_spin,
    .heading = "Lock-protected work queue: wall ms, CPU s, context switches and energy per waiting strategy",
    .print = print_published,
    .for_display = by_granularity,
    .figures = {"spin_wall_vs_cpu"}, .headlines = {"wall_ms", "cpu_s"},
}};

}  // namespace

}  // namespace weft::xp
