#include "weft/xp/idle.hpp"

#include <sys/wait.h>
#include <time.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "article_pool.hpp"
#include "peer_support.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"

#ifdef WEFT_HAVE_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#endif

namespace weft::xp {

const std::vector<std::string>& idle_variants() {
  static const std::vector<std::string> names{"baseline", "weft", "tbb", "asio-post", "article-pool"};
  return names;
}

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

std::unique_ptr<Host> make_host(const std::string& variant, int workers) {
  if (variant == "baseline") return std::make_unique<InlineHost>();
  if (variant == "weft") return std::make_unique<WeftHost>(workers);
  if (variant == "article-pool") return std::make_unique<ArticleHost>(workers);
#ifdef WEFT_HAVE_TBB
  if (variant == "tbb") return std::make_unique<TbbHost>(workers);
#endif
#ifdef WEFT_HAVE_ASIO
  if (variant == "asio-post") return std::make_unique<AsioHost>(workers);
#endif
  throw std::invalid_argument("idle: variant '" + variant + "' is not available");
}

bool available(const std::string& variant) {
  if (variant == "tbb") return kHaveTbb;
  if (variant == "asio-post") return kHaveAsio;
  return true;
}

struct Done {
  std::atomic<std::int64_t> n{0};
  // relaxed: the tasks have no results; the count only tells when they ran.
  void bump() noexcept { n.fetch_add(1, std::memory_order_relaxed); }
  // Sleeps rather than spins: the spinning would be counted as the pool's.
  // relaxed: as bump(); nothing the tasks wrote is read afterwards.
  void wait_for(std::int64_t target) const {
    while (n.load(std::memory_order_relaxed) < target) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
};

struct Sample {
  std::int64_t idle_cpu_ns = 0;
  std::int64_t tick_cpu_ns = 0;
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
    const std::int64_t cpu0 = process_cpu_ns();
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
      host->post([&done] { done.bump(); });
    }
    done.wait_for(ticks + 1);
    s.tick_cpu_ns = process_cpu_ns() - cpu0;
  }
  return s;
}

std::string spec_of(const std::string& variant, int workers, double seconds) {
  std::ostringstream o;
  o << variant << ':' << workers << ':' << seconds;
  return o.str();
}

Sample measure_in_child(const std::string& exe, const std::string& spec) {
  // Neither holds a quote: the path is our own binary's, the spec our own.
  const std::string cmd = "'" + exe + "' idle --internal-child '" + spec + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("idle: cannot start " + cmd);
  std::string out;
  std::array<char, 512> buf{};
  std::size_t got;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), got);
  const int status = pclose(p);
  Sample s;
  std::istringstream in(out);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !(in >> s.idle_cpu_ns >> s.tick_cpu_ns))
    throw std::runtime_error("idle: the measurement '" + spec + "' failed: " + out);
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
  std::printf("%lld %lld\n", static_cast<long long>(s.idle_cpu_ns), static_cast<long long>(s.tick_cpu_ns));
  return std::fflush(stdout) == 0 ? 0 : 1;
}

Result run_idle(const IdleParams& p) {
  const int workers = p.workers > 0 ? p.workers : available_parallelism();
  std::string exe = p.child_exe;
  if (exe == "/proc/self/exe") exe = std::filesystem::read_symlink(exe).string();  // the shell would see itself
  const std::size_t nv = p.variants.size();
  std::vector<std::vector<double>> idle(nv), tick(nv);
  interleave(p.reps, static_cast<int>(nv), [&](int i, int) {
    const std::string& v = p.variants[static_cast<std::size_t>(i)];
    if (!available(v)) return;
    const Sample s = exe.empty() ? measure(v, workers, p.seconds) : measure_in_child(exe, spec_of(v, workers, p.seconds));
    // Scaled to the metric's nominal duration: --seconds may shorten the run.
    idle[static_cast<std::size_t>(i)].push_back(static_cast<double>(s.idle_cpu_ns) / 1e6 / p.seconds);
    tick[static_cast<std::size_t>(i)].push_back(static_cast<double>(s.tick_cpu_ns) / 1e6 / p.seconds);
    settle();
  });

  Result r;
  r.experiment = "idle";
  r.params = {{"seconds", p.seconds},
              {"tick_seconds", 2 * p.seconds},
              {"tick_ms", kTickNs / 1'000'000},
              {"workers", workers},
              {"reps", p.reps},
              {"variants", p.variants},
              {"isolation", exe.empty() ? "in process" : "a child process per measurement"},
              {"scaled_to", "idle: 1 s, tick: 2 s"}};
  for (std::size_t v = 0; v < nv; ++v) {
    const std::string& name = p.variants[v];
    Row a;
    a.variant = name;
    a.threads = name == "baseline" ? 0 : workers;
    a.metric = "cpu_ms_idle_1s";
    a.unit = "ms";
    a.measured = available(name);
    if (!a.measured) a.note = name == "tbb" ? kTbbMissing : kAsioMissing;
    a.stats = summarize(idle[v]);
    Row b = a;
    b.metric = "cpu_ms_tick_2s";
    b.stats = summarize(tick[v]);
    if (a.measured && name == "baseline") {
      a.note = "the measuring thread asleep, no pool";
      b.note = "the ticking thread runs each task itself";
    }
    r.rows.push_back(std::move(a));
    r.rows.push_back(std::move(b));
  }
  return r;
}

}  // namespace weft::xp
