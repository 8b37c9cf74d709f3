// weft/xp/coro.hpp — weft's coroutines, futures and task groups against
// oneTBB and Boost.Asio.
//
// Workloads (the `workload` label of a row) and their variants:
//
//   fib      fork-join fib(`fib_n`) with no cutoff: weft-task (Task +
//            co_await when_all), weft-taskgroup, tbb (task_group).
//            Metric ns_per_spawn: time over the calls with n >= 2 (each
//            forks one child), and ms.
//   hop      `hops` suspensions of one coroutine onto the pool and back:
//            weft-task (co_await pool.schedule()), asio (co_await
//            asio::post(pool, use_awaitable) in a co_spawn'd awaitable on an
//            asio::thread_pool). Metric ns_per_hop.
//   fan-in   `fan_in` tiny tasks started and all joined, `fan_ins` times per
//            sample: weft-future (submit + when_all(vector).get()),
//            weft-task (co_await when_all(vector of Task)), weft-taskgroup
//            (run + wait on a worker), weft-taskgroup-caller (run + wait on
//            the calling thread, which takes the pool's seat), tbb
//            (task_group run + wait), asio (post + a count-down). Metric
//            us_per_fan_in.
//   cancel   `cancel_tasks` tasks queued in a group whose workers are all
//            blocked, then cancel(): weft-taskgroup, tbb
//            (task_group::cancel). Metric cancel_ms, from the cancel() call
//            until wait() returns; no task may have run.
//
// Threads: weft runs on a pool of `workers` (the fork-join roots on a
// worker); tbb in a task_arena of `workers` slots, the calling thread one of
// them; asio on an asio::thread_pool of `workers` threads. Each row's note
// says where the work ran in the unrecorded warm-up run (the timed runs do
// not look): on how many threads, and how much of it on the thread that
// started it (tbb's caller is one of its slots, so part of its work runs
// there); the hop's note says how many hops changed thread.
//
// ratios (extra): the goals with this run's medians, each with
// "met".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

// The variant names, and the workload names in run order.
const std::vector<std::string>& coro_variants();
const std::vector<std::string>& coro_workloads();

struct CoroParams {
  int fib_n = 30;
  std::int64_t hops = 100'000;
  std::int64_t fan_in = 10'000;      // tasks per fan-in
  int fan_ins = 20;                  // fan-ins per sample
  std::int64_t cancel_tasks = 1'000'000;
  std::vector<int> workers = {2};
  std::vector<std::string> variants = coro_variants();
  std::vector<std::string> workloads = coro_workloads();
  int reps = 5;
};

Result run_coro(const CoroParams& p);

}  // namespace weft::xp
