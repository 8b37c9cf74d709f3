#include "weft/exec/parallel_sort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "algo_support.hpp"
#include "watchdog.hpp"

namespace {

using weft::test::workers;
using Values = std::vector<std::int64_t>;

// Inputs that have broken quicksorts: random, few distinct keys, all equal,
// sorted, reversed, organ pipe.
std::vector<std::pair<const char*, Values>> shapes(std::size_t n) {
  std::vector<std::pair<const char*, Values>> s;
  s.emplace_back("random", weft::test::random_values(n, 1'000'000'000));
  s.emplace_back("few keys", weft::test::random_values(n, 4));
  s.emplace_back("all equal", Values(n, 5));
  Values up(n);
  for (std::size_t i = 0; i < n; ++i) up[i] = static_cast<std::int64_t>(i);
  s.emplace_back("sorted", up);
  s.emplace_back("reversed", Values(up.rbegin(), up.rend()));
  Values pipe(n);
  for (std::size_t i = 0; i < n; ++i) pipe[i] = static_cast<std::int64_t>(std::min(i, n - i));
  s.emplace_back("organ pipe", pipe);
  return s;
}

// The million-element inputs run on the 2-worker pool only, which keeps
// the set fast under ThreadSanitizer; the short ones on every pool.
std::vector<std::pair<const char*, Values>> shapes_for(std::size_t n, int w) {
  if (n >= 1'000'000 && w != 2) return {};
  return shapes(n);
}

// Calls check(pool, v, where) for every shape at every length on every
// pool (shapes_for), `where` naming the three for a failure's message; the
// first fatal failure ends the sweep.
template <class Check>
void at_every_shape(const Check& check) {
  weft::test::at_every_length([&](weft::ThreadPool& pool, std::size_t n, int w) {
    for (const auto& [name, v] : shapes_for(n, w)) {
      check(pool, v, std::string(name) + ", " + std::to_string(n) + " elements, " + std::to_string(w) + " workers");
      if (::testing::Test::HasFatalFailure()) return;
    }
  });
}

TEST(ParallelSort, MatchesStdSortOnEveryShapeAndLength) {
  weft::test::Watchdog dog("sort shapes");
  at_every_shape([](weft::ThreadPool& pool, const Values& v, const std::string& where) {
    Values want = v;
    std::sort(want.begin(), want.end(), std::greater<>{});
    Values got = v;
    weft::parallel_sort(pool, got.begin(), got.end(), std::greater<>{});
    ASSERT_EQ(got, want) << where << ", greater";
    std::sort(want.begin(), want.end());
    weft::parallel_sort(pool, got.begin(), got.end());
    ASSERT_EQ(got, want) << where << ", less";
  });
}

// A key and where it came from; compared on the key alone.
struct Tagged {
  std::int64_t key;
  std::size_t seq;
  bool operator==(const Tagged&) const = default;
};
constexpr auto by_key = [](const Tagged& a, const Tagged& b) { return a.key < b.key; };

TEST(ParallelStableSort, MatchesStdStableSortOnEveryShapeAndLength) {
  weft::test::Watchdog dog("stable sort shapes");
  at_every_shape([](weft::ThreadPool& pool, const Values& v, const std::string& where) {
    std::vector<Tagged> in(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) in[i] = {v[i] % 1000, i};
    auto want = in;
    std::stable_sort(want.begin(), want.end(), by_key);
    weft::parallel_stable_sort(pool, in.begin(), in.end(), by_key);
    ASSERT_EQ(in, want) << where;
  });
}

// Move-only, and (for the stable sort's buffer) no default constructor.
struct Boxed {
  explicit Boxed(std::int64_t x) : p(std::make_unique<std::int64_t>(x)) {}
  std::unique_ptr<std::int64_t> p;
};
constexpr auto boxed_less = [](const Boxed& a, const Boxed& b) { return *a.p < *b.p; };

std::vector<Boxed> boxed(const Values& v) {
  std::vector<Boxed> b;
  b.reserve(v.size());
  for (auto x : v) b.emplace_back(x);
  return b;
}
Values unbox(const std::vector<Boxed>& b) {
  Values v;
  for (const auto& x : b) v.push_back(*x.p);
  return v;
}

TEST(ParallelSort, MoveOnlyElements) {
  weft::ThreadPool pool(workers(2));
  const auto v = weft::test::random_values(300'007, 1000);
  Values want = v;
  std::sort(want.begin(), want.end());
  auto a = boxed(v);
  weft::parallel_sort(pool, a.begin(), a.end(), boxed_less);
  EXPECT_EQ(unbox(a), want);
  auto b = boxed(v);
  weft::parallel_stable_sort(pool, b.begin(), b.end(), boxed_less);
  EXPECT_EQ(unbox(b), want);
}

// v sorted by a comparator that throws at its k-th call (the throw must
// reach the caller), then sorted again by std::sort: v's elements, sorted,
// if the failed sort kept them all.
Values sorted_after_a_throw_at(weft::ThreadPool& pool, const Values& v, long k) {
  weft::test::ThrowOnCall throws(k);
  Values got = v;
  EXPECT_THROW(weft::parallel_sort(pool, got.begin(), got.end(),
                                   [&](std::int64_t a, std::int64_t b) {
                                     throws.tick();
                                     return a < b;
                                   }),
               std::runtime_error)
      << k;
  std::sort(got.begin(), got.end());
  return got;
}

// The leaves' serial sort where comp may throw, at every depth budget: a
// budget of 0 is all heap sort, 1 one partition and then heap sorts, 64
// partitions down to insertion sorts.
TEST(ParallelSort, TheThrowSafeLeafSortMatchesStdSort) {
  for (std::size_t n : {0, 1, 2, 16, 17, 100, 1000, 5000}) {
    for (int depth : {0, 1, 64}) {
      Values v = weft::test::random_values(n, 40, static_cast<unsigned>(n) + 1);
      Values want = v;
      std::sort(want.begin(), want.end());
      auto comp = [](std::int64_t a, std::int64_t b) { return a < b; };  // may throw, to the type system
      weft::detail::serial_sort(v.begin(), v.end(), comp, depth, false);
      EXPECT_EQ(v, want) << n << " elements, depth " << depth;
    }
  }
}

// A throw at every comparison of a sort of one leaf (one worker, fewer
// elements than the cutoff, with runs long enough for an insertion sort to
// shift them): wherever it lands, the range still holds every element once.
// std::sort holds an element outside the range while it shifts others, so
// a leaf sorted by it lost that element when the throw came then (seen
// once in a few full runs of ComparatorExceptionsReachTheCallerAndNothingIsLost).
TEST(ParallelSort, AThrowAtAnyComparisonOfALeafLosesNoElement) {
  weft::ThreadPool pool(workers(1));
  const auto v = weft::test::random_values(600, 50);
  Values want = v;
  std::sort(want.begin(), want.end());
  long calls = 0;
  {
    Values all = v;
    weft::parallel_sort(pool, all.begin(), all.end(), [&](std::int64_t a, std::int64_t b) {
      ++calls;
      return a < b;
    });
    ASSERT_EQ(all, want);
  }
  for (long k = 1; k <= calls; ++k) {
    ASSERT_EQ(sorted_after_a_throw_at(pool, v, k), want)
        << "an element lost or doubled by a throw at comparison " << k << " of " << calls;
  }
}

// Counts live objects so that a stable sort that fails halfway is seen to
// destroy every buffer slot it built.
struct Live {
  static inline std::atomic<long> count{0};
  std::int64_t v;
  explicit Live(std::int64_t x) : v(x) { count.fetch_add(1, std::memory_order_relaxed); }
  Live(Live&& o) noexcept : v(o.v) { count.fetch_add(1, std::memory_order_relaxed); }
  Live& operator=(Live&&) noexcept = default;
  ~Live() { count.fetch_sub(1, std::memory_order_relaxed); }
};

TEST(ParallelSort, ComparatorExceptionsReachTheCallerAndNothingIsLost) {
  weft::ThreadPool pool(workers(2));
  const auto v = weft::test::random_values(200'000, 1000);
  Values want = v;
  std::sort(want.begin(), want.end());
  // The comparisons a sort of v makes (the same every run: the partitions
  // do not depend on the schedule): throws early, halfway and late.
  std::atomic<long> calls{0};
  {
    Values all = v;
    weft::parallel_sort(pool, all.begin(), all.end(), [&](std::int64_t a, std::int64_t b) {
      calls.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after the sort joins
      return a < b;
    });
  }
  const long n_calls = calls.load();
  // The stable sort's calls at the same three points (its own count: a
  // merge sort compares more): the third lands in the last merges.
  const std::array<std::pair<long, long>, 3> ks{
      {{1L, 1L}, {n_calls / 2, 100'000L}, {n_calls - n_calls / 16, 2'500'000L}}};
  for (const auto& [k, k_stable] : ks) {
    EXPECT_EQ(sorted_after_a_throw_at(pool, v, k), want) << k;  // every element still there, once
    {
      std::vector<Live> live;
      for (auto x : v) live.emplace_back(x);
      const long before = Live::count.load();
      weft::test::ThrowOnCall throws2(k_stable);
      EXPECT_THROW(weft::parallel_stable_sort(pool, live.begin(), live.end(),
                                              [&](const Live& a, const Live& b) {
                                                throws2.tick();
                                                return a.v < b.v;
                                              }),
                   std::runtime_error)
          << k_stable;
      EXPECT_EQ(Live::count.load(), before) << "buffer slots leaked or destroyed twice";
    }
  }
  Values got = v;
  weft::parallel_stable_sort(pool, got.begin(), got.end());
  EXPECT_EQ(got, want);
}

TEST(ParallelSort, NestedInsideATaskOfAOneWorkerPoolAndOnTheDefaultPool) {
  weft::test::Watchdog dog("nested sort on one worker");
  weft::ThreadPool pool(workers(1));
  const auto v = weft::test::random_values(200'000, 1000);
  Values want = v;
  std::sort(want.begin(), want.end());
  Values a = v;
  Values b = v;
  pool.submit([&] {
        weft::parallel_invoke(
            pool, [&] { weft::parallel_sort(pool, a.begin(), a.end()); },
            [&] { weft::parallel_stable_sort(pool, b.begin(), b.end()); });
      }).get();
  EXPECT_EQ(a, want);
  EXPECT_EQ(b, want);
  a = v;
  b = v;
  weft::parallel_sort(a.begin(), a.end());
  weft::parallel_stable_sort(b.begin(), b.end(), std::less<>{});
  EXPECT_EQ(a, want);
  EXPECT_EQ(b, want);
}

}  // namespace
