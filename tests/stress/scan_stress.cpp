// parallel_inclusive_scan and parallel_exclusive_scan under load, run under
// ThreadSanitizer in CI: callers on several threads and nested in tasks
// share pools of 2 and 3 workers, so a window's two ends (the scanner's front,
// the folders' back) meet at every point and the folded chunks are shared by
// takers that arrive late or not at all. Lengths span the serial cutoff
// up to many chunks per worker; the op is associative and not commutative,
// so a chunk scanned from the wrong carry, or two totals combined in the
// wrong order, shows.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "affine.hpp"
#include "callers.hpp"
#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/parallel_scan.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

using weft::test::Affine;
using weft::test::compose;

void one_round(weft::ThreadPool& pool, std::mt19937_64& rng) {
  // Up to 12 chunks of kScanMinBlock: below the cutoff, at it, several.
  const std::size_t n = 1 + static_cast<std::size_t>(rng() % (12 * weft::detail::kScanMinBlock));
  std::vector<Affine> v(n);
  for (auto& x : v) x = {rng() % 1000, rng() % 1000};
  std::vector<Affine> want(n);
  std::vector<Affine> got(n);
  switch (rng() % 3) {
    case 0:
      std::inclusive_scan(v.begin(), v.end(), want.begin(), compose);
      weft::parallel_inclusive_scan(pool, v.begin(), v.end(), got.begin(), compose);
      break;
    case 1:
      std::exclusive_scan(v.begin(), v.end(), want.begin(), Affine{3, 4}, compose);
      weft::parallel_exclusive_scan(pool, v.begin(), v.end(), got.begin(), Affine{3, 4}, compose);
      break;
    default:  // in place
      std::inclusive_scan(v.begin(), v.end(), want.begin(), compose, Affine{5, 6});
      got = v;
      weft::parallel_inclusive_scan(pool, got.begin(), got.end(), got.begin(), compose, Affine{5, 6});
      break;
  }
  ASSERT_EQ(got, want) << n << " elements";
}

TEST(ScanStress, CallersAndNestedCallsOnTwoAndThreeWorkers) {
  weft::test::Watchdog dog("scans from 3 threads and nested");
  for (int w : {2, 3})
    weft::test::callers_and_nested(w, 3, weft::test::stress_count(40, 4), one_round);
}

}  // namespace
