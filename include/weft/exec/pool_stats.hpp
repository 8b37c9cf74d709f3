/// @file
/// weft/exec/pool_stats.hpp — what a pool's workers have been doing.
///
///   weft::PoolStats s = pool.stats();
///   fmt::print("{} tasks, {} parks\n", s.total.tasks_run, s.total.parks);
///
/// Each worker keeps its own counts, written only by itself (a relaxed load
/// and store of its own line, no read-modify-write on anything shared), so
/// keeping them costs a store per event and nobody pays for reading them
/// but the reader. ThreadPool::stats() reads every field with a relaxed load:
/// a snapshot of a running pool is not one instant (two fields of a worker
/// may be a few events apart), but no count ever goes down, and once
/// wait_idle() has returned, tasks_run covers every task submitted before it.
///
/// Times are taken at the edges of a worker's sleep (steady_clock when it
/// parks and when it wakes), not per task: `busy` is time awake (running
/// tasks or searching for one), `idle` is time parked, each counted up to the
/// worker's last park or wake-up; the stretch in progress is not in either.
///
/// Wake-ups: `wakeups_sent` counts the parked workers this worker woke;
/// those woken by outside submitters and by shutdown() show up only as
/// `wakeups_received` of the worker woken.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

namespace weft {

/// How far a stolen task came, nearest first: from a worker on the thief's
/// core, one sharing its L2, its L3, its NUMA node, or anywhere else
/// (weft/detail/exec/victim_rings.hpp has the exact rule).
enum class StealRing : int { smt, l2, l3, numa, remote };
inline constexpr int kStealRings = 5;  ///< the number of StealRing values

/// What one worker has done since the pool started (ThreadPool::stats()).
struct WorkerStats {
  int index = -1;                          ///< the worker; -1 in PoolStats::total and seated
  int cpu = -1;                            ///< its pinned CPU, or where it started; -1 unknown or total
  std::uint64_t tasks_run = 0;             ///< tasks this worker finished (each task-graph node one, also one a chain handed on inside another's task)
  std::uint64_t steals_from_workers = 0;   ///< tasks taken from another worker's deque,
  std::array<std::uint64_t, kStealRings> steals_by_ring{};  ///< of which from each ring (by StealRing)
  std::uint64_t steals_from_submitters = 0;  ///< from an outside thread's injection deque
  /// tasks an outside thread's post() handed straight to this worker as it
  /// woke it, every worker having been asleep (not counted as steals)
  std::uint64_t handed_posts = 0;
  std::uint64_t failed_steal_rounds = 0;   ///< searches (rings in reach, submitters) that found nothing
  std::uint64_t parks = 0;                 ///< times it went to sleep
  std::uint64_t wakeups_sent = 0;          ///< parked workers it woke
  std::uint64_t wakeups_received = 0;      ///< times it was woken from a park
  std::uint64_t spins_found_work = 0;      ///< idle searches that found a task before parking
  std::chrono::nanoseconds busy{0};        ///< awake
  std::chrono::nanoseconds idle{0};        ///< parked

  /// Adds every count of `o` (the index stays).
  WorkerStats& operator+=(const WorkerStats& o) noexcept;
};

/// Every worker's WorkerStats, and their sum.
struct PoolStats {
  std::vector<WorkerStats> workers;  ///< by worker index
  /// What outside threads did in the pool's seat, computing a blocking
  /// algorithm or helping a TaskGroup::wait() as one of the P while a
  /// worker sat out
  /// (weft/detail/exec/seat.hpp): tasks run, steals, wake-ups sent, time
  /// seated as `busy`. Index and CPU -1.
  WorkerStats seated;
  WorkerStats total;                 ///< the sum over workers and seated
};

}  // namespace weft
