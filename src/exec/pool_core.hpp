// The pool's insides: workers, injection deques, and the sleep/wake protocol.
// See docs/design/pool.md for the protocol and its correctness argument.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "weft/detail/cache_line.hpp"
#include "weft/detail/exec/deque.hpp"
#include "idle_workers.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/sync/parker.hpp"

namespace weft::detail {

// A deque plus the count of tasks pushed into it, both written only by the
// deque's owner (a worker, or one outside thread).
struct alignas(kCacheLine) Source {
  WorkStealingDeque deque;
  // Tasks ever pushed here; owner-written (relaxed store of its own value
  // plus one), read by wait_idle().
  alignas(kCacheLine) std::atomic<std::uint64_t> pushed{0};
};

struct alignas(kCacheLine) Worker {
  Source source;
  Parker parker;
  // Tasks this worker has finished; owner-written, read by wait_idle().
  alignas(kCacheLine) std::atomic<std::uint64_t> completed{0};
  int index = 0;
  int cpu = -1;
  std::vector<int> victims;  // other workers, those sharing the nearest cache first
  std::uint64_t rng = 0;
  std::thread thread;
};

class PoolCore {
 public:
  explicit PoolCore(PoolOptions options);
  ~PoolCore();

  void push(Task* t);
  void wait_idle();
  void shutdown();
  void record_exception(std::exception_ptr e) noexcept;
  bool help_one(Worker& w) noexcept;
  bool quiescent() const noexcept;

  int size() const noexcept { return static_cast<int>(workers_.size()); }
  const std::vector<int>& cpus() const noexcept { return cpus_; }

 private:
  friend class ::weft::ThreadPool;
  friend class IdleWorkers;
  static constexpr int kMaxInjectors = 256;

  void run_worker(Worker& w);
  Task* find_task(Worker& w) noexcept;
  Task* steal_any(Worker& w) noexcept;
  bool anything_queued() const noexcept;
  Source& injector_for_this_thread();

 public:
  void execute(Worker& w, Task* t) noexcept;
  // See ThreadPool::take_back().
  std::size_t take_back(bool (*take)(Task*, const void*) noexcept, const void* ctx) noexcept;

 private:
  PoolOptions options_;
  std::vector<int> cpus_;
  std::vector<std::unique_ptr<Worker>> workers_;

  // Injection deques, one per outside thread that submits (owned by that
  // thread's id), appended under injectors_mutex_ and published through
  // injector_count_ (release) so thieves can scan without the lock.
  std::array<std::atomic<Source*>, kMaxInjectors> injectors_{};
  alignas(kCacheLine) std::atomic<int> injector_count_{0};
  std::mutex injectors_mutex_;
  std::unordered_map<std::thread::id, std::unique_ptr<Source>> injector_owners_;
  // Past kMaxInjectors outside threads share this one, pushing under its mutex.
  Source overflow_;
  std::mutex overflow_mutex_;

  // Sleep/wake protocol and quiescence waits (docs/design/pool.md).
  IdleWorkers idle_{*this};

  alignas(kCacheLine) std::atomic<bool> closed_{false};  // outside submissions refused
  std::atomic<bool> stop_{false};                        // workers exit once idle
  bool joined_ = false;
  std::mutex shutdown_mutex_;

  std::mutex error_mutex_;
  std::exception_ptr first_error_;
  std::uint64_t dropped_errors_ = 0;
  std::uint64_t id_;
};

// The calling thread's worker, if it is one, and its pool.
struct WorkerContext {
  PoolCore* pool = nullptr;
  Worker* worker = nullptr;
};
WorkerContext& this_worker() noexcept;

}  // namespace weft::detail
