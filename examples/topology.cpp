// docs/guide/topology.md: the machine as this process may use it, pinning
// and placement.
#include <weft/weft.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "expect.hpp"

int main() {
  const weft::Topology& topo = weft::Topology::instance();   // discovered once, thread-safe
  const weft::CpuSet& allowed = topo.allowed();   // the CPUs this process may use (taskset, cgroup cpuset)
  const auto& cores = topo.cores();              // each core's allowed SMT siblings
  const auto& caches = topo.caches();            // level, size, line, which CPUs share it
  const int cpu = allowed.first();
  weft::CpuSet siblings = topo.siblings(cpu);    // SMT siblings of `cpu` (itself included)
  int level = topo.shared_cache_level(cpu, cpu); // smallest cache both share (its L1), 0 if none
  int n = weft::available_parallelism();         // allowed CPUs, capped by a cgroup CPU quota
  std::printf("CPUs %s: %zu cores, %zu caches, %d worth running (%s)\n", allowed.to_string().c_str(),
              cores.size(), caches.size(), n, topo.source().c_str());
  expect(siblings.contains(cpu), "a CPU is among its own SMT siblings");
  expect(caches.empty() || level >= 1, "a CPU shares its first cache with itself");
  expect(n >= 1 && n <= allowed.count(), "available_parallelism() lies within the allowed CPUs");

  // Pinning
  weft::pin_this_thread(cpu);
  int now = weft::current_cpu();                 // the CPU this thread runs on
  expect(now == cpu, "a thread pinned to one CPU runs there");
  expect(weft::this_thread_affinity() == weft::CpuSet{cpu}, "its affinity is that CPU");
  weft::pin_this_thread(weft::process_allowed_cpus());   // free to move again
  weft::Event go;
  std::thread worker([&] { go.wait(); });
  weft::pin_thread(worker, weft::CpuSet::parse(allowed.to_string()));   // std::thread or std::jthread
  go.set();
  worker.join();

  int outside = 0;
  while (allowed.contains(outside)) ++outside;
  try {
    weft::pin_this_thread(outside);
    expect(false, "pinning outside the allowed set throws");
  } catch (const std::system_error& e) {
    std::printf("%s\n", e.what());   // weft: cannot pin to CPU 7: not in the allowed set 0-1
    expect(std::string(e.what()).find("CPU " + std::to_string(outside)) != std::string::npos,
           "the error names the CPU");
  }

  // Placement
  std::vector<int> cpus = weft::place(topo, weft::Placement::compact, n);
  expect(static_cast<int>(cpus.size()) == n, "one CPU per thread");
  for (const int c : cpus) expect(allowed.contains(c), "placed CPUs are allowed");
  try {
    (void)weft::place(topo, weft::Placement::one_per_core, static_cast<int>(cores.size()) + 1);
    expect(false, "one_per_core past the core count throws");
  } catch (const std::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  return 0;
}
