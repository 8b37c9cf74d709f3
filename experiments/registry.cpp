#include "weft/xp/registry.hpp"

namespace weft::xp {

const char* to_string(Level level) noexcept {
  switch (level) {
    case Level::quick: return "quick";
    case Level::standard: return "default";
    case Level::full: return "full";
  }
  return "default";
}

const std::vector<Experiment>& experiments() {
  // Seconds: on the 2-CPU reference VM, warm-up included, rounded up.
  static const std::vector<Experiment> all{
      {"topo", "", "CPU topology", "Show the CPU topology this process may use", {0.5, 0.5, 0.5}, {}, {}},
      {"ring", "000_ring_latency", "Token ring: inter-thread signalling latency",
       "Token-ring signalling latency per flag (Qiita 2017: inter-thread signalling latency)",
       {8, 20, 120}, {"ring"},
       {"--reps 3", "--reps 5", "--reps 9"},
       {"ns_per_hop"}},
      {"c2c", "000_ring_latency", "Core-to-core latency", "Core-to-core latency matrix over the allowed CPUs",
       {0.5, 0.5, 1}, {"c2c_heatmap"},
       {"--samples 3", "--samples 7", "--samples 15"}},
      {"tasks", "001_async_vs_pool", "Tiny tasks: std::async against thread pools",
       "Tiny tasks through std::async and thread pools (Tkrzw blog 2021: std::async vs a thread pool)",
       {10, 18, 120}, {"tasks_per_s"},
       {"--tasks 200000 --async-tasks 5000 --round-trip-tasks 20000 --workers 1,2,4 --reps 3",
        "--tasks 500000 --async-tasks 10000 --round-trip-tasks 20000 --workers 1,2,4,8 --reps 3", ""},
       {"tasks_per_s", "round_trip_ns"}},
      {"smt", "002_affinity_smt", "Threads on cores, SMT siblings and one CPU",
       "Threads on cores, on SMT siblings and on one CPU (Bendersky 2016: affinity and hyperthreading)",
       {2, 4, 8}, {"smt_slowdown"},
       {"--size 10000000 --reps 3", "--size 50000000 --reps 3", "--size 50000000 --reps 5"}},
      {"alloc", "003_ders", "Allocators under threads",
       "Allocators under threads: the article's list benchmark (Derevyago, the ders library)", {5, 10, 30},
       {"alloc_seconds", "alloc_scalability"},
       {"--rounds 100 --threads 1,2 --reps 2 --pc-objects 300000",
        "--rounds 300 --threads 1,2 --reps 3 --pc-objects 500000",
        "--rounds 1000 --threads 1,2 --reps 3 --pc-objects 1000000"},
       {"seconds", "pc_ms"}},
      {"io", "003_ders", "File copies: byte by byte and by blocks",
       "Byte-by-byte and block file copies: stdio, iostream, weft (Derevyago, the ders library)", {3, 8, 20},
       {"io_mb_per_s"},
       {"--size-mb 16 --reps 2", "--size-mb 32 --reps 3", "--size-mb 100 --reps 3"},
       {"mb_per_s"}},
      {"spin", "004_sleep_loops", "How lock waiters wait",
       "How lock waiters wait: busy, yield, sleep, pause backoff (Intel: sleep loops for power and performance)",
       {10, 40, 90}, {"spin_wall_vs_cpu"},
       {"--work-ms 400 --time-limit 5 --threads 2,8 --granularity medium", "--work-ms 400 --time-limit 5",
        "--time-limit 5"},
       {"wall_ms", "cpu_s"}},
      {"fib", "", "Fork-join fib: the cost of a spawn", "Recursive fork-join Fibonacci: the cost of a spawn",
       {1, 2, 5}, {"fib_ms"},
       {"--n 25 --reps 3", "--n 30 --reps 5", "--n 30 --reps 9 --cutoff 12"},
       {"ms"}},
      {"pfor", "", "parallel_for overhead", "parallel_for overhead: many small loops, and a big sum", {1, 2, 5},
       {"pfor_ms", "worker_strip"},
       {"--rounds 50 --reps 3", "--reps 5", "--reps 9"},
       {"ms"}},
      {"algo", "", "Parallel algorithms against oneTBB and std::execution::par",
       "Parallel reduce, scan, sort, find and a pipeline: weft against std (serial and std::execution::par) and oneTBB",
       {10, 50, 120}, {"algo_vs_serial"},
       {"--n 5000000 --sort-n 1000000 --pipeline-n 100000 --reps 3",
        "--n 25000000 --sort-n 5000000 --pipeline-n 500000 --reps 5",
        "--n 50000000 --sort-n 10000000 --pipeline-n 1000000 --reps 5"},
       {"ms"}},
      {"coro", "", "Coroutines, futures and cancellation against oneTBB and Boost.Asio",
       "Coroutine fork-join, a hop onto the pool, fan-in and cancelling queued tasks: weft against oneTBB and "
       "Boost.Asio",
       {3, 15, 30}, {"coro_vs_peers"},
       {"--fib-n 25 --hops 20000 --fan-ins 5 --cancel-tasks 200000 --reps 3", "--reps 5", "--reps 9"},
       {"ms", "ns_per_hop", "us_per_fan_in", "cancel_ms"}},
      {"idle", "", "What an idle pool burns, and what its spin buys",
       "CPU burnt by an idle pool and by one task per millisecond, and the latency from post to start",
       {5, 20, 60}, {"idle_cpu", "idle_latency"},
       {"--seconds 0.25 --reps 1", "--seconds 0.5 --reps 2", "--seconds 1 --reps 3"},
       {"cpu_ms_idle_1s", "cpu_ms_tick_2s", "start_latency_us"}},
      {"scale", "", "Scaling: speed-up from one worker to every CPU, and past them",
       "Speed-up of fib, tasks, parallel_for and reduce from 1 worker to every allowed CPU (and K x them with "
       "--oversubscribe): weft against oneTBB",
       {3, 20, 45}, {"scale_speedup"},
       {"--fib-n 24 --tasks 20000 --pfor-n 100000 --reduce-n 2000000 --reps 2", "--oversubscribe 2",
        "--oversubscribe 8 --reps 5"},
       {"ms"}},
  };
  return all;
}

const Experiment* find_experiment(std::string_view name) {
  for (const Experiment& e : experiments())
    if (e.name == name) return &e;
  return nullptr;
}

nlohmann::json registry_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const Experiment& e : experiments()) {
    nlohmann::json seconds, args;
    for (Level l : kLevels) {
      seconds[to_string(l)] = e.seconds_at(l);
      args[to_string(l)] = e.args_at(l);
    }
    out.push_back({{"name", e.name},
                   {"article", e.article.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.article)},
                   {"title", e.title},
                   {"summary", e.summary},
                   {"seconds", std::move(seconds)},
                   {"args", std::move(args)},
                   {"figures", e.figures},
                   {"headlines", e.headlines}});
  }
  return out;
}

}  // namespace weft::xp
