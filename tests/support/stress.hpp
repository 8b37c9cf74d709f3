// One knob for the size of every stress test: full size in optimised builds,
// smaller under the sanitizers (ThreadSanitizer runs ~10x slower and the CI
// budget is fixed). WEFT_STRESS_SCALE in the environment multiplies it.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "sanitizers.hpp"

namespace weft::test {

inline constexpr double kSanitizerScale = kSanitized ? 0.25 : 1.0;

// `n` scaled for this build; never below `floor`.
inline std::int64_t stress_count(std::int64_t n, std::int64_t floor = 1000) {
  double scale = kSanitizerScale;
  if (const char* env = std::getenv("WEFT_STRESS_SCALE")) scale *= std::atof(env);
  const auto scaled = static_cast<std::int64_t>(static_cast<double>(n) * scale);
  return scaled < floor ? floor : scaled;
}

}  // namespace weft::test
