#include "weft/xp/ring.hpp"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/harness/run.hpp"
#include "weft/sync/cpu_relax.hpp"
#include "weft/sync/event.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

namespace weft::xp {

namespace {

// Spinning flags poll the stop flag every kStopPollMask+1 polls; sleeping
// flags are woken by having their flag raised, and then see it.
using Stop = harness::StopFlag;
constexpr unsigned kStopPollMask = 1023;

// Each flag type: wait() returns true when the flag was raised, false when
// the run was stopped; clear(); raise(). One per thread, each on its own line.
struct SeqCstFlag {
  std::atomic<bool> f{false};
  bool wait(const Stop& s) noexcept {
    for (unsigned i = 1; !f.load(); ++i)  // seq_cst: the article's default-order variant
      if ((i & kStopPollMask) == 0 && s.requested()) return false;
    return true;
  }
  void clear() noexcept { f.store(false); }
  void raise() noexcept { f.store(true); }
};

template <bool kPause>
struct ReleaseFlag {
  std::atomic<bool> f{false};
  bool wait(const Stop& s) noexcept {
    // acquire: pairs with raise()'s release, so the token's history is seen.
    for (unsigned i = 1; !f.load(std::memory_order_acquire); ++i) {
      if constexpr (kPause) cpu_relax();
      if ((i & kStopPollMask) == 0 && s.requested()) return false;
    }
    return true;
  }
  // relaxed: only this thread clears its own flag, before passing the token
  // on; the next raise of it is ordered after by the ring's release chain.
  void clear() noexcept { f.store(false, std::memory_order_relaxed); }
  void raise() noexcept { f.store(true, std::memory_order_release); }
};

struct CondvarFlag {
  std::mutex m;
  std::condition_variable cv;
  bool f = false;
  bool wait(const Stop&) {
    std::unique_lock lock(m);
    cv.wait(lock, [this] { return f; });
    return true;
  }
  void clear() {
    std::lock_guard lock(m);
    f = false;
  }
  void raise() {
    {
      std::lock_guard lock(m);
      f = true;
    }
    cv.notify_one();
  }
};

struct AtomicWaitFlag {
  std::atomic<std::uint32_t> f{0};
  bool wait(const Stop&) noexcept {
    // acquire: pairs with raise()'s release.
    while (f.load(std::memory_order_acquire) == 0) f.wait(0, std::memory_order_acquire);
    return true;
  }
  void clear() noexcept { f.store(0, std::memory_order_relaxed); }  // as ReleaseFlag::clear
  void raise() noexcept {
    f.store(1, std::memory_order_release);  // release: publishes the token's history
    f.notify_one();
  }
};

// The plain futex ring: sleep at once while the flag is down, and make the
// wake system call on every raise (no sleeper tracking).
struct FutexFlag {
  std::atomic<std::uint32_t> f{0};
  bool wait(const Stop&) noexcept {
    // acquire: pairs with raise()'s release.
    while (f.load(std::memory_order_acquire) == 0) detail::futex_wait(f, 0);
    return true;
  }
  void clear() noexcept { f.store(0, std::memory_order_relaxed); }  // as ReleaseFlag::clear
  void raise() noexcept {
    f.store(1, std::memory_order_release);  // release: publishes the token's history
    detail::futex_wake(f, 1);
  }
};

struct WeftFlag {
  Event e;
  bool wait(const Stop&) noexcept {
    e.wait();
    return true;
  }
  void clear() noexcept { e.reset(); }
  void raise() noexcept { e.set(); }
};

struct RunOutcome {
  double seconds = 0;
  double cpu_seconds = 0;
  std::int64_t hops_done = 0;
  bool stopped = false;
};

template <class Flag>
RunOutcome run_once(int n, std::int64_t hops, const std::vector<int>& cpus, double limit_s) {
  struct alignas(detail::kCacheLine) Slot {
    Flag flag;
  };
  auto slots = std::make_unique<Slot[]>(static_cast<std::size_t>(n));
  Stop stop;
  std::vector<std::int64_t> done(static_cast<std::size_t>(n), 0);
  harness::StartGate gate(n);
  std::atomic<int> running{n};
  Event finished;

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      if (!cpus.empty()) pin_this_thread(cpus[static_cast<std::size_t>(i) % cpus.size()]);
      gate.arrive_and_wait();
      Flag& mine = slots[static_cast<std::size_t>(i)].flag;
      Flag& next = slots[static_cast<std::size_t>((i + 1) % n)].flag;
      std::int64_t count = 0;
      for (std::int64_t k = i; k < hops; k += n) {
        if (!mine.wait(stop) || stop.requested()) break;
        mine.clear();
        next.raise();
        ++count;
      }
      done[static_cast<std::size_t>(i)] = count;
      // acq_rel: the last one out sees every other thread's count.
      if (running.fetch_sub(1, std::memory_order_acq_rel) == 1) finished.set();
    });
  }
  gate.open_when_ready();
  const std::int64_t cpu0 = process_cpu_ns();
  const std::int64_t t0 = wall_ns();
  slots[0].flag.raise();
  bool stopped = false;
  if (!finished.wait_for(std::chrono::nanoseconds(static_cast<std::int64_t>(limit_s * 1e9)))) {
    stopped = true;
    stop.request();
    for (int i = 0; i < n; ++i) slots[static_cast<std::size_t>(i)].flag.raise();  // wake sleepers
    finished.wait();
  }
  const std::int64_t t1 = wall_ns();
  const std::int64_t cpu1 = process_cpu_ns();
  for (auto& t : threads) t.join();
  RunOutcome o;
  o.seconds = static_cast<double>(t1 - t0) / 1e9;
  o.cpu_seconds = static_cast<double>(cpu1 - cpu0) / 1e9;
  for (auto d : done) o.hops_done += d;
  o.stopped = stopped;
  return o;
}

using RunFn = RunOutcome (*)(int n, std::int64_t hops, const std::vector<int>& cpus, double limit_s);

// Sleeping flags get fewer hops by default: each hop is a system call.
struct FlagVariant {
  std::string_view name;
  bool sleeps;
  RunFn run;
};
constexpr std::array<FlagVariant, 7> kFlags{{
    {"condvar", true, run_once<CondvarFlag>},
    {"seq_cst", false, run_once<SeqCstFlag>},
    {"release", false, run_once<ReleaseFlag<false>>},
    {"pause", false, run_once<ReleaseFlag<true>>},
    {"atomic_wait", true, run_once<AtomicWaitFlag>},
    {"futex", true, run_once<FutexFlag>},
    {"weft", false, run_once<WeftFlag>},
}};

}  // namespace

const std::vector<std::string>& ring_flags() { return harness::names_of<kFlags>(); }

double release_ring_seconds(std::int64_t hops) {
  const RunOutcome o = run_once<ReleaseFlag<false>>(2, hops, {}, 60.0);
  if (o.stopped || o.hops_done != hops)
    throw std::runtime_error(fmt::format("ring: a ring of two threads made {} of {} hops in a minute", o.hops_done, hops));
  return o.seconds;
}

Result run_ring(const RingParams& p) {
  Result r;
  r.experiment = "ring";
  const std::vector<int> cpus = place(Topology::instance(), p.placement, p.threads);
  r.params = {{"pinned_cpus", cpus}};
  const std::size_t nf = p.flags.size();
  std::vector<std::vector<double>> ns(nf), cpu_ns(nf);
  std::vector<double> worst_stop(nf, 0);
  std::vector<std::int64_t> hops_used(nf, 0);

  const harness::PlanOptions plan{p.reps, true};
  r.params["warmup"] = harness::warmup_text(plan);
  harness::interleave(plan, static_cast<int>(nf), [&](int v, bool recorded) {
    const FlagVariant& flag = harness::variant(kFlags, p.flags[static_cast<std::size_t>(v)]);
    const std::int64_t hops = p.hops > 0 ? p.hops : (flag.sleeps ? 50'000 : 500'000);
    hops_used[static_cast<std::size_t>(v)] = hops;
    const RunOutcome o = flag.run(p.threads, hops, cpus, p.time_limit_s);
    if (!recorded) return;
    const double h = static_cast<double>(o.hops_done > 0 ? o.hops_done : 1);
    ns[static_cast<std::size_t>(v)].push_back(o.seconds * 1e9 / h);
    cpu_ns[static_cast<std::size_t>(v)].push_back(o.cpu_seconds * 1e9 / h);
    if (o.stopped) worst_stop[static_cast<std::size_t>(v)] = o.seconds;
  });

  for (std::size_t v = 0; v < nf; ++v) {
    std::string note;
    if (worst_stop[v] > 0) {
      note = fmt::format("stopped after {:.2g} s (time limit; rate of the hops done)", worst_stop[v]);
    }
    Row a = make_row(p.flags[v], p.threads, "ns_per_hop", "ns", ns[v]);
    a.note = note;
    a.labels.hops = hops_used[v];
    Row b = with_metric(a, "cpu_ns_per_hop", "ns", cpu_ns[v]);
    r.rows.push_back(std::move(a));
    r.rows.push_back(std::move(b));
  }
  r.published = published("000_ring_latency");
  if (auto note = harness::oversubscribed_note(
          "threads", p.threads, "spinning flags wait for the scheduler to run the thread holding the token");
      !note.empty())
    r.notes.push_back(std::move(note));
  return r;
}

// The registration: `weft ring`, its sizes in the report, its figure.
namespace {

void print_published(const Result& r) {
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

const Register<RingParams> reg{{
    .name = "ring", .page = 10, .article = "000_ring_latency", .seconds = {8, 20, 120},
    .title = "Token ring: inter-thread signalling latency",
    .summary = "Token-ring signalling latency per flag (Qiita 2017: inter-thread signalling latency)",
    .options = {integer("--threads,-t", &RingParams::threads, "Threads in the ring (a ring needs two)", 2, 256),
                names("--flag,-f", &RingParams::flags, "Flags to measure", "flag", ring_flags),
                integer("--hops", &RingParams::hops, "Hops per run (0: each flag's own)", 0, 1'000'000'000'000LL,
                        "0: 5e5 spinning and weft, 5e4 sleeping flags"),
                custom<RingParams>(
                    "--placement", "none, compact, spread, one_per_core, numa", "",
                    [](RingParams& p, const std::vector<std::string>& v) {
                      try {
                        p.placement = parse_placement(v.front());
                      } catch (const std::invalid_argument& e) {
                        throw BadParam(e.what());
                      }
                    },
                    [](const RingParams& p) { return std::string(to_string(p.placement)); }),
                real("--time-limit", &RingParams::time_limit_s, "Seconds before a crawling run is stopped", 0, 3600,
                     true, " seconds"),
                reps(&RingParams::reps)},
    // Quick: a sleeping flag's 5e4 hops take ~2 s a run here; a quarter
    // second of them gives its rate.
    .sizes = {[](RingParams& p) {
                p.reps = 2;
                p.time_limit_s = 0.25;
              },
              nullptr, [](RingParams& p) { p.reps = 9; }},
    .check =
        [](const RingParams& p) {
          const std::size_t cores = Topology::instance().cores().size();
          if (p.placement == Placement::one_per_core && p.threads > static_cast<int>(cores))
            throw BadParam(
                fmt::format("--placement one_per_core needs {} cores, only {} allowed", p.threads, cores));
        },
    .run = run_ring,
    .heading =
        [](const RingParams& p) {
          return fmt::format("Token ring, {} threads: ns per hop (wall) and CPU ns per hop", p.threads);
        },
    .print = print_published,
    .figures = {"ring"}, .headlines = {"ns_per_hop"},
}};

}  // namespace

}  // namespace weft::xp
