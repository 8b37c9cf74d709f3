// weft/detail/queue/ring_capacity.hpp — the queues' shared capacity rule.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace weft::detail {

// `requested` rounded up to a power of two, at least 2 (so an index can be
// masked instead of divided). Throws std::invalid_argument naming `who` for
// 0 or more than 2^40.
inline std::size_t ring_capacity(const char* who, std::size_t requested) {
  if (requested == 0 || requested > (std::size_t{1} << 40))
    throw std::invalid_argument(std::string(who) + ": capacity must be in [1, 2^40], got " +
                                std::to_string(requested));
  std::size_t c = 2;
  while (c < requested) c <<= 1;
  return c;
}

}  // namespace weft::detail
