// CPU-time reading for tests that bound how much a waiter burns.
#pragma once

#include <cstdint>
#include <ctime>

namespace weft::test {

inline std::int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace weft::test
