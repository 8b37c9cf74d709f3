// docs/guide/algorithms.md: reduce, scan, sort, find and invoke on the
// pool, each checked against the standard library's answer.
#include <weft/weft.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include "expect.hpp"

namespace {

// A record that can only be moved, sorted by its key.
struct Record {
  long key;
  std::unique_ptr<long> payload;
};
constexpr auto by_key = [](const Record& a, const Record& b) { return a.key < b.key; };

long count_in(long lo, long hi) {  // multiples of 7 in [lo, hi)
  long c = 0;
  for (long i = lo; i < hi; ++i) c += i % 7 == 0 ? 1 : 0;
  return c;
}

std::vector<long> build(long x) { return std::vector<long>(100, x); }

}  // namespace

int main() {
  weft::ThreadPool pool;
  const long n = 1'000'000;

  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  double s = weft::parallel_reduce(pool, v.begin(), v.end(), 0.0, std::plus<>{});
  double q = weft::parallel_transform_reduce(pool, v.begin(), v.end(), 0.0, std::plus<>{},
                                             [](double x) { return x * x; });
  long hits = weft::parallel_reduce(pool, 0L, n, 0L, std::plus<>{},          // index space
                                    [&](long lo, long hi) { return count_in(lo, hi); });
  expect(s == std::reduce(v.begin(), v.end()), "reduce sums exactly (integers in a double)");
  expect(q > s, "transform_reduce sums the squares");
  expect(hits == count_in(0, n), "the index-space reduce counts every block once");

  std::vector<long> in(static_cast<std::size_t>(n), 1);
  std::vector<long> out(in.size());
  weft::parallel_inclusive_scan(pool, in.begin(), in.end(), out.begin());    // + by default
  expect(out.back() == n && out.front() == 1, "inclusive scan of ones counts up from 1");
  std::vector<long> w = in;
  weft::parallel_exclusive_scan(pool, w.begin(), w.end(), w.begin(), 0L);    // in place
  expect(w.front() == 0 && w.back() == n - 1, "exclusive scan of ones counts up from 0");

  std::vector<long> r0(in.size());
  for (std::size_t i = 0; i < r0.size(); ++i) r0[i] = static_cast<long>((i * 7919) % 1000);
  std::vector<Record> r;
  for (std::size_t i = 0; i < r0.size(); ++i) r.push_back({r0[i], std::make_unique<long>(static_cast<long>(i))});
  std::vector<long> sorted = r0;
  weft::parallel_sort(pool, sorted.begin(), sorted.end());                   // like std::sort
  weft::parallel_stable_sort(pool, r.begin(), r.end(), by_key);              // move-only is fine
  expect(std::is_sorted(sorted.begin(), sorted.end()), "sort sorts");
  for (std::size_t i = 1; i < r.size(); ++i)
    expect(r[i - 1].key < r[i].key || (r[i - 1].key == r[i].key && *r[i - 1].payload < *r[i].payload),
           "stable sort keeps equal keys in their order");

  const auto is_bad = [](long x) { return x == 999; };
  std::vector<long>& u = r0;
  auto it = weft::parallel_find_if(pool, u.begin(), u.end(), is_bad);        // the first match
  bool any = weft::parallel_any_of(pool, u.begin(), u.end(), is_bad);
  expect(it == std::find_if(u.begin(), u.end(), is_bad) && any, "find_if finds the first match");

  std::vector<long> a;
  std::vector<long> b;
  const long x = 1;
  const long y = 2;
  weft::parallel_invoke(pool, [&] { a = build(x); }, [&] { b = build(y); });
  expect(a.size() == 100 && b.size() == 100 && a[0] + b[0] == 3, "invoke runs both");

  struct Node {
    std::vector<long> children;
  };
  const Node node{{3, 4, 5}};
  const auto visit = [](long child) { return child * child; };
  std::vector<long> sum(node.children.size());
  weft::parallel_invoke_n(pool, node.children.size(), [&](std::size_t i) { sum[i] = visit(node.children[i]); });
  expect(sum == std::vector<long>{9, 16, 25}, "invoke_n calls every index once");

  weft::parallel_sort(u.begin(), u.end());    // no pool: runs on weft::default_pool()
  expect(std::is_sorted(u.begin(), u.end()), "the default pool sorts too");
  return 0;
}
