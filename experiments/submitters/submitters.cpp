// weft_submitters: what many outside submitting threads cost the pool.
//
//   round trip: one outside thread submits a task and waits until a worker
//     ran it (the `weft-submit-get-remote` round trip of `weft tasks`), with
//     `--idle-submitters K` other threads that submitted once and stay alive
//     and idle meanwhile: their injection slots are what thieves might walk.
//   throughput: `--concurrent M` threads post `--tasks-per P` tasks each, all
//     at once, timed from the start gate to wait_idle().
//
// Prints one line per measurement: the median over --reps with min and max.
// Speed is measured here, never asserted.
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "weft/detail/exec/remote_wait.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/xp/program_options.hpp"
#include "weft/xp/stats.hpp"

namespace {

struct Options {
  int workers = 2;
  int idle_submitters = 255;
  long round_trips = 20'000;
  int concurrent = 1000;
  int tasks_per = 100;
  int reps = 7;
};

Options parse_options(int argc, char** argv) {
  const weft::xp::ProgramOptions args(
      "weft_submitters", "--workers N --idle-submitters K --round-trips N --concurrent M --tasks-per P --reps R");
  Options o;
  args.parse(argc, argv, [&](const char* flag, const char* v) {
    const auto is = [flag](const char* name) { return std::strcmp(flag, name) == 0; };
    if (is("--workers")) o.workers = static_cast<int>(args.integer(flag, v, 1, 4096));
    else if (is("--idle-submitters")) o.idle_submitters = static_cast<int>(args.integer(flag, v, 0, 4000));
    else if (is("--round-trips")) o.round_trips = args.integer(flag, v, 1, 1'000'000'000);
    else if (is("--concurrent")) o.concurrent = static_cast<int>(args.integer(flag, v, 1, 4000));
    else if (is("--tasks-per")) o.tasks_per = static_cast<int>(args.integer(flag, v, 1, 1'000'000));
    else if (is("--reps")) o.reps = static_cast<int>(args.integer(flag, v, 1, 1000));
    else return false;
    return true;
  });
  return o;
}

using weft::detail::now_ns;  // steady clock, ns

void print(const char* what, const char* unit, std::vector<double> samples) {
  const weft::xp::Stats s = weft::xp::summarize(std::move(samples));
  std::printf("%s: median %.1f %s (min %.1f, max %.1f, %d reps)\n", what, s.median, unit, s.min, s.max, s.reps);
}

// ns per round trip, `idle` other outside threads registered and alive.
std::vector<double> round_trip(const Options& o, int idle) {
  weft::ThreadPool pool(weft::PoolOptions{.workers = o.workers});
  std::barrier registered(idle + 1);
  std::atomic<bool> leave{false};
  std::vector<std::thread> idlers;
  for (int i = 0; i < idle; ++i)
    idlers.emplace_back([&] {
      pool.post([] {});
      registered.arrive_and_wait();
      leave.wait(false, std::memory_order_acquire);  // acquire: a stop flag only; asleep till then
    });
  registered.arrive_and_wait();
  pool.wait_idle();
  std::vector<double> samples;
  for (int r = 0; r < o.reps; ++r) {
    const std::int64_t t0 = now_ns();
    for (long i = 0; i < o.round_trips; ++i) weft::detail::wait_remote(pool.submit([] {}));
    samples.push_back(static_cast<double>(now_ns() - t0) / static_cast<double>(o.round_trips));
  }
  leave.store(true, std::memory_order_release);  // release: pairs with the idlers' acquire
  leave.notify_all();
  for (auto& t : idlers) t.join();
  return samples;
}

// tasks/s with `o.concurrent` threads posting at once.
std::vector<double> throughput(const Options& o) {
  std::vector<double> samples;
  for (int r = 0; r < o.reps; ++r) {
    weft::ThreadPool pool(weft::PoolOptions{.workers = o.workers});
    std::atomic<long> ran{0};
    std::barrier gate(o.concurrent + 1);
    std::vector<std::thread> submitters;
    for (int i = 0; i < o.concurrent; ++i)
      submitters.emplace_back([&] {
        gate.arrive_and_wait();
        // relaxed: counted for the check after wait_idle() only.
        for (int k = 0; k < o.tasks_per; ++k) pool.post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
      });
    gate.arrive_and_wait();
    const std::int64_t t0 = now_ns();
    for (auto& t : submitters) t.join();
    pool.wait_idle();
    const std::int64_t dt = now_ns() - t0;
    const long want = static_cast<long>(o.concurrent) * o.tasks_per;
    // relaxed: wait_idle() returned, so every task's increment happened before.
    if (ran.load(std::memory_order_relaxed) != want) {
      std::fprintf(stderr, "weft_submitters: ran %ld of %ld tasks\n", ran.load(std::memory_order_relaxed), want);
      std::exit(1);
    }
    samples.push_back(static_cast<double>(want) * 1e9 / static_cast<double>(dt));
  }
  return samples;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  std::printf("workers %d\n", o.workers);
  print("round trip, 1 outside thread", "ns", round_trip(o, 0));
  const std::string with = "round trip, " + std::to_string(o.idle_submitters) + " idle outside threads besides";
  print(with.c_str(), "ns", round_trip(o, o.idle_submitters));
  const std::string tp = std::to_string(o.concurrent) + " concurrent submitters x " + std::to_string(o.tasks_per);
  print(tp.c_str(), "tasks/s", throughput(o));
}
