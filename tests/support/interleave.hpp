// Seeded random interleavings for the structures' sched_point() seams (see
// include/weft/detail/sched_point.hpp). While an Interleaving is alive, every
// sched point in every thread draws from a per-thread generator derived from
// the seed: about one in eight yields the CPU, one in eight spins 0–63
// pauses, the rest pass through. The decisions are reproducible from the
// seed (the OS scheduler's are not, so a failure may need a few runs of the
// same seed): set WEFT_INTERLEAVE_SEED to rerun just one seed.
#pragma once

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/sync/cpu_relax.hpp"

namespace weft::test {

namespace interleave_detail {
inline std::atomic<std::uint64_t> g_seed{0};
inline std::atomic<std::uint64_t> g_epoch{0};
inline std::atomic<std::uint64_t> g_threads{0};

inline std::uint64_t splitmix(std::uint64_t& s) noexcept {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline void hook() noexcept {
  struct State {
    std::uint64_t epoch = ~0ull;
    std::uint64_t rng = 0;
  };
  thread_local State st;
  // relaxed: test configuration, set before the threads under test start.
  const std::uint64_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (st.epoch != epoch) {
    st.epoch = epoch;
    st.rng = g_seed.load(std::memory_order_relaxed) * 0x2545f4914f6cdd1dull +
             g_threads.fetch_add(1, std::memory_order_relaxed);
  }
  const std::uint64_t x = splitmix(st.rng);
  switch (x & 7) {
    case 0:
      sched_yield();
      break;
    case 1:
      for (std::uint64_t i = 0, n = (x >> 8) & 63; i < n; ++i) cpu_relax();
      break;
    default:
      break;
  }
}
}  // namespace interleave_detail

class Interleaving {
 public:
  explicit Interleaving(std::uint64_t seed) noexcept {
    interleave_detail::g_seed.store(seed, std::memory_order_relaxed);
    interleave_detail::g_threads.store(0, std::memory_order_relaxed);
    interleave_detail::g_epoch.fetch_add(1, std::memory_order_relaxed);
    weft::detail::g_sched_hook = &interleave_detail::hook;
  }
  ~Interleaving() { weft::detail::g_sched_hook = nullptr; }
  Interleaving(const Interleaving&) = delete;
  Interleaving& operator=(const Interleaving&) = delete;
};

// The seeds to run: WEFT_INTERLEAVE_SEED alone if set, else 1..n (fewer
// under the sanitizers).
inline std::vector<std::uint64_t> seeds(std::int64_t n) {
  if (const char* env = std::getenv("WEFT_INTERLEAVE_SEED")) return {std::strtoull(env, nullptr, 10)};
  std::vector<std::uint64_t> s;
  const std::int64_t count = stress_count(n, 10);
  for (std::int64_t i = 1; i <= count; ++i) s.push_back(static_cast<std::uint64_t>(i));
  return s;
}

// Runs body(seed) under a seeded Interleaving for each of seeds(n), within
// a watchdog; a failure names its seed, a fatal one ends the loop. Every
// seeded run must complete; the count is printed for the record.
template <class Body>
void for_each_interleaving(const char* what, std::int64_t n, Body&& body) {
  Watchdog dog(std::string("interleaved ") + what, std::chrono::seconds(240));
  const std::vector<std::uint64_t> all = seeds(n);
  std::size_t runs = 0;
  for (std::uint64_t seed : all) {
    SCOPED_TRACE("WEFT_INTERLEAVE_SEED=" + std::to_string(seed));
    Interleaving il(seed);
    body(seed);
    if (::testing::Test::HasFatalFailure()) return;
    ++runs;
  }
  std::printf("%s: %zu seeded interleavings run\n", what, runs);
  EXPECT_EQ(runs, all.size());
}

}  // namespace weft::test
