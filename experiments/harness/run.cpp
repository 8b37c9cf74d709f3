#include "weft/harness/run.hpp"

#include <chrono>
#include <thread>

#include "weft/topo/topology.hpp"

namespace weft::harness {

void StartGate::wait_ready() noexcept {
  // relaxed: a start count only; the threads' start is ordered by go_.
  while (ready_.load(std::memory_order_relaxed) < expected_) std::this_thread::yield();
}

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }

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
