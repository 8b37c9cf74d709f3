// weft/detail/cache_line.hpp — keeping hot atomics on lines of their own.
#pragma once

#include <cstddef>

namespace weft::detail {

// 64-byte lines on every x86-64 and most AArch64 parts. Not
// std::hardware_destructive_interference_size: g++ warns that its value may
// change between compiler versions, which would change our ABI.
inline constexpr std::size_t kCacheLine = 64;

// A T alone on its cache line(s): no false sharing with neighbours.
template <class T>
struct alignas(kCacheLine) CacheAligned {
  T value{};
};

}  // namespace weft::detail
