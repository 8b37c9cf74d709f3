// What the parallel-algorithm tests share: pools of a given size, the sweep
// over pool sizes and input lengths, inputs made from one seed, and a
// functor that throws on its k-th call.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "weft/exec/thread_pool.hpp"

namespace weft::test {

inline weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

// The lengths every algorithm is checked at: empty, one, two, a prime, a
// million.
inline constexpr std::size_t kLengths[] = {0, 1, 2, 10007, 1'000'000};

// Calls check(pool, n, w) on a pool of w = 1, 2 and 3 workers at every
// length n of kLengths. A fatal failure (ASSERT_*) in check ends the sweep,
// as it ends a test that writes the two loops out.
template <class Check>
void at_every_length(const Check& check) {
  for (int w : {1, 2, 3}) {
    weft::ThreadPool pool(workers(w));
    for (std::size_t n : kLengths) {
      check(pool, n, w);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// n values in [0, range): range small means many duplicates.
inline std::vector<std::int64_t> random_values(std::size_t n, std::int64_t range, unsigned seed = 7) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(0, range - 1);
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Throws std::runtime_error("boom") on its k-th call across all threads
// (relaxed: only the count matters).
class ThrowOnCall {
 public:
  explicit ThrowOnCall(long k) : k_(k) {}
  void tick() {
    if (calls_.fetch_add(1, std::memory_order_relaxed) + 1 == k_) throw std::runtime_error("boom");
  }

 private:
  long k_;
  std::atomic<long> calls_{0};
};

}  // namespace weft::test
