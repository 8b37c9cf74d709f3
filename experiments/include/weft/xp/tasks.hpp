// weft/xp/tasks.hpp — the article "std::async+future vs thread pool"
// (Tkrzw author's blog, 2021), reproduced with weft's pool and its peers.
//
// N tiny tasks, each one relaxed atomic increment. Fire-and-forget variants
// queue them all and then wait for the lot (tasks per second); round-trip
// variants wait for each task before queuing the next (tasks per second and
// ns per round trip):
//
//   sync                    a plain call
//   std-deferred            std::async(launch::deferred) + get()
//   std-async               std::async(launch::async) + get(): a thread each
//   article-pool            the article's mutex+condvar pool (per worker count)
//   article-pool-future     that pool + std::promise/std::future, each waited at once
//   weft-post               ThreadPool::post all, then wait_idle()
//   weft-submit-get         submit(f).get(): get may run the task in place
//   weft-submit-get-remote  detail::wait_remote(submit(f)): a worker must run it
//   tbb-enqueue             oneTBB task_arena::enqueue + a completion count
//   tbb-task_group          oneTBB task_group run all + wait, and run+wait each
//   asio-post               Boost.Asio thread_pool + post, then join()
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

const std::vector<std::string>& tasks_variants();

struct TasksParams {
  std::int64_t tasks = 1'000'000;
  // std-async starts a thread per task: at most this many (the rate is per task).
  std::int64_t async_tasks = 20'000;
  // Round trips cost microseconds each: at most this many per run.
  std::int64_t round_trip_tasks = 50'000;
  std::vector<int> workers{1, 2, 4, 8, 16};
  std::vector<std::string> variants = tasks_variants();
  int reps = 5;
};

Result run_tasks(const TasksParams& p);

}  // namespace weft::xp
