// weft/detail/topo/text.hpp — what the topology parsers share: CPU lists
// (cpu_set.cpp) and cgroup files (cgroup.cpp) are text with stray blanks.
// Not part of the stable API.
#pragma once

#include <string_view>

namespace weft::detail {

inline constexpr std::string_view kSpace = " \t\n\r\f\v";

// `s` without leading and trailing blanks (kSpace).
constexpr std::string_view trim(std::string_view s) noexcept {
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

}  // namespace weft::detail
