// weft_pickup: where the forced remote round trip's time goes, rep by rep.
//
// Each rep builds a fresh pool (as `weft tasks` does), runs --round-trips
// submit + wait_remote round trips from this thread (the
// `weft-submit-get-remote` variant), and right after them measures a
// cache-line hop with two bare spinning threads in the same process, so the
// ratio compares two figures taken at the same moment of a host that moves
// its vCPUs. Beside each rep it prints what the threads did meanwhile, from
// the kernel and the pool's own counters:
//   cpu ms       CPU time of the submitter and of the workers together
//                (two busy threads on two CPUs is the expected picture)
//   invol        involuntary context switches of the submitter and of the
//                workers: thousands mean two of them shared one CPU
//   parks        worker parks (each one a wake-up later)
//   top share    the share of the tasks the busiest worker ran
//
// --pin apart pins the submitter to the first allowed CPU and the workers
// to the others for the round trips, so the kernel cannot put the submitter
// and the worker that serves it on one CPU: the round trip of the protocol
// alone, for comparison with unpinned reps, which are what a program that
// does not pin gets. The bare hop stays unpinned either way, as `weft ring`
// runs by default (pinned, its two threads hopped ~20 ns slower here, which
// would flatter the ratio).
//
// Speed is measured here, never asserted. Linux only (/proc/thread-self).
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "weft/detail/exec/remote_wait.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/affinity.hpp"
#include "weft/xp/program_options.hpp"
#include "weft/xp/stats.hpp"

namespace {

// --pin apart: every allowed CPU, the submitter's (the first) and the others.
struct CpuSplit {
  weft::CpuSet allowed, first, rest;
};
CpuSplit split_allowed_cpus(const weft::xp::ProgramOptions& args) {
  CpuSplit s;
  try {
    s.allowed = weft::this_thread_affinity();
  } catch (const std::system_error& e) {
    args.fail(std::string("--pin apart: ") + e.what());
  }
  if (s.allowed.count() < 2) args.fail("--pin apart needs at least 2 allowed CPUs");
  s.first = {s.allowed.first()};
  s.rest = s.allowed - s.first;
  return s;
}

struct Options {
  int workers = 2;
  long round_trips = 50'000;
  long hops = 200'000;
  int reps = 10;
  bool apart = false;
  CpuSplit split{};  // with apart
};

Options parse_options(int argc, char** argv) {
  const weft::xp::ProgramOptions args("weft_pickup", "--workers N --round-trips N --hops N --reps R --pin none|apart");
  Options o;
  args.parse(argc, argv, [&](const char* flag, const char* v) {
    const auto is = [flag](const char* name) { return std::strcmp(flag, name) == 0; };
    if (is("--workers")) o.workers = static_cast<int>(args.integer(flag, v, 1, 4096));
    else if (is("--round-trips")) o.round_trips = args.integer(flag, v, 1, 1'000'000'000);
    else if (is("--hops")) o.hops = args.integer(flag, v, 2, 1'000'000'000);
    else if (is("--reps")) o.reps = static_cast<int>(args.integer(flag, v, 1, 1000));
    else if (is("--pin")) {
      if (std::strcmp(v, "apart") != 0 && std::strcmp(v, "none") != 0)
        args.fail(std::string("--pin wants 'none' or 'apart', got '") + v + "'");
      o.apart = std::strcmp(v, "apart") == 0;
    }
    else return false;
    return true;
  });
  if (o.apart) o.split = split_allowed_cpus(args);
  return o;
}

using weft::detail::now_ns;  // steady clock, ns

// The calling thread's CPU time and involuntary switches so far.
struct ThreadUse {
  double cpu_ms = 0;
  long involuntary = 0;
  int cpu = -1;  // where the thread was running when it read these
};
ThreadUse this_thread_use() {
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) != 0) return {};
  const auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return {ms(u.ru_utime) + ms(u.ru_stime), u.ru_nivcsw, weft::current_cpu()};
}

// ns per hop of one cache line passed back and forth by two spinning threads.
double bare_hop_ns(long hops) {
  alignas(64) std::atomic<long> turn{0};
  const long n = hops - hops % 2;
  std::thread other([&] {
    // acquire/release: a hand-over, as in `weft ring`'s flags.
    for (long i = 1; i < n; i += 2) {
      while (turn.load(std::memory_order_acquire) != i) {
      }
      turn.store(i + 1, std::memory_order_release);
    }
  });
  const std::int64_t t0 = now_ns();
  for (long i = 0; i < n; i += 2) {
    turn.store(i + 1, std::memory_order_release);  // release/acquire: the same hand-over back
    while (turn.load(std::memory_order_acquire) != i + 2) {
    }
  }
  const std::int64_t dt = now_ns() - t0;
  other.join();
  return static_cast<double>(dt) / static_cast<double>(n);
}

struct Rep {
  double round_trip_ns, hop_ns;
  double submitter_cpu_ms, workers_cpu_ms;
  long submitter_invol, workers_invol;
  std::uint64_t parks;
  double top_share;
};

Rep one_rep(const Options& o) {
  const CpuSplit* split = o.apart ? &o.split : nullptr;
  if (split != nullptr) weft::pin_this_thread(split->first);
  // Each worker reads its own counters: at start (after the warm-up task
  // below, so a thread's start is not counted) and at stop.
  std::vector<ThreadUse> at_start(static_cast<std::size_t>(o.workers)), at_stop(at_start.size());
  weft::PoolOptions opts{.workers = o.workers};
  opts.on_worker_stop = [&](int i) { at_stop[static_cast<std::size_t>(i)] = this_thread_use(); };
  // A pin that throws goes to weft's error handler and leaves the worker
  // unpinned: the check after the rep catches that.
  if (split != nullptr) opts.on_worker_start = [split](int) { weft::pin_this_thread(split->rest); };
  Rep r{};
  weft::PoolStats before, after;
  double submitter_ms = 0;
  long submitter_invol = 0;
  int submitter_cpu = -1;
  {
    weft::ThreadPool pool(opts);
    // One task per worker records its start figures; each waits until all
    // have started, so every worker runs exactly one.
    std::atomic<int> started{0};
    for (int i = 0; i < o.workers; ++i)
      pool.post([&, n = o.workers] {
        at_start[static_cast<std::size_t>(weft::ThreadPool::current_worker_index())] = this_thread_use();
        // relaxed: a count only; at_start is read after the pool joined its workers.
        started.fetch_add(1, std::memory_order_relaxed);
        while (started.load(std::memory_order_relaxed) < n) std::this_thread::yield();  // relaxed: as above
      });
    pool.wait_idle();
    before = pool.stats();
    const ThreadUse s0 = this_thread_use();
    const std::int64_t t0 = now_ns();
    for (long i = 0; i < o.round_trips; ++i) weft::detail::wait_remote(pool.submit([] {}));
    const std::int64_t dt = now_ns() - t0;
    const ThreadUse s1 = this_thread_use();
    after = pool.stats();
    r.round_trip_ns = static_cast<double>(dt) / static_cast<double>(o.round_trips);
    submitter_ms = s1.cpu_ms - s0.cpu_ms;
    submitter_invol = s1.involuntary - s0.involuntary;
    submitter_cpu = s1.cpu;
  }  // the workers stop here: on_worker_stop has run for each
  if (split != nullptr) weft::pin_this_thread(split->allowed);  // the hop runs unpinned, as `weft ring`'s default
  r.hop_ns = bare_hop_ns(o.hops);
  r.submitter_cpu_ms = submitter_ms;
  r.submitter_invol = submitter_invol;
  // --pin apart promised the submitter a CPU of its own: check that it had
  // one, rather than print an unpinned figure under a pinned heading.
  if (split != nullptr)
    for (std::size_t i = 0; i < at_stop.size(); ++i)
      if (!split->rest.contains(at_stop[i].cpu) || !split->first.contains(submitter_cpu)) {
        std::fprintf(stderr,
                     "weft_pickup: --pin apart did not hold: the submitter ran on CPU %d, worker %zu on CPU %d\n",
                     submitter_cpu, i, at_stop[i].cpu);
        std::exit(1);
      }
  std::uint64_t most = 0, all = 0;
  for (std::size_t i = 0; i < at_start.size(); ++i) {
    r.workers_cpu_ms += at_stop[i].cpu_ms - at_start[i].cpu_ms;
    r.workers_invol += at_stop[i].involuntary - at_start[i].involuntary;
    const std::uint64_t ran = after.workers[i].tasks_run - before.workers[i].tasks_run;
    most = std::max(most, ran);
    all += ran;
  }
  r.parks = after.total.parks - before.total.parks;
  r.top_share = all == 0 ? 0 : static_cast<double>(most) / static_cast<double>(all);
  return r;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse_options(argc, argv);
  std::printf("workers %d, %ld round trips and %ld bare hops per rep (worker figures include the pool's stop)%s\n",
              o.workers, o.round_trips, o.hops,
              o.apart ? "; round trips with the submitter pinned to the first allowed CPU, the workers to the others"
                      : "");
  std::printf("%5s %11s %8s %6s | %13s %13s | %6s %9s\n", "rep", "round trip", "hop", "ratio", "cpu ms sub/wk",
              "invol sub/wk", "parks", "top share");
  std::vector<double> ratios;
  for (int i = 0; i < o.reps; ++i) {
    const Rep r = one_rep(o);
    ratios.push_back(r.round_trip_ns / r.hop_ns);
    std::printf("%5d %8.0f ns %5.1f ns %6.1f | %6.1f/%-6.1f %6ld/%-6ld | %6llu %8.0f%%\n", i + 1, r.round_trip_ns,
                r.hop_ns, ratios.back(), r.submitter_cpu_ms, r.workers_cpu_ms, r.submitter_invol, r.workers_invol,
                static_cast<unsigned long long>(r.parks), 100 * r.top_share);
  }
  const weft::xp::Stats s = weft::xp::summarize(std::move(ratios));
  std::printf("round trip / bare hop: median %.1f (min %.1f, max %.1f, %d reps)\n", s.median, s.min, s.max, s.reps);
} catch (const std::exception& e) {  // a pin the kernel refused, a pool that could not start
  std::fprintf(stderr, "weft_pickup: %s\n", e.what());
  return 1;
}
