// ThreadPool::stats(): a relaxed snapshot of every worker's counters (and
// the seat's guest's), and their sum.
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "pool_core.hpp"
#include "weft/exec/pool_stats.hpp"

namespace weft {
namespace detail {

PoolStats PoolCore::stats() const {
  PoolStats s;
  s.workers.reserve(workers_.size());
  const auto read = [](const Worker& w) {
    const WorkerCounters& c = w.counters;
    // relaxed: a snapshot of counters nothing is published through.
    auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    WorkerStats ws;
    ws.tasks_run = get(w.completed) + get(c.handed_on);
    for (std::size_t r = 0; r < ws.steals_by_ring.size(); ++r) {
      ws.steals_by_ring[r] = get(c.steals_by_ring[r]);
      ws.steals_from_workers += ws.steals_by_ring[r];
    }
    ws.steals_from_submitters = get(c.steals_from_submitters);
    ws.handed_posts = get(c.handed_posts);
    ws.failed_steal_rounds = get(c.failed_steal_rounds);
    ws.parks = get(c.parks);
    ws.wakeups_sent = get(c.wakeups_sent);
    ws.wakeups_received = get(c.wakeups_received);
    ws.spins_found_work = get(c.spins_found_work);
    ws.busy = std::chrono::nanoseconds(static_cast<std::int64_t>(get(c.busy_ns)));
    ws.idle = std::chrono::nanoseconds(static_cast<std::int64_t>(get(c.idle_ns)));
    return ws;
  };
  for (const auto& w : workers_) {
    WorkerStats ws = read(*w);
    ws.index = w->index;
    ws.cpu = w->cpu;  // written before the workers were released, never after
    s.total += ws;
    s.workers.push_back(ws);
  }
  // The guest's index is the seated thread's to write: not read here.
  s.seated = read(*guest_);
  s.total += s.seated;
  return s;
}

}  // namespace detail

WorkerStats& WorkerStats::operator+=(const WorkerStats& o) noexcept {
  tasks_run += o.tasks_run;
  steals_from_workers += o.steals_from_workers;
  steals_from_submitters += o.steals_from_submitters;
  handed_posts += o.handed_posts;
  failed_steal_rounds += o.failed_steal_rounds;
  for (std::size_t r = 0; r < steals_by_ring.size(); ++r) steals_by_ring[r] += o.steals_by_ring[r];
  parks += o.parks;
  wakeups_sent += o.wakeups_sent;
  wakeups_received += o.wakeups_received;
  spins_found_work += o.spins_found_work;
  busy += o.busy;
  idle += o.idle;
  return *this;
}

}  // namespace weft
