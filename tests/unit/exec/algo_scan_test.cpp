#include "weft/exec/parallel_scan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "algo_support.hpp"
#include "watchdog.hpp"

namespace {

using weft::test::workers;

// x -> a*x + b, composed left then right (wrapping): associative, not
// commutative, so a block scanned from the wrong carry or combined in the
// wrong order shows.
struct Affine {
  std::uint64_t a;
  std::uint64_t b;
  bool operator==(const Affine&) const = default;
};
Affine compose(const Affine& l, const Affine& r) { return {l.a * r.a, r.a * l.b + r.b}; }

std::vector<Affine> affines(std::size_t n) {
  const auto raw = weft::test::random_values(2 * n, 1000, 3);
  std::vector<Affine> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = {static_cast<std::uint64_t>(raw[2 * i]), static_cast<std::uint64_t>(raw[2 * i + 1])};
  return v;
}

// Lengths beside the usual ones: around the serial cutoff (2 blocks) and
// ones that leave a remainder in the block split.
std::vector<std::size_t> lengths() {
  std::vector<std::size_t> ns(std::begin(weft::test::kLengths), std::end(weft::test::kLengths));
  ns.insert(ns.end(), {2 * weft::detail::kScanMinBlock - 1, 2 * weft::detail::kScanMinBlock, 5 * weft::detail::kScanMinBlock + 3});
  return ns;
}

TEST(ParallelScan, MatchesTheStandardScansAtEveryLength) {
  weft::test::Watchdog dog("scan lengths");
  for (int w : {1, 2, 3, 5}) {
    weft::ThreadPool pool(workers(w));
    for (std::size_t n : lengths()) {
      const auto v = affines(n);
      std::vector<Affine> want(n);
      std::vector<Affine> got(n);
      std::inclusive_scan(v.begin(), v.end(), want.begin(), compose);
      EXPECT_EQ(weft::parallel_inclusive_scan(pool, v.begin(), v.end(), got.begin(), compose), got.end());
      ASSERT_EQ(got, want) << "inclusive, " << n << " elements, " << w << " workers";
      const Affine init{3, 4};
      std::inclusive_scan(v.begin(), v.end(), want.begin(), compose, init);
      weft::parallel_inclusive_scan(pool, v.begin(), v.end(), got.begin(), compose, init);
      ASSERT_EQ(got, want) << "inclusive with init, " << n << " elements, " << w << " workers";
      std::exclusive_scan(v.begin(), v.end(), want.begin(), init, compose);
      EXPECT_EQ(weft::parallel_exclusive_scan(pool, v.begin(), v.end(), got.begin(), init, compose), got.end());
      ASSERT_EQ(got, want) << "exclusive, " << n << " elements, " << w << " workers";
    }
  }
}

TEST(ParallelScan, InPlace) {
  weft::ThreadPool pool(workers(3));
  for (std::size_t n : lengths()) {
    auto v = weft::test::random_values(n, 100);
    std::vector<std::int64_t> want(n);
    std::inclusive_scan(v.begin(), v.end(), want.begin());
    auto in = v;
    weft::parallel_inclusive_scan(pool, in.begin(), in.end(), in.begin());
    ASSERT_EQ(in, want) << "inclusive, " << n;
    std::exclusive_scan(v.begin(), v.end(), want.begin(), std::int64_t{-7});
    weft::parallel_exclusive_scan(pool, v.begin(), v.end(), v.begin(), std::int64_t{-7});
    ASSERT_EQ(v, want) << "exclusive, " << n;
  }
}

TEST(ParallelScan, ExceptionsReachTheCallerAndThePoolStaysUsable) {
  weft::ThreadPool pool(workers(2));
  const auto v = weft::test::random_values(200'000, 10);
  std::vector<std::int64_t> out(v.size());
  // Early (block 0 or a block sum in pass 1) and late (pass 2).
  for (long k : {1L, 60'000L, 190'000L, 250'000L}) {
    weft::test::ThrowOnCall op_throws(k);
    auto op = [&](std::int64_t a, std::int64_t b) {
      op_throws.tick();
      return a + b;
    };
    EXPECT_THROW(weft::parallel_inclusive_scan(pool, v.begin(), v.end(), out.begin(), op), std::runtime_error) << k;
    weft::test::ThrowOnCall op_throws2(k);
    auto op2 = [&](std::int64_t a, std::int64_t b) {
      op_throws2.tick();
      return a + b;
    };
    EXPECT_THROW(weft::parallel_exclusive_scan(pool, v.begin(), v.end(), out.begin(), std::int64_t{0}, op2),
                 std::runtime_error)
        << k;
  }
  std::vector<std::int64_t> want(v.size());
  std::inclusive_scan(v.begin(), v.end(), want.begin());
  weft::parallel_inclusive_scan(pool, v.begin(), v.end(), out.begin());
  EXPECT_EQ(out, want);
}

TEST(ParallelScan, NestedInsideATaskOfAOneWorkerPoolAndOnTheDefaultPool) {
  weft::test::Watchdog dog("nested scan on one worker");
  weft::ThreadPool pool(workers(1));
  const auto v = weft::test::random_values(100'000, 100);
  std::vector<std::int64_t> want(v.size());
  std::inclusive_scan(v.begin(), v.end(), want.begin());
  std::vector<std::int64_t> got(v.size());
  pool.submit([&] { weft::parallel_inclusive_scan(pool, v.begin(), v.end(), got.begin()); }).get();
  EXPECT_EQ(got, want);
  std::fill(got.begin(), got.end(), 0);
  weft::parallel_inclusive_scan(v.begin(), v.end(), got.begin());
  EXPECT_EQ(got, want);
  std::exclusive_scan(v.begin(), v.end(), want.begin(), std::int64_t{0});
  weft::parallel_exclusive_scan(v.begin(), v.end(), got.begin(), std::int64_t{0}, std::plus<>{});
  EXPECT_EQ(got, want);
}

}  // namespace
