// Which sanitizer this test program was built with, for g++ (which defines
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__) and clang 14 (which defines
// neither and answers __has_feature instead).
#pragma once

namespace weft::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

// Sanitized builds run several to ten times slower at everything.
inline constexpr bool kSanitized = kAddressSanitizer || kThreadSanitizer;

}  // namespace weft::test
