// An associative op that is not commutative, for the scan tests: a chunk
// scanned from the wrong carry, or two totals combined in the wrong order,
// gives a wrong answer. x -> a*x + b, composed left then right (wrapping).
#pragma once

#include <cstdint>

namespace weft::test {

struct Affine {
  std::uint64_t a;
  std::uint64_t b;
  bool operator==(const Affine&) const = default;
};

inline Affine compose(const Affine& l, const Affine& r) { return {l.a * r.a, r.a * l.b + r.b}; }

}  // namespace weft::test
