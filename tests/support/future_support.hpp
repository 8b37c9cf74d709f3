// What the future tests share: a pool of n workers, a gate that keeps
// workers busy (so tasks stay queued for as long as a test needs) or holds
// tasks back, and a callable that counts its live copies (every copy
// destroyed exactly once, cancelled or run).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "weft/exec/thread_pool.hpp"
#include "weft/sync/event.hpp"

namespace weft::test {

inline PoolOptions workers(int n) {
  PoolOptions o;
  o.workers = n;
  return o;
}

class Gate {
 public:
  Gate() = default;
  // Also occupies `busy` workers of `pool` until release().
  Gate(ThreadPool& pool, int busy) {
    std::vector<Event> entered(static_cast<std::size_t>(busy));
    for (auto& e : entered)
      holds_.push_back(pool.submit([open = open_, &e] {
        e.set();
        open->wait();
      }));
    for (auto& e : entered) e.wait();
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  ~Gate() { release(); }
  void release() {
    open_->set();
    for (auto& h : holds_)
      if (h.valid()) h.get();
  }
  // A task body that returns `v` once the gate is open. It shares the
  // gate's event, so it may outlive the gate: a test that returns once
  // one task has finished (when_any) leaves the others waking up after
  // ~Gate opened them.
  template <class T>
  auto after_open(T v) {
    return [open = open_, v] {
      open->wait();
      return v;
    };
  }

 private:
  std::shared_ptr<Event> open_ = std::make_shared<Event>();
  std::vector<Future<void>> holds_;
};

// Counts live copies in `live` and runs in *runs; returns the run count.
// Relaxed: tests read the counts after joining threads or waiting for the
// futures, which synchronizes.
struct Counted {
  static inline std::atomic<long> live{0};
  std::atomic<int>* runs;
  explicit Counted(std::atomic<int>* r) : runs(r) { live.fetch_add(1, std::memory_order_relaxed); }
  Counted(const Counted& o) : runs(o.runs) { live.fetch_add(1, std::memory_order_relaxed); }
  Counted(Counted&& o) noexcept : runs(o.runs) { live.fetch_add(1, std::memory_order_relaxed); }
  ~Counted() { live.fetch_sub(1, std::memory_order_relaxed); }
  int operator()() const { return runs->fetch_add(1, std::memory_order_relaxed) + 1; }
};

}  // namespace weft::test
