// weft/detail/sync/word_states.hpp — the values of Event's and Parker's
// futex words. Their state tables and protocols are in weft/sync/event.hpp
// and weft/sync/parker.hpp; the values are internal (tests name them only
// through the behaviour they cause).
#pragma once

#include <cstdint>

namespace weft::detail {

struct EventWord {
  static constexpr std::uint32_t kUnset = 0;
  static constexpr std::uint32_t kSet = 1;      // bit 0
  static constexpr std::uint32_t kWaiters = 2;  // bit 1: someone may sleep; never with kSet
  static constexpr std::uint32_t kStop = 4;     // bits 2..: one stop; the count wraps, the low bits stay
};

struct ParkerWord {
  static constexpr std::uint32_t kEmpty = 0;
  static constexpr std::uint32_t kNotified = 1;
  static constexpr std::uint32_t kParked = 0xffffffffu;  // kEmpty - 1: fetch_sub lands here
  static_assert(kNotified - 1 == kEmpty && kEmpty - 1 == kParked,
                "park() relies on one fetch_sub moving kNotified->kEmpty and kEmpty->kParked");
};

}  // namespace weft::detail
