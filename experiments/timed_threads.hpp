// Threads started together and timed from the moment they are released:
// what the experiments' thread-based variants (io's copies, aio's
// pread and queue peers) use, so that thread creation is never timed
// against a weft pool that was started before its clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "weft/harness/run.hpp"
#include "weft/xp/result.hpp"

namespace weft::xp {

// What timed_threads() measured: wall seconds and process CPU ns, from the
// gate's opening to the last join.
struct ThreadsTimed {
  double seconds = 0;
  std::int64_t cpu_ns = 0;
};

// Runs body(i) for i in [0, n) on n new threads that start together: the
// threads are created and waiting before the clocks start (as a pool is
// started before its run is timed), so neither figure counts thread
// creation. Rethrows the first failure by index after every thread joined.
template <class Body>
ThreadsTimed timed_threads(int n, Body&& body) {
  harness::StartGate gate(n);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      gate.arrive_and_wait();
      try {
        body(i);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    });
  }
  gate.wait_ready();
  const std::int64_t cpu0 = process_cpu_ns(), t0 = wall_ns();
  gate.open();
  for (auto& t : threads) t.join();
  const ThreadsTimed out{static_cast<double>(wall_ns() - t0) / 1e9, process_cpu_ns() - cpu0};
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace weft::xp
