// One knob for the size of every stress test: full size in optimised builds,
// smaller under the sanitizers (ThreadSanitizer runs ~10x slower and the CI
// budget is fixed). WEFT_STRESS_SCALE in the environment multiplies it.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace weft::test {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr double kSanitizerScale = 0.25;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr double kSanitizerScale = 0.25;
#else
inline constexpr double kSanitizerScale = 1.0;
#endif
#else
inline constexpr double kSanitizerScale = 1.0;
#endif

// `n` scaled for this build; never below `floor`.
inline std::int64_t stress_count(std::int64_t n, std::int64_t floor = 1000) {
  double scale = kSanitizerScale;
  if (const char* env = std::getenv("WEFT_STRESS_SCALE")) scale *= std::atof(env);
  const auto scaled = static_cast<std::int64_t>(static_cast<double>(n) * scale);
  return scaled < floor ? floor : scaled;
}

}  // namespace weft::test
