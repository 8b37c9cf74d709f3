#include "weft/xp/idle.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "article_pool.hpp"
#include "peer_support.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/harness/process.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

#ifdef WEFT_HAVE_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#endif

namespace weft::xp {

namespace {

constexpr std::int64_t kTickNs = 1'000'000;

// Where the trivial tasks go: a pool, or (baseline) the calling thread.
class Host {
 public:
  virtual ~Host() = default;
  virtual void post(std::function<void()> task) = 0;
};

class InlineHost final : public Host {
 public:
  void post(std::function<void()> task) override { task(); }
};

class WeftHost final : public Host {
 public:
  explicit WeftHost(int workers) : pool_(PoolOptions{.workers = workers}) {}
  void post(std::function<void()> task) override { pool_.post(std::move(task)); }

 private:
  ThreadPool pool_;
};

class ArticleHost final : public Host {
 public:
  explicit ArticleHost(int workers) : pool_(workers) {}
  void post(std::function<void()> task) override { pool_.submit(std::move(task)); }

 private:
  ArticlePool pool_;
};

#ifdef WEFT_HAVE_TBB
class TbbHost final : public Host {
 public:
  // No slot reserved for this thread: enqueued tasks are run by the workers.
  explicit TbbHost(int workers) : limit_(workers), arena_(workers, 0) { arena_.initialize(); }
  void post(std::function<void()> task) override { arena_.enqueue(std::move(task)); }

 private:
  TbbThreads limit_;
  oneapi::tbb::task_arena arena_;
};
#endif

#ifdef WEFT_HAVE_ASIO
class AsioHost final : public Host {
 public:
  explicit AsioHost(int workers) : pool_(static_cast<std::size_t>(workers)) {}
  ~AsioHost() override { pool_.join(); }
  AsioHost(const AsioHost&) = delete;
  AsioHost& operator=(const AsioHost&) = delete;
  void post(std::function<void()> task) override { boost::asio::post(pool_, std::move(task)); }

 private:
  boost::asio::thread_pool pool_;
};
#endif

using MakeHost = std::unique_ptr<Host> (*)(int workers);

template <class H>
std::unique_ptr<Host> make(int workers) {
  return std::make_unique<H>(workers);
}

const std::array<harness::Variant<MakeHost>, 5> kVariants{{
    {"baseline", kBuiltIn, false, [](int) -> std::unique_ptr<Host> { return std::make_unique<InlineHost>(); }},
    {"weft", kBuiltIn, true, make<WeftHost>},
    {"tbb", kTbb, true, WEFT_XP_IF_TBB(make<TbbHost>)},
    {"asio-post", kAsio, true, WEFT_XP_IF_ASIO(make<AsioHost>)},
    {"article-pool", kBuiltIn, true, make<ArticleHost>},
}};

std::unique_ptr<Host> make_host(const std::string& variant, int workers) {
  const auto& v = harness::variant(kVariants, variant);
  if (v.run == nullptr) throw std::invalid_argument("idle: variant '" + variant + "' is " + v.peer.why_not());
  return v.run(workers);
}

struct Done {
  std::atomic<std::int64_t> n{0};
  // release: the task's latency sample is written before the count that
  // tells the measuring thread it may read it.
  void bump() noexcept { n.fetch_add(1, std::memory_order_release); }
  // Sleeps rather than spins: the spinning would be counted as the pool's.
  // acquire: pairs with bump(), so the samples of the counted tasks are seen.
  void wait_for(std::int64_t target) const {
    while (n.load(std::memory_order_acquire) < target) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
};

struct Sample {
  std::int64_t idle_cpu_ns = 0;
  std::int64_t tick_cpu_ns = 0;
  // The posting thread's own share of tick_cpu_ns: its sleeps to each tick,
  // its post() calls (a pool's wake-up system call is made here) and its
  // wait for the last task. The rest is the pool's threads', measured in
  // the same run: no subtraction of another run's figure, whose noise (the
  // posting thread's CPU alone varies by a third from run to run on a VM)
  // would swamp the few us per task a pool's threads cost.
  std::int64_t tick_poster_cpu_ns = 0;
  std::int64_t start_median_ns = 0;  // post -> start of the task, over the tick phase's tasks
  std::int64_t start_p99_ns = 0;
};

Sample measure(const std::string& variant, int workers, double seconds) {
  Sample s;
  {
    auto host = make_host(variant, workers);
    Done done;
    host->post([&done] { done.bump(); });  // the workers are up and have run a task
    done.wait_for(1);
    const std::int64_t cpu0 = process_cpu_ns();
    std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9)));
    s.idle_cpu_ns = process_cpu_ns() - cpu0;
  }
  {
    auto host = make_host(variant, workers);
    Done done;
    host->post([&done] { done.bump(); });
    done.wait_for(1);
    const std::int64_t ticks = static_cast<std::int64_t>(2 * seconds * 1e9) / kTickNs;
    // Each task writes its own slot: how long it waited from post to start.
    std::vector<std::int64_t> latency(static_cast<std::size_t>(ticks), 0);
    const std::int64_t cpu0 = process_cpu_ns(), poster0 = thread_cpu_ns();
    timespec next{};
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (std::int64_t k = 0; k < ticks; ++k) {
      next.tv_nsec += kTickNs;
      if (next.tv_nsec >= 1'000'000'000) {
        next.tv_nsec -= 1'000'000'000;
        ++next.tv_sec;
      }
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) != 0) {
      }
      std::int64_t* slot = &latency[static_cast<std::size_t>(k)];
      const std::int64_t posted = wall_ns();
      host->post([&done, slot, posted] {
        *slot = wall_ns() - posted;
        done.bump();
      });
    }
    done.wait_for(ticks + 1);
    s.tick_poster_cpu_ns = thread_cpu_ns() - poster0;
    s.tick_cpu_ns = process_cpu_ns() - cpu0;
    s.start_p99_ns = quantile(latency, 0.99);
    s.start_median_ns = quantile(latency, 0.5);
  }
  return s;
}

std::string spec_of(const std::string& variant, int workers, double seconds) {
  std::ostringstream o;
  o << variant << ':' << workers << ':' << seconds;
  return o.str();
}

Sample measure_in_child(const std::string& exe, const std::string& spec) {
  const harness::ChildResult c = harness::spawn({exe, "idle", "--internal-child", spec});
  Sample s;
  std::istringstream in(c.out);
  if (!c.ok() || !(in >> s.idle_cpu_ns >> s.tick_cpu_ns >> s.tick_poster_cpu_ns >> s.start_median_ns >> s.start_p99_ns))
    throw std::runtime_error("idle: the measurement '" + spec + "' failed (" + c.describe() +
                             "): " + harness::last_line(c.err.empty() ? c.out : c.err));
  return s;
}

}  // namespace

int run_idle_child(const std::string& spec) {
  std::istringstream in(spec);
  std::string variant;
  char sep = 0;
  int workers = 0;
  double seconds = 0;
  if (!std::getline(in, variant, ':') || !(in >> workers >> sep >> seconds) || sep != ':' || workers < 1 ||
      !(seconds > 0))
    throw std::invalid_argument("idle: bad internal spec '" + spec + "'");
  const Sample s = measure(variant, workers, seconds);
  std::printf("%lld %lld %lld %lld %lld\n", static_cast<long long>(s.idle_cpu_ns),
              static_cast<long long>(s.tick_cpu_ns), static_cast<long long>(s.tick_poster_cpu_ns),
              static_cast<long long>(s.start_median_ns), static_cast<long long>(s.start_p99_ns));
  return std::fflush(stdout) == 0 ? 0 : 1;
}

const std::vector<std::string>& idle_variants() { return harness::names_of<kVariants>(); }

namespace {

// The goals weft's pool is held to here, from this run's medians: at one
// task per ms, its own threads' CPU and its post-to-start latency against
// the best peer's (the pools an outside thread posts to), and its CPU while
// idle.
nlohmann::json idle_ratios(const Result& r, int workers) {
  nlohmann::json ratios = nlohmann::json::array();
  const auto best = [&](const char* metric) {
    std::optional<double> b;
    for (const char* peer : {"tbb", "asio-post", "article-pool"})
      if (const auto m = median(r, Key(peer, metric, workers))) b = std::min(b.value_or(*m), *m);
    return b;
  };
  const auto against_best = [&](const char* what, const char* metric) {
    const auto weft = median(r, Key("weft", metric, workers));
    const auto peer = best(metric);
    if (weft && peer && *peer > 0) add_ratio(ratios, what, *weft / *peer, "<= 1.0");
  };
  against_best("one task per ms: weft's pool threads' CPU / the best peer's (same runs)", "cpu_ms_tick_pool_2s");
  against_best("one task per ms: weft's post-to-start median / the best peer's", "start_latency_us");
  add_ratio(ratios, "idle: weft's CPU ms per s", median(r, Key("weft", "cpu_ms_idle_1s", workers)), "<= 1.0");
  return ratios;
}

}  // namespace

Result run_idle(const IdleParams& p) {
  const int workers = p.workers > 0 ? p.workers : available_parallelism();
  std::string exe = p.child_exe;
  if (exe == "/proc/self/exe") exe = std::filesystem::read_symlink(exe).string();
  std::vector<harness::Unit> units = harness::plan_units(kVariants, p.variants, {workers});
  // Per unit, besides the idle figure in its samples: the tick phase's CPU,
  // and its start latencies (median and p99 of each run, us).
  std::vector<std::vector<double>> tick(units.size()), tick_poster(units.size()), start_median(units.size()),
      start_p99(units.size());
  const harness::PlanOptions plan{p.reps, true};
  harness::interleave(plan, static_cast<int>(units.size()), [&](int k, bool recorded) {
    const auto i = static_cast<std::size_t>(k);
    harness::Unit& u = units[i];
    if (!u.runs()) return;
    const Sample s = exe.empty() ? measure(u.variant, workers, p.seconds)
                                 : measure_in_child(exe, spec_of(u.variant, workers, p.seconds));
    harness::settle();
    if (!recorded) return;
    // Scaled to the metric's nominal duration: --seconds may shorten the run.
    u.samples.push_back(static_cast<double>(s.idle_cpu_ns) / 1e6 / p.seconds);
    tick[i].push_back(static_cast<double>(s.tick_cpu_ns) / 1e6 / p.seconds);
    tick_poster[i].push_back(static_cast<double>(s.tick_poster_cpu_ns) / 1e6 / p.seconds);
    start_median[i].push_back(static_cast<double>(s.start_median_ns) / 1e3);
    start_p99[i].push_back(static_cast<double>(s.start_p99_ns) / 1e3);
  });

  Result r;
  r.experiment = "idle";
  r.params = {{"tick_seconds", 2 * p.seconds},
              {"tick_ms", kTickNs / 1'000'000},
              {"workers", workers},
              {"isolation", exe.empty() ? "in process" : "a child process per measurement"},
              {"scaled_to", "idle: 1 s, tick: 2 s"},
              {"start_latency", "post to the start of the task, over the tick phase's tasks"},
              {"warmup", harness::warmup_text(plan)}};
  for (std::size_t i = 0; i < units.size(); ++i) {
    const harness::Unit& u = units[i];
    const bool baseline = u.variant == "baseline";
    Row a = make_row(u.variant, u.threads, "cpu_ms_idle_1s", "ms", u.samples, u.why_not);
    // The pool's threads: each run's process CPU less its posting thread's
    // (read first, so never more than the process's).
    std::vector<double> tick_pool(tick[i].size());
    for (std::size_t k = 0; k < tick_pool.size(); ++k) tick_pool[k] = tick[i][k] - tick_poster[i][k];
    Row b = make_row(u.variant, u.threads, "cpu_ms_tick_2s", "ms", std::move(tick[i]), u.why_not);
    Row e = make_row(u.variant, u.threads, "cpu_ms_tick_pool_2s", "ms", std::move(tick_pool), u.why_not);
    Row f = make_row(u.variant, u.threads, "cpu_ms_tick_poster_2s", "ms", std::move(tick_poster[i]), u.why_not);
    Row c = make_row(u.variant, u.threads, "start_latency_us", "us", std::move(start_median[i]), u.why_not);
    Row d = make_row(u.variant, u.threads, "start_latency_p99_us", "us", std::move(start_p99[i]), u.why_not);
    if (u.runs() && baseline) {
      a.note = "the measuring thread asleep, no pool";
      b.note = "the ticking thread runs each task itself";
      e.note = "no pool: nothing but the ticking thread";
      f.note = "the ticking thread, running each task itself";
      c.note = d.note = "run in place: no hand-off to wait for";
    }
    for (Row* row : {&a, &b, &e, &f, &c, &d}) r.rows.push_back(std::move(*row));
  }
  r.extra["ratios"] = idle_ratios(r, workers);
  return r;
}

// The registration: `weft idle`, its sizes in the report, its figures.
namespace {

void print_table_and_goals(const Result& r) {
  const auto base = median(r, Key("baseline", "cpu_ms_tick_2s"));
  const auto base_poster = median(r, Key("baseline", "cpu_ms_tick_poster_2s"));
  if (!base || !base_poster) {  // the table is relative to the baseline; the goals are not
    print_ratios(r, "Goals:", 72);
    return;
  }
  fmt::print("\nWith a task every 1 ms (medians over 2 s): the process's CPU ms above the baseline run's; the pool's "
             "threads' CPU ms (the process less the posting thread, in the same run); the posting thread's above the "
             "baseline's; and the wait from post to start:\n");
  fmt::print("  {:<14} {:>10} {:>14} {:>14} {:>10} {:>14}\n", "pool", "CPU ms", "pool threads", "poster", "start us",
             "start p99 us");
  for (const auto& row : r.rows) {
    if (row.variant == "baseline" || row.metric != "cpu_ms_tick_2s" || !row.measured) continue;
    const auto pool = median(r, Key(row.variant, "cpu_ms_tick_pool_2s"));
    const auto poster = median(r, Key(row.variant, "cpu_ms_tick_poster_2s"));
    const auto start = median(r, Key(row.variant, "start_latency_us"));
    const auto p99 = median(r, Key(row.variant, "start_latency_p99_us"));
    fmt::print("  {:<14} {:>10.1f} {:>14.1f} {:>14.1f} {:>10.1f} {:>14.1f}\n", row.variant, row.stats.median - *base,
               pool.value_or(0), poster.value_or(0) - *base_poster, start.value_or(0), p99.value_or(0));
  }
  print_ratios(r, "Goals:", 72);
}

// One measurement, in the child process the parent re-executed.
void run_child(const std::string& spec) {
  if (run_idle_child(spec) != 0) throw std::runtime_error("idle: writing the measurement failed");
}

const Register<IdleParams> reg{{
    .name = "idle", .page = 120, .seconds = {8, 20, 60},
    .title = "What an idle pool burns, and what its spin buys",
    .summary = "CPU burnt by an idle pool and by one task per millisecond, and the latency from post to start",
    .options = {real("--seconds", &IdleParams::seconds, "Idle phase length; the tick phase is twice it", 0.05, 60,
                     false),
                // One count; unset (0) is available_parallelism().
                integer("--workers,-w", &IdleParams::workers, "Workers per pool", 1, 256, "available_parallelism"),
                variants(&IdleParams::variants, idle_variants), reps(&IdleParams::reps)},
    .sizes = {[](IdleParams& p) {
                p.seconds = 0.25;
                p.reps = 1;
              },
              [](IdleParams& p) {
                p.seconds = 0.5;
                p.reps = 2;
              },
              nullptr},
    .run = run_idle,
    .heading = "Idle pools: process CPU ms over 1 s idle and over 2 s with a task every 1 ms, and the "
                "post-to-start latency",
    .print = print_table_and_goals,
    .child = run_child,
    // Each measurement in a child process of its own, so that threads another
    // variant left behind (oneTBB keeps its workers) are not counted.
    .prepare = [](IdleParams& p) { p.child_exe = "/proc/self/exe"; },
    .figures = {"idle_cpu", "idle_latency"}, .headlines = {"cpu_ms_idle_1s", "cpu_ms_tick_2s", "start_latency_us"},
}};

}  // namespace

}  // namespace weft::xp
