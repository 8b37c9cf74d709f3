#include "weft/exec/parallel_reduce.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "algo_support.hpp"
#include "watchdog.hpp"
#include "weft/exec/default_pool.hpp"

namespace {

using weft::test::workers;

TEST(ParallelReduce, MatchesAccumulateAtEveryLength) {
  weft::test::Watchdog dog("reduce lengths");
  weft::test::at_every_length([](weft::ThreadPool& pool, std::size_t n, int w) {
    const auto v = weft::test::random_values(n, 1000);
    EXPECT_EQ(weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{5}, std::plus<>{}),
              std::accumulate(v.begin(), v.end(), std::int64_t{5}))
        << n << " elements, " << w << " workers";
    EXPECT_EQ(weft::parallel_transform_reduce(pool, v.begin(), v.end(), std::int64_t{0}, std::plus<>{},
                                              [](std::int64_t x) { return x * x; }),
              std::transform_reduce(v.begin(), v.end(), std::int64_t{0}, std::plus<>{},
                                    [](std::int64_t x) { return x * x; }))
        << n << " elements, " << w << " workers";
  });
}

// String concatenation is associative but not commutative: any swapped or
// repeated operand, or init in the wrong place, changes the answer.
TEST(ParallelReduce, KeepsOperandOrderAndInitOnTheLeft) {
  weft::ThreadPool pool(workers(3));
  std::vector<std::string> parts;
  for (int i = 0; i < 5000; ++i) parts.push_back(std::to_string(i) + ",");
  const std::string serial = std::accumulate(parts.begin(), parts.end(), std::string("init:"));
  for (std::size_t grain : {0u, 1u, 7u, 8u, 9u, 15u, 17u, 64u})
    EXPECT_EQ(weft::parallel_reduce(pool, parts.begin(), parts.end(), std::string("init:"), std::plus<>{}, grain),
              serial)
        << "grain " << grain;
}

// No default constructor, not copyable by accident: partials must be built
// in place.
struct Total {
  explicit Total(std::int64_t x) : value(x) {}
  Total(const Total&) = delete;
  Total(Total&&) = default;
  Total& operator=(Total&&) = default;
  std::int64_t value;
};

TEST(ParallelReduce, TypeWithoutDefaultConstructor) {
  weft::ThreadPool pool(workers(2));
  const auto v = weft::test::random_values(100'003, 50);
  const Total t = weft::parallel_transform_reduce(
      pool, v.begin(), v.end(), Total(1), [](Total a, Total b) { return Total(a.value + b.value); },
      [](std::int64_t x) { return Total(x); }, 100);
  EXPECT_EQ(t.value, std::accumulate(v.begin(), v.end(), std::int64_t{1}));
}

TEST(ParallelReduce, IndexSpaceBodiesGetSubrangesWithinTheGrain) {
  weft::ThreadPool pool(workers(3));
  // A range wider than int's positive half: offsets must not overflow.
  const int lo = -2'000'000'000;
  const int hi = 2'000'000'000;
  const std::int64_t sum = weft::parallel_reduce(
      pool, lo, hi, std::int64_t{0}, std::plus<>{},
      [](int a, int b) {
        if (b - a > 1 << 24 || b <= a) throw std::logic_error("leaf outside the grain");
        // The sum of [a, b) in closed form.
        return (static_cast<std::int64_t>(a) + b - 1) * (static_cast<std::int64_t>(b) - a) / 2;
      },
      std::size_t{1} << 24);
  EXPECT_EQ(sum, -2'000'000'000);  // -2e9 .. 2e9-1 pairs off to -2e9
  EXPECT_EQ(weft::parallel_reduce(pool, 10, 3, 42, std::plus<>{}, [](int, int) { return 1; }), 42);
}

template <class F>
std::vector<F> spread_values(std::size_t n) {
  // Large terms that cancel in pairs (shuffled apart) and small ones: the
  // partial sums are large, so every grouping rounds the small terms away
  // differently and the bits of the total depend on the tree.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<F> mant(F(0.5), F(1));
  std::uniform_int_distribution<int> big(10, 30);
  std::uniform_int_distribution<int> small(-30, 0);
  std::vector<F> v;
  for (std::size_t i = 0; i + 3 <= n; i += 3) {
    const F b = std::ldexp(mant(rng), big(rng));
    v.insert(v.end(), {b, -b, std::ldexp(mant(rng), small(rng))});
  }
  while (v.size() < n) v.push_back(F(1));
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

template <class F>
void expect_bitwise_deterministic() {
  using Bits = std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>;
  const auto v = spread_values<F>(200'003);
  for (std::size_t grain : {std::size_t{0}, std::size_t{97}}) {
    weft::ThreadPool one(workers(1));
    const Bits want = std::bit_cast<Bits>(weft::parallel_reduce(one, v.begin(), v.end(), F(0), std::plus<>{}, grain));
    // The test can fail: the serial left fold groups differently and lands
    // on other bits, so a reduce that followed the timing would too.
    EXPECT_NE(std::bit_cast<Bits>(std::accumulate(v.begin(), v.end(), F(0))), want);
    for (int w = 1; w <= 8; ++w) {
      weft::ThreadPool pool(workers(w));
      for (int run = 0; run < 50; ++run)
        ASSERT_EQ(std::bit_cast<Bits>(weft::parallel_reduce(pool, v.begin(), v.end(), F(0), std::plus<>{}, grain)),
                  want)
            << w << " workers, run " << run << ", grain " << grain;
    }
  }
}

TEST(ParallelReduce, BitwiseDeterministicDoubleSum) { expect_bitwise_deterministic<double>(); }
TEST(ParallelReduce, BitwiseDeterministicFloatSum) { expect_bitwise_deterministic<float>(); }

// One leaf (grain >= n) is the documented fold: blocks of 8 as balanced
// trees, left to right, then the tail one by one; shorter than 8, a left fold.
TEST(ParallelReduce, ALeafFoldsBlocksOfEightAsBalancedTrees) {
  weft::ThreadPool pool(workers(2));
  const auto v = spread_values<double>(1003);
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{1003}}) {
    auto block = [&](std::size_t i) {
      return ((v[i] + v[i + 1]) + (v[i + 2] + v[i + 3])) + ((v[i + 4] + v[i + 5]) + (v[i + 6] + v[i + 7]));
    };
    std::size_t i = n < 8 ? 1 : 8;
    double leaf = n < 8 ? v[0] : block(0);
    for (; i + 8 <= n; i += 8) leaf += block(i);
    for (; i < n; ++i) leaf += v[i];
    const double want = 0.5 + leaf;
    const auto end = v.begin() + static_cast<std::ptrdiff_t>(n);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(weft::parallel_reduce(pool, v.begin(), end, 0.5, std::plus<>{}, n)),
              std::bit_cast<std::uint64_t>(want))
        << n << " elements";
  }
}

TEST(ParallelReduce, TheTreeDependsOnTheGrain) {
  // The counterpart of the above: another split tree does give other bits
  // on this input, so equal bits there come from an equal tree.
  weft::ThreadPool pool(workers(2));
  const auto v = spread_values<double>(200'003);
  EXPECT_NE(std::bit_cast<std::uint64_t>(weft::parallel_reduce(pool, v.begin(), v.end(), 0.0, std::plus<>{}, 64)),
            std::bit_cast<std::uint64_t>(weft::parallel_reduce(pool, v.begin(), v.end(), 0.0, std::plus<>{}, 4096)));
}

TEST(ParallelReduce, ExceptionsFromEveryUserFunctionReachTheCaller) {
  weft::ThreadPool pool(workers(2));
  const auto v = weft::test::random_values(100'000, 10);
  for (long k : {1L, 500L, 99'000L}) {
    weft::test::ThrowOnCall op_throws(k);
    EXPECT_THROW(weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{0},
                                       [&](std::int64_t a, std::int64_t b) {
                                         op_throws.tick();
                                         return a + b;
                                       }),
                 std::runtime_error);
    weft::test::ThrowOnCall transform_throws(k);
    EXPECT_THROW(weft::parallel_transform_reduce(pool, v.begin(), v.end(), std::int64_t{0}, std::plus<>{},
                                                 [&](std::int64_t x) {
                                                   transform_throws.tick();
                                                   return x;
                                                 }),
                 std::runtime_error);
  }
  weft::test::ThrowOnCall body_throws(3);
  EXPECT_THROW(weft::parallel_reduce(
                   pool, 0, 100'000, 0L, std::plus<>{},
                   [&](int a, int b) {
                     body_throws.tick();
                     return static_cast<long>(b - a);
                   },
                   1000),
               std::runtime_error);
  // The pool is still usable.
  EXPECT_EQ(weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{0}, std::plus<>{}),
            std::accumulate(v.begin(), v.end(), std::int64_t{0}));
}

TEST(ParallelReduce, NestedInsideATaskOfAOneWorkerPool) {
  weft::test::Watchdog dog("nested reduce on one worker");
  weft::ThreadPool pool(workers(1));
  const auto v = weft::test::random_values(300'000, 100);
  auto f = pool.submit([&] {
    return weft::parallel_reduce(pool, 0, 8, std::int64_t{0}, std::plus<>{}, [&](int a, int b) {
      std::int64_t s = 0;
      for (int i = a; i < b; ++i) s += weft::parallel_reduce(pool, v.begin(), v.end(), std::int64_t{0}, std::plus<>{});
      return s;
    }, 1);
  });
  EXPECT_EQ(f.get(), 8 * std::accumulate(v.begin(), v.end(), std::int64_t{0}));
}

TEST(ParallelReduce, DefaultPoolForms) {
  const auto v = weft::test::random_values(50'000, 100);
  const std::int64_t want = std::accumulate(v.begin(), v.end(), std::int64_t{0});
  EXPECT_EQ(weft::parallel_reduce(v.begin(), v.end(), std::int64_t{0}, std::plus<>{}), want);
  EXPECT_EQ(weft::parallel_reduce(v.begin(), v.end(), std::int64_t{0}, std::plus<>{}, std::size_t{10}), want);
  EXPECT_EQ(weft::parallel_transform_reduce(v.begin(), v.end(), std::int64_t{0}, std::plus<>{}, std::identity{}), want);
  EXPECT_EQ(weft::parallel_reduce(0, 1000, 0, std::plus<>{}, [](int a, int b) { return b - a; }), 1000);
}

}  // namespace
