// Several threads calling into one pool at once, half of the time from
// inside a pool task: the load shape of the algorithm stress tests (calls
// from outside and nested calls interleaving on the same workers).
#pragma once

#include <cstdint>
#include <random>

#include "threads.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft::test {

// Runs round(pool, rng) `rounds` times on each of `callers` threads, on
// one pool of `workers`; every odd round runs inside a task of the pool
// (nested), the others on the caller. Thread t's rng is seeded with t, so
// a failure replays.
template <class Round>
void callers_and_nested(int workers, int callers, std::int64_t rounds, const Round& round) {
  weft::PoolOptions o;
  o.workers = workers;
  weft::ThreadPool pool(o);
  on_threads(callers, [&](int t) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(t));
    for (std::int64_t r = 0; r < rounds; ++r) {
      if (r % 2 == 0)
        round(pool, rng);
      else
        pool.submit([&] { round(pool, rng); }).get();
    }
  });
}

}  // namespace weft::test
