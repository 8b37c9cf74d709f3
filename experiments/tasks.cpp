#include "weft/xp/tasks.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>

#include "article_pool.hpp"
#include "peer_support.hpp"
#include "weft/detail/cache_line.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"

#ifdef WEFT_HAVE_ASIO
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#endif

namespace weft::xp {

const std::vector<std::string>& tasks_variants() {
  static const std::vector<std::string> names{
      "sync",      "std-deferred",    "std-async",          "article-pool", "article-pool-future",
      "weft-post", "weft-submit-get", "weft-submit-get-remote", "tbb-enqueue", "tbb-task_group",
      "asio-post"};
  return names;
}

namespace {

// The whole work of a task. Its own line, so that only the tasks share it.
struct alignas(detail::kCacheLine) Counter {
  std::atomic<std::int64_t> n{0};
  // relaxed: the task's work is the increment itself; each variant's own
  // completion wait orders it before the final check.
  void bump() noexcept { n.fetch_add(1, std::memory_order_relaxed); }
};

// The std::async variants keep this many futures before get()ting them: all
// of a million would hold a million states (and, for launch::async, that
// many unjoined threads).
constexpr std::size_t kFutureBatch = 256;

enum class Mode { fire_and_forget, round_trip };

struct Unit {
  std::string variant;
  int threads = 0;  // 0: no pool
  Mode mode = Mode::fire_and_forget;
  std::int64_t tasks = 0;
  bool available = true;
  std::string note;
  std::vector<double> seconds;
};

double elapsed_s(std::int64_t t0) { return static_cast<double>(wall_ns() - t0) / 1e9; }

void check(const Unit& u, const Counter& c) {
  const std::int64_t got = c.n.load(std::memory_order_relaxed);  // relaxed: the run has been waited for
  if (got != u.tasks) {
    throw std::runtime_error(u.variant + " with " + std::to_string(u.threads) + " threads ran " +
                             std::to_string(got) + " of " + std::to_string(u.tasks) + " tasks");
  }
}

double run_sync(std::int64_t n, Counter& c) {
  auto task = [&c] { c.bump(); };
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) task();
  return elapsed_s(t0);
}

double run_std(std::launch policy, std::int64_t n, Counter& c) {
  auto task = [&c] { c.bump(); };
  std::vector<std::future<void>> futures;
  futures.reserve(kFutureBatch);
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    futures.push_back(std::async(policy, task));
    if (futures.size() == kFutureBatch || i + 1 == n) {
      for (auto& f : futures) f.get();
      futures.clear();
    }
  }
  return elapsed_s(t0);
}

double run_article_pool(int w, std::int64_t n, Counter& c) {
  ArticlePool pool(w);
  pool.submit([] {});
  pool.wait_idle();  // the workers are up
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) pool.submit([&c] { c.bump(); });
  pool.wait_idle();
  return elapsed_s(t0);
}

double run_article_pool_future(int w, std::int64_t n, Counter& c) {
  ArticlePool pool(w);
  pool.submit([] {});
  pool.wait_idle();
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    std::promise<void> done;
    std::future<void> f = done.get_future();
    pool.submit([&c, &done] {
      c.bump();
      done.set_value();
    });
    f.get();
  }
  return elapsed_s(t0);
}

double run_weft_post(int w, std::int64_t n, Counter& c) {
  ThreadPool pool(PoolOptions{.workers = w});
  pool.post([] {});
  pool.wait_idle();
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) pool.post([&c] { c.bump(); });
  pool.wait_idle();
  return elapsed_s(t0);
}

double run_weft_submit_get(int w, std::int64_t n, Counter& c, bool remote) {
  ThreadPool pool(PoolOptions{.workers = w});
  pool.post([] {});
  pool.wait_idle();
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    auto f = pool.submit([&c] { c.bump(); });
    if (remote) {
      detail::get_remote(f);
    } else {
      f.get();
    }
  }
  return elapsed_s(t0);
}

#ifdef WEFT_HAVE_TBB
namespace tbb = oneapi::tbb;

double run_tbb_enqueue(int w, std::int64_t n, Counter& c) {
  TbbThreads limit(w);
  // No slot reserved for this thread: enqueued tasks are run by w workers.
  tbb::task_arena arena(w, 0);
  arena.initialize();
  std::atomic<std::int64_t> done{0};
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    arena.enqueue([&c, &done, n] {
      c.bump();
      // acq_rel: the last task sees every other task's work before it wakes
      // the waiter, whose acquire load then sees it too.
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == n) done.notify_all();
    });
  }
  // acquire: pairs with the last task's increment.
  for (std::int64_t v = done.load(std::memory_order_acquire); v != n; v = done.load(std::memory_order_acquire))
    done.wait(v, std::memory_order_acquire);
  return elapsed_s(t0);
}

double run_tbb_task_group(int w, std::int64_t n, Counter& c, Mode mode) {
  TbbThreads limit(w);
  // Concurrency w with one slot for this thread, which runs tasks in wait().
  tbb::task_arena arena(w);
  arena.initialize();
  double s = 0;
  arena.execute([&] {
    tbb::task_group g;
    const std::int64_t t0 = wall_ns();
    if (mode == Mode::fire_and_forget) {
      for (std::int64_t i = 0; i < n; ++i) g.run([&c] { c.bump(); });
      g.wait();
    } else {
      for (std::int64_t i = 0; i < n; ++i) {
        g.run([&c] { c.bump(); });
        g.wait();
      }
    }
    s = elapsed_s(t0);
  });
  return s;
}
#endif

#ifdef WEFT_HAVE_ASIO
double run_asio_post(int w, std::int64_t n, Counter& c) {
  boost::asio::thread_pool pool(static_cast<std::size_t>(w));
  const std::int64_t t0 = wall_ns();
  for (std::int64_t i = 0; i < n; ++i) boost::asio::post(pool, [&c] { c.bump(); });
  pool.join();  // waits for the queued work, then the threads exit
  return elapsed_s(t0);
}
#endif

double run_unit(const Unit& u, Counter& c) {
  const std::string& v = u.variant;
  const int w = u.threads;
  const std::int64_t n = u.tasks;
  if (v == "sync") return run_sync(n, c);
  if (v == "std-deferred") return run_std(std::launch::deferred, n, c);
  if (v == "std-async") return run_std(std::launch::async, n, c);
  if (v == "article-pool") return run_article_pool(w, n, c);
  if (v == "article-pool-future") return run_article_pool_future(w, n, c);
  if (v == "weft-post") return run_weft_post(w, n, c);
  if (v == "weft-submit-get") return run_weft_submit_get(w, n, c, false);
  if (v == "weft-submit-get-remote") return run_weft_submit_get(w, n, c, true);
#ifdef WEFT_HAVE_TBB
  if (v == "tbb-enqueue") return run_tbb_enqueue(w, n, c);
  if (v == "tbb-task_group") return run_tbb_task_group(w, n, c, u.mode);
#endif
#ifdef WEFT_HAVE_ASIO
  if (v == "asio-post") return run_asio_post(w, n, c);
#endif
  throw std::logic_error("tasks: no runner for " + v);
}

bool is_round_trip(const std::string& v) {
  return v == "article-pool-future" || v == "weft-submit-get" || v == "weft-submit-get-remote";
}

std::string count_note(std::int64_t used, std::int64_t asked, const char* why) {
  if (used == asked) return {};
  return std::to_string(used) + " of the " + std::to_string(asked) + " tasks (" + why + ")";
}

}  // namespace

std::vector<int> parse_workers(const std::string& list, int max) {
  std::vector<int> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw std::invalid_argument("an empty worker count in '" + list + "'");
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size()) throw std::invalid_argument("'" + item + "' is not a worker count");
    if (v < 1 || v > max)
      throw std::invalid_argument("worker count " + item + " is outside [1, " + std::to_string(max) + "]");
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) == out.end()) out.push_back(static_cast<int>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

const Row* find_row(const Result& r, const std::string& variant, int threads, const std::string& metric,
                    const std::string& mode) {
  for (const Row& row : r.rows) {
    if (row.variant != variant || row.threads != threads || row.metric != metric) continue;
    if (!mode.empty() && row.extra.value("mode", std::string()) != mode) continue;
    return &row;
  }
  return nullptr;
}

Result run_tasks(const TasksParams& p) {
  const std::int64_t async_n = std::min(p.tasks, p.async_tasks);
  const std::int64_t rt_n = std::min(p.tasks, p.round_trip_tasks);

  std::vector<Unit> units;
  auto wants = [&](const char* v) { return std::find(p.variants.begin(), p.variants.end(), v) != p.variants.end(); };
  for (const char* v : {"sync", "std-deferred", "std-async"}) {
    if (!wants(v)) continue;
    Unit u;
    u.variant = v;
    u.tasks = std::string(v) == "std-async" ? async_n : p.tasks;
    if (u.variant == "std-async") u.note = count_note(async_n, p.tasks, "a thread per task");
    units.push_back(std::move(u));
  }
  for (const std::string& v : tasks_variants()) {
    if (v == "sync" || v == "std-deferred" || v == "std-async" || !wants(v.c_str())) continue;
    for (int w : p.workers) {
      Unit u;
      u.variant = v;
      u.threads = w;
      u.mode = is_round_trip(v) ? Mode::round_trip : Mode::fire_and_forget;
      u.tasks = u.mode == Mode::round_trip ? rt_n : p.tasks;
      if (u.mode == Mode::round_trip) u.note = count_note(rt_n, p.tasks, "round trips");
      if ((v.rfind("tbb-", 0) == 0 && !kHaveTbb) || (v == "asio-post" && !kHaveAsio)) {
        u.available = false;
        u.note = v == "asio-post" ? kAsioMissing : kTbbMissing;
      }
      units.push_back(u);
      if (v == "tbb-task_group") {  // and its round trip: run + wait per task
        u.mode = Mode::round_trip;
        u.tasks = rt_n;
        if (u.available) u.note = count_note(rt_n, p.tasks, "round trips");
        units.push_back(std::move(u));
      }
    }
  }

  interleave(p.reps, static_cast<int>(units.size()), [&](int i, int) {
    Unit& u = units[static_cast<std::size_t>(i)];
    if (!u.available) return;
    Counter c;
    u.seconds.push_back(run_unit(u, c));
    check(u, c);
    settle();
  });

  Result r;
  r.experiment = "tasks";
  r.params = {{"tasks", p.tasks},
              {"async_tasks", async_n},
              {"round_trip_tasks", rt_n},
              {"workers", p.workers},
              {"reps", p.reps},
              {"variants", p.variants},
              {"task", "one relaxed atomic fetch_add"},
              {"std_future_batch", kFutureBatch},
              {"tbb_threads", "task_group: arena of `threads` incl. the caller; enqueue: `threads` workers"}};
  for (const Unit& u : units) {
    const bool rt = u.mode == Mode::round_trip;
    const nlohmann::json extra = {{"mode", rt ? "round_trip" : "fire_and_forget"}, {"tasks", u.tasks}};
    auto make_row = [&](const char* metric, const char* unit, double (*f)(double, std::int64_t)) {
      Row row;
      row.variant = u.variant;
      row.threads = u.threads;
      row.metric = metric;
      row.unit = unit;
      row.measured = u.available;
      row.note = u.note;
      row.extra = extra;
      std::vector<double> samples;
      for (double s : u.seconds) samples.push_back(f(s, u.tasks));
      row.stats = summarize(std::move(samples));
      return row;
    };
    auto rate = [](double s, std::int64_t n) { return static_cast<double>(n) / s; };
    auto per = [](double s, std::int64_t n) { return s * 1e9 / static_cast<double>(n); };
    // tbb-task_group's round trip is reported in ns only: its tasks_per_s
    // row is the fire-and-forget one.
    if (!(rt && u.variant == "tbb-task_group")) r.rows.push_back(make_row("tasks_per_s", "tasks/s", rate));
    if (rt) r.rows.push_back(make_row("round_trip_ns", "ns", per));
  }
  r.published = published("001_async_vs_pool");
  const int cpus = available_parallelism();
  const int most = p.workers.empty() ? 0 : *std::max_element(p.workers.begin(), p.workers.end());
  if (most > cpus) {
    r.notes.push_back("more workers (" + std::to_string(most) + ") than available CPUs (" + std::to_string(cpus) +
                      "): the extra threads only add contention");
  }
  r.notes.push_back("weft-submit-get may run the task in place on the waiting thread (like tbb-task_group's "
                    "run+wait); weft-submit-get-remote always waits for a worker");
  return r;
}

}  // namespace weft::xp
