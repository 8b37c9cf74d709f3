#include "weft/xp/fib.hpp"

#include <stdexcept>

#include "peer_support.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"

namespace weft::xp {

const std::vector<std::string>& fib_variants() {
  static const std::vector<std::string> names{"serial", "weft", "tbb"};
  return names;
}

namespace {

std::int64_t fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

bool spawns(int n, int cutoff) { return n >= 2 && n >= cutoff; }

std::int64_t fib_weft(ThreadPool& pool, int n, int cutoff) {
  if (n < 2) return n;
  if (n < cutoff) return fib_serial(n);
  std::int64_t a = 0;
  TaskGroup g{pool};
  g.run([&] { a = fib_weft(pool, n - 1, cutoff); });
  const std::int64_t b = fib_weft(pool, n - 2, cutoff);
  g.wait();
  return a + b;
}

#ifdef WEFT_HAVE_TBB
std::int64_t fib_tbb(int n, int cutoff) {
  if (n < 2) return n;
  if (n < cutoff) return fib_serial(n);
  std::int64_t a = 0;
  oneapi::tbb::task_group g;
  g.run([&] { a = fib_tbb(n - 1, cutoff); });
  const std::int64_t b = fib_tbb(n - 2, cutoff);
  g.wait();
  return a + b;
}
#endif

struct Unit {
  std::string variant;
  int threads = 0;
  int cutoff = 0;
  bool available = true;
  std::string note;
  std::vector<double> seconds;
};

// Returns seconds; the value goes to `out`.
double run_unit(const Unit& u, int n, std::int64_t& out) {
  if (u.variant == "serial") {
    const std::int64_t t0 = wall_ns();
    out = fib_serial(n);
    return static_cast<double>(wall_ns() - t0) / 1e9;
  }
  if (u.variant == "weft") {
    ThreadPool pool(PoolOptions{.workers = u.threads});
    pool.post([] {});
    pool.wait_idle();  // the workers are up
    const std::int64_t t0 = wall_ns();
    // get_remote: the root runs on a worker, as every other call does.
    auto root = pool.submit([&] { return fib_weft(pool, n, u.cutoff); });
    out = detail::get_remote(root);
    return static_cast<double>(wall_ns() - t0) / 1e9;
  }
#ifdef WEFT_HAVE_TBB
  if (u.variant == "tbb") {
    TbbThreads limit(u.threads);
    oneapi::tbb::task_arena arena(u.threads);  // this thread takes one of the slots
    arena.initialize();
    double s = 0;
    arena.execute([&] {
      const std::int64_t t0 = wall_ns();
      out = fib_tbb(n, u.cutoff);
      s = static_cast<double>(wall_ns() - t0) / 1e9;
    });
    return s;
  }
#endif
  throw std::logic_error("fib: no runner for " + u.variant);
}

}  // namespace

std::int64_t fib_spawns(int n, int cutoff) {
  if (!spawns(n, cutoff)) return 0;
  return 1 + fib_spawns(n - 1, cutoff) + fib_spawns(n - 2, cutoff);
}

Result run_fib(const FibParams& p) {
  if (p.n < 0 || p.n > kFibMaxN) throw std::invalid_argument("fib: n out of range");
  const std::vector<int> workers = p.workers.empty() ? std::vector<int>{available_parallelism()} : p.workers;
  std::vector<int> cutoffs{0};
  if (p.cutoff > 0) cutoffs.push_back(p.cutoff);
  const std::int64_t expected = fib_serial(p.n);

  std::vector<Unit> units;
  for (const std::string& v : p.variants) {
    for (int c : cutoffs) {
      if (v == "serial") {
        if (c != 0) continue;  // the cutoff changes nothing serially
        units.push_back(Unit{v, 0, 0, true, {}, {}});
        continue;
      }
      for (int w : workers) {
        Unit u{v, w, c, true, c > 0 ? "cutoff " + std::to_string(c) : std::string(), {}};
        if (v == "tbb" && !kHaveTbb) {
          u.available = false;
          u.note = kTbbMissing;
        }
        units.push_back(std::move(u));
      }
    }
  }

  interleave(p.reps, static_cast<int>(units.size()), [&](int i, int) {
    Unit& u = units[static_cast<std::size_t>(i)];
    if (!u.available) return;
    std::int64_t value = -1;
    u.seconds.push_back(run_unit(u, p.n, value));
    if (value != expected) {
      throw std::runtime_error("fib(" + std::to_string(p.n) + ") by " + u.variant + " gave " +
                               std::to_string(value) + ", expected " + std::to_string(expected));
    }
    settle();
  });

  Result r;
  r.experiment = "fib";
  r.params = {{"n", p.n},         {"cutoff", p.cutoff}, {"workers", workers},
              {"reps", p.reps},   {"variants", p.variants}, {"fib", expected},
              {"spawns_no_cutoff", fib_spawns(p.n, 0)},
              {"tbb_threads", "arena of `threads` including the calling thread"}};
  if (p.cutoff > 0) r.params["spawns_cutoff"] = fib_spawns(p.n, p.cutoff);
  for (const Unit& u : units) {
    // serial: per call that would have spawned without a cutoff.
    const std::int64_t spawned = fib_spawns(p.n, u.cutoff);
    const double per = static_cast<double>(spawned > 0 ? spawned : 1);
    Row ms;
    ms.variant = u.variant;
    ms.threads = u.threads;
    ms.metric = "ms";
    ms.unit = "ms";
    ms.measured = u.available;
    ms.note = u.note;
    ms.extra = {{"cutoff", u.cutoff}, {"spawns", u.variant == "serial" ? 0 : spawned}};
    std::vector<double> a, b;
    for (double s : u.seconds) {
      a.push_back(s * 1e3);
      b.push_back(s * 1e9 / per);
    }
    ms.stats = summarize(std::move(a));
    Row ns = ms;
    ns.metric = "ns_per_task";
    ns.unit = "ns";
    ns.stats = summarize(std::move(b));
    if (u.variant == "serial") ns.note = "per call that spawns in the parallel variants";
    r.rows.push_back(std::move(ms));
    r.rows.push_back(std::move(ns));
  }
  return r;
}

}  // namespace weft::xp
