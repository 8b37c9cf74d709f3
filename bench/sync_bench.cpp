// Micro-benchmarks of the signalling primitives' uncontended paths.
#include <benchmark/benchmark.h>

#include "weft/sync/cpu_relax.hpp"
#include "weft/sync/event.hpp"
#include "weft/sync/parker.hpp"

static void BM_CpuRelax(benchmark::State& state) {
  for (auto _ : state) weft::cpu_relax();
}
BENCHMARK(BM_CpuRelax);

// set + wait + reset with nobody asleep: no system call on this path.
static void BM_EventSetWaitReset(benchmark::State& state) {
  weft::Event e;
  for (auto _ : state) {
    e.set();
    e.wait();
    e.reset();
  }
}
BENCHMARK(BM_EventSetWaitReset);

// unpark + park on one thread: the permit is there when park() looks.
static void BM_ParkerUnparkPark(benchmark::State& state) {
  weft::Parker p;
  for (auto _ : state) {
    p.unpark();
    p.park();
  }
}
BENCHMARK(BM_ParkerUnparkPark);
