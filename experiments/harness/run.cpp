#include "weft/harness/run.hpp"

#include <time.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "weft/topo/topology.hpp"

namespace weft::harness {

void StartGate::wait_ready() noexcept {
  // relaxed: a start count only; the threads' start is ordered by go_.
  while (ready_.load(std::memory_order_relaxed) < expected_) std::this_thread::yield();
}

namespace {
std::int64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

std::int64_t process_cpu_ns() noexcept { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }
std::int64_t thread_cpu_ns() noexcept { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }
std::int64_t wall_ns() noexcept { return clock_ns(CLOCK_MONOTONIC); }

// How long a peer's threads go on spinning after its run is the peer's and
// the host's business (oneTBB's workers linger, libgomp's team spins through
// GOMP_SPINCOUNT, whose length in time depends on the CPU's `pause`), so a
// fixed wait is either too short on some host or wasted on most. Instead:
// 10 ms windows until one in which the rest of the process used under a
// tenth of a CPU, at most 250 ms (a peer told to spin for ever,
// OMP_WAIT_POLICY=active, is then measured as it asked). The process clock
// counts a thread that runs on another CPU only at the scheduler's tick
// (every 4 ms at HZ=250), so a window must span a few ticks.
void settle() {
  constexpr std::int64_t kWindowMs = 10;
  constexpr std::int64_t kMaxNs = 250'000'000;
  // The other threads' CPU time: the process's less this thread's.
  auto others_cpu_ns = [] { return process_cpu_ns() - thread_cpu_ns(); };
  const std::int64_t start = wall_ns();
  std::int64_t cpu = others_cpu_ns();
  std::int64_t t = start;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kWindowMs));
    const std::int64_t cpu2 = others_cpu_ns();
    const std::int64_t t2 = wall_ns();
    if ((cpu2 - cpu) * 10 < t2 - t || t2 - start >= kMaxNs) return;
    cpu = cpu2;
    t = t2;
  }
}

int usable_cpus() { return available_parallelism(); }

std::vector<int> counts_or_usable(const std::vector<int>& given) {
  return given.empty() ? std::vector<int>{usable_cpus()} : given;
}

std::string oversubscribed_note(const char* what, int threads, const std::string& consequence) {
  const int cpus = usable_cpus();
  if (threads <= cpus) return {};
  return "more " + std::string(what) + " (" + std::to_string(threads) + ") than available CPUs (" +
         std::to_string(cpus) + "): " + consequence;
}

}  // namespace weft::harness
