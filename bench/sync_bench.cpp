// Micro-benchmarks of the signalling primitives' uncontended paths.
#include <benchmark/benchmark.h>

#include "weft/sync/cpu_relax.hpp"
#include "weft/sync/event.hpp"
#include "weft/sync/parker.hpp"

static void BM_CpuRelax(benchmark::State& state) {
  for (auto _ : state) weft::cpu_relax();
}
BENCHMARK(BM_CpuRelax);

// One thread signals a primitive of its own and consumes the signal, round
// after round: with nobody asleep on it, no system call on this path.
template <class Round>
static void BM_Uncontended(benchmark::State& state) {
  Round round;
  for (auto _ : state) round();
}

// set + wait + reset.
struct EventSetWaitReset {
  weft::Event e;
  void operator()() {
    e.set();
    e.wait();
    e.reset();
  }
};
BENCHMARK_TEMPLATE(BM_Uncontended, EventSetWaitReset);

// unpark + park: the permit is there when park() looks.
struct ParkerUnparkPark {
  weft::Parker p;
  void operator()() {
    p.unpark();
    p.park();
  }
};
BENCHMARK_TEMPLATE(BM_Uncontended, ParkerUnparkPark);
