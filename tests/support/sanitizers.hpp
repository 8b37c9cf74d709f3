// Which sanitizer this test program was built with, for g++ (which defines
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__) and clang 14 (which defines
// neither and answers __has_feature instead).
#pragma once

// g++ 12 cannot even parse `__has_feature(x)` in an #if when it lacks it.
#if defined(__has_feature)
#define WEFT_TEST_HAS_FEATURE(x) __has_feature(x)
#else
#define WEFT_TEST_HAS_FEATURE(x) 0
#endif

namespace weft::test {

inline constexpr bool kAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__) || WEFT_TEST_HAS_FEATURE(address_sanitizer)
    true;
#else
    false;
#endif

inline constexpr bool kThreadSanitizer =
#if defined(__SANITIZE_THREAD__) || WEFT_TEST_HAS_FEATURE(thread_sanitizer)
    true;
#else
    false;
#endif

// Sanitized builds run several to ten times slower at everything.
inline constexpr bool kSanitized = kAddressSanitizer || kThreadSanitizer;

}  // namespace weft::test
