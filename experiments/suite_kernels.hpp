// The kernels of `weft suite`: the recursive, irregular workloads the task
// runtimes' own suites compare on (libfork's benchmarks, tzcnt's
// runtime-benchmarks, the Barcelona OpenMP Tasks Suite), each written once
// over a fork-join policy and once as weft coroutines.
//
// A policy says how to fork: Serial (plain calls), WeftFj
// (weft::parallel_invoke), TbbFj (oneTBB's parallel_invoke for two, a
// task_group for n) and OmpTasks
// (`omp task` / `omp taskwait`, the way BOTS writes them):
//   Fj::invoke(a, b)   runs a() and b(), a as a task, b in place, then joins
//   Fj::for_n(n, f)    runs f(0) .. f(n-1), all but the last as tasks, then joins
// Every workload returns what its check compares (a count, a sum, a bound).
// The coroutine forms are `static`, not `inline`: clang 14 under ASan fails
// on coroutines in COMDAT sections ("Cannot represent a difference across
// sections"); this header has one includer.
#pragma once

#include <nettle/sha1.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "weft/exec/coro.hpp"
#include "weft/exec/parallel_invoke.hpp"
#include "weft/exec/thread_pool.hpp"

#ifdef WEFT_HAVE_TBB
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace weft::xp::suite {

// ---- the fork-join policies -------------------------------------------------

// b() first, as the parallel forms run it (in place, while a waits queued):
// knapsack's pruning depends on which branch finds a bound first.
struct Serial {
  template <class A, class B>
  static void invoke(A&& a, B&& b) {
    b();
    a();
  }
  template <class F>
  static void for_n(int n, F&& f) {
    for (int i = 0; i < n; ++i) f(i);
  }
};

// Serial, counting the calls a fork makes: one serial run gives the call
// tree's size (the tasks of the parallel forms) for any kernel. Single-
// threaded by construction, so a plain counter.
struct Counting {
  static inline std::int64_t calls = 0;
  template <class A, class B>
  static void invoke(A&& a, B&& b) {
    calls += 2;
    Serial::invoke(a, b);
  }
  template <class F>
  static void for_n(int n, F&& f) {
    calls += n;
    Serial::for_n(n, f);
  }
};

// The pool is the calling worker's (ThreadPool::current()): recursive code
// needs no pool argument, as with oneTBB and OpenMP. Forks are
// parallel_invoke() and parallel_invoke_n(), whose tasks live in the
// forking worker's frame.
struct WeftFj {
  template <class A, class B>
  static void invoke(A&& a, B&& b) {
    parallel_invoke(*ThreadPool::current(), b, a);  // b in place, a handed off
  }
  template <class F>
  static void for_n(int n, F&& f) {
    if (n > 0) parallel_invoke_n(*ThreadPool::current(), static_cast<std::size_t>(n), [&f](std::size_t i) {
      f(static_cast<int>(i));
    });
  }
};

// oneTBB's faster forms: its parallel_invoke (stack-allocated tasks and a
// wait context) for two, and a task_group for n (splitting in halves with
// parallel_invoke, whose every call makes a task_group_context, measured
// 1.3-2.6x slower on skynet and UTS here).
#ifdef WEFT_HAVE_TBB
struct TbbFj {
  template <class A, class B>
  static void invoke(A&& a, B&& b) {
    oneapi::tbb::parallel_invoke(a, b);  // spawns a, runs b in place (its last argument)
  }
  template <class F>
  static void for_n(int n, F&& f) {
    if (n <= 0) return;
    oneapi::tbb::task_group g;
    for (int i = 0; i + 1 < n; ++i) g.run([&f, i] { f(i); });
    f(n - 1);
    g.wait();
  }
};
#endif

#ifdef WEFT_HAVE_OPENMP
struct OmpTasks {
  template <class A, class B>
  static void invoke(A&& a, B&& b) {
#pragma omp task default(shared)
    a();
    b();
#pragma omp taskwait
  }
  template <class F>
  static void for_n(int n, F&& f) {
    for (int i = 0; i + 1 < n; ++i) {
#pragma omp task default(shared) firstprivate(i)
      f(i);
    }
    if (n > 0) f(n - 1);
#pragma omp taskwait
  }
};
#endif

// ---- fib: one task per call, no cutoff -----------------------------------------

template <class Fj>
std::int64_t fib(int n) {
  if (n < 2) return n;
  std::int64_t a = 0, b = 0;
  Fj::invoke([&] { a = fib<Fj>(n - 1); }, [&] { b = fib<Fj>(n - 2); });
  return a + b;
}
static Task<std::int64_t> fib_co(int n) {
  if (n < 2) co_return n;
  auto [a, b] = co_await when_all(fib_co(n - 1), fib_co(n - 2));
  co_return a + b;
}

// ---- skynet: a 10-way fan-out, summing the leaves' numbers ----------------------

template <class Fj>
std::int64_t skynet(std::int64_t num, std::int64_t size) {
  if (size == 1) return num;
  std::int64_t sums[10];
  const std::int64_t step = size / 10;
  Fj::for_n(10, [&](int i) { sums[i] = skynet<Fj>(num + i * step, step); });
  std::int64_t s = 0;
  for (const std::int64_t x : sums) s += x;
  return s;
}
static Task<std::int64_t> skynet_co(std::int64_t num, std::int64_t size) {
  if (size == 1) co_return num;
  const std::int64_t step = size / 10;
  std::vector<Task<std::int64_t>> kids;
  kids.reserve(10);
  for (int i = 0; i < 10; ++i) kids.push_back(skynet_co(num + i * step, step));
  std::int64_t s = 0;
  for (const std::int64_t x : co_await when_all(std::move(kids))) s += x;
  co_return s;
}

// ---- nqueens: one task per legal placement of the next queen --------------------

// The board as three masks: columns taken, and the diagonals that attack
// the next row.
struct Board {
  std::uint32_t cols, left, right;
  int row;
};
// The legal columns of the next row, lowest first; returns their count.
inline int legal_moves(int n, const Board& b, std::uint32_t* moves) {
  std::uint32_t free = ~(b.cols | b.left | b.right) & ((std::uint32_t{1} << n) - 1);
  int k = 0;
  while (free != 0) {
    moves[k++] = free & (~free + 1);
    free &= free - 1;
  }
  return k;
}
inline Board place(const Board& b, std::uint32_t bit) {
  return {b.cols | bit, (b.left | bit) << 1, (b.right | bit) >> 1, b.row + 1};
}

template <class Fj>
std::int64_t nqueens(int n, Board b) {
  if (b.row == n) return 1;
  std::uint32_t moves[32];
  std::int64_t found[32];
  const int k = legal_moves(n, b, moves);
  Fj::for_n(k, [&](int i) { found[i] = nqueens<Fj>(n, place(b, moves[i])); });
  std::int64_t s = 0;
  for (int i = 0; i < k; ++i) s += found[i];
  return s;
}
static Task<std::int64_t> nqueens_co(int n, Board b) {
  if (b.row == n) co_return 1;
  std::uint32_t moves[32];
  const int k = legal_moves(n, b, moves);
  std::vector<Task<std::int64_t>> kids;
  kids.reserve(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) kids.push_back(nqueens_co(n, place(b, moves[i])));
  std::int64_t s = 0;
  for (const std::int64_t x : co_await when_all(std::move(kids))) s += x;
  co_return s;
}

// ---- integrate: adaptive trapezoids of (x^2 + 1) x ---------------------------------

inline constexpr double kIntegrateEpsilon = 1e-9;
inline double integrand(double x) { return (x * x + 1.0) * x; }
// The closed form of the integral over [0, n]: n^4/4 + n^2/2.
inline double integral_exact(double n) { return n * n * n * n / 4 + n * n / 2; }

// One step of the adaptive rule over [x1, x2] (y = f(x) at its ends, `area`
// its trapezoid): the midpoint and the two halves' trapezoids; `done` when
// they agree with `area` within kIntegrateEpsilon.
struct Halves {
  double x0, y0, left, right;
  bool done;
};
inline Halves halve(double x1, double y1, double x2, double y2, double area) {
  const double half = (x2 - x1) / 2;
  const double x0 = x1 + half;
  const double y0 = integrand(x0);
  const double left = (y1 + y0) / 2 * half;
  const double right = (y0 + y2) / 2 * half;
  return {x0, y0, left, right, std::abs(left + right - area) < kIntegrateEpsilon};
}

template <class Fj>
double integrate(double x1, double y1, double x2, double y2, double area) {
  const Halves h = halve(x1, y1, x2, y2, area);
  if (h.done) return h.left + h.right;
  double a = 0, b = 0;
  Fj::invoke([&] { a = integrate<Fj>(x1, y1, h.x0, h.y0, h.left); },
             [&] { b = integrate<Fj>(h.x0, h.y0, x2, y2, h.right); });
  return a + b;
}
static Task<double> integrate_co(double x1, double y1, double x2, double y2, double area) {
  const Halves h = halve(x1, y1, x2, y2, area);
  if (h.done) co_return h.left + h.right;
  auto [a, b] =
      co_await when_all(integrate_co(x1, y1, h.x0, h.y0, h.left), integrate_co(h.x0, h.y0, x2, y2, h.right));
  co_return a + b;
}

// ---- matmul: C += A B by quadrants, two join phases of four ---------------------

// The base case: one cache line of floats on a side.
inline constexpr int kMatmulLeaf = 16;

// An n x n block of a row-major matrix with row stride `ld`.
struct Block {
  float* p;
  int ld;
  [[nodiscard]] Block quad(int i, int j, int half) const {
    return {p + static_cast<std::ptrdiff_t>(i) * half * ld + static_cast<std::ptrdiff_t>(j) * half, ld};
  }
};

inline void matmul_leaf(Block a, Block b, Block c, int n) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const float aik = a.p[static_cast<std::ptrdiff_t>(i) * a.ld + k];
      for (int j = 0; j < n; ++j)
        c.p[static_cast<std::ptrdiff_t>(i) * c.ld + j] += aik * b.p[static_cast<std::ptrdiff_t>(k) * b.ld + j];
    }
}

template <class Fj>
void matmul(Block a, Block b, Block c, int n) {
  if (n <= kMatmulLeaf) return matmul_leaf(a, b, c, n);
  const int h = n / 2;
  // Phase k adds A(i,k) B(k,j) into C(i,j) for the four (i, j): the four
  // write different quadrants of C, the two phases the same ones.
  for (int k = 0; k < 2; ++k)
    Fj::for_n(4, [&](int q) {
      const int i = q / 2, j = q % 2;
      matmul<Fj>(a.quad(i, k, h), b.quad(k, j, h), c.quad(i, j, h), h);
    });
}
static Task<> matmul_co(Block a, Block b, Block c, int n) {
  if (n <= kMatmulLeaf) {
    matmul_leaf(a, b, c, n);
    co_return;
  }
  const int h = n / 2;
  for (int k = 0; k < 2; ++k)
    co_await when_all(matmul_co(a.quad(0, k, h), b.quad(k, 0, h), c.quad(0, 0, h), h),
                      matmul_co(a.quad(0, k, h), b.quad(k, 1, h), c.quad(0, 1, h), h),
                      matmul_co(a.quad(1, k, h), b.quad(k, 0, h), c.quad(1, 0, h), h),
                      matmul_co(a.quad(1, k, h), b.quad(k, 1, h), c.quad(1, 1, h), h));
}

// ---- UTS: the Unbalanced Tree Search benchmark ----------------------------------

// A tree as UTS's command line gives it: -t type (0 binomial, 1 geometric),
// -b b0, -r root seed; geometric: -a shape (only 3, FIXED: b0 children
// expected above depth -d), binomial: -q probability of -m children.
struct UtsTree {
  const char* name;
  int type;  // 0 binomial, 1 geometric (fixed shape)
  double b0;
  int gen_mx;    // geometric: the depth with no children
  double q;      // binomial: the chance a node has m children
  int m;         // binomial: children of a non-leaf
  int root_seed;
  // The published figures the run must reproduce exactly.
  std::int64_t nodes, leaves;
  int depth;
};

struct UtsNode {
  std::uint8_t state[20];
  int height;
};

// The splittable random stream of UTS's SHA-1 generator: a node's state
// is the SHA-1 of its parent's state and its index, the root's the SHA-1
// of 16 zero bytes and the seed, all big-endian.
inline void uts_root(UtsNode& n, int seed) {
  std::uint8_t buf[20] = {};
  const auto s = static_cast<std::uint32_t>(seed);
  buf[16] = static_cast<std::uint8_t>(s >> 24);
  buf[17] = static_cast<std::uint8_t>(s >> 16);
  buf[18] = static_cast<std::uint8_t>(s >> 8);
  buf[19] = static_cast<std::uint8_t>(s);
  sha1_ctx ctx;
  sha1_init(&ctx);
  sha1_update(&ctx, sizeof buf, buf);
  sha1_digest(&ctx, sizeof n.state, n.state);
  n.height = 0;
}
inline void uts_child(const UtsNode& parent, int index, UtsNode& child) {
  const auto s = static_cast<std::uint32_t>(index);
  const std::uint8_t bytes[4] = {static_cast<std::uint8_t>(s >> 24), static_cast<std::uint8_t>(s >> 16),
                                 static_cast<std::uint8_t>(s >> 8), static_cast<std::uint8_t>(s)};
  sha1_ctx ctx;
  sha1_init(&ctx);
  sha1_update(&ctx, sizeof parent.state, parent.state);
  sha1_update(&ctx, sizeof bytes, bytes);
  sha1_digest(&ctx, sizeof child.state, child.state);
  child.height = parent.height + 1;
}
// rng_rand() and rng_toProb(): the state's last 4 bytes, 31 bits, in [0, 1).
inline double uts_uniform(const UtsNode& n) {
  const std::uint32_t r = (std::uint32_t{n.state[16]} << 24 | std::uint32_t{n.state[17]} << 16 |
                           std::uint32_t{n.state[18]} << 8 | std::uint32_t{n.state[19]}) &
                          0x7fffffffu;
  return static_cast<double>(r) / 2147483648.0;
}
inline int uts_children(const UtsTree& t, const UtsNode& n) {
  int k;
  if (t.type == 0) {
    if (n.height == 0) return static_cast<int>(std::floor(t.b0));  // the root: b0 children
    k = uts_uniform(n) < t.q ? t.m : 0;
  } else {
    // FIXED shape: b0 expected children above gen_mx, none below; the
    // count is geometric with that mean.
    const double bi = n.height < t.gen_mx ? t.b0 : 0.0;
    const double p = 1.0 / (1.0 + bi);
    const double u = uts_uniform(n);
    k = static_cast<int>(std::floor(std::log(1 - u) / std::log(1 - p)));
  }
  return std::min(k, 100);  // UTS's MAXNUMCHILDREN below the root
}

// What a subtree adds up to.
struct UtsCount {
  std::int64_t nodes = 0, leaves = 0;
  int depth = 0;
  UtsCount& operator+=(const UtsCount& o) {
    nodes += o.nodes;
    leaves += o.leaves;
    depth = std::max(depth, o.depth);
    return *this;
  }
};

// Up to 16 children's counts on the stack (a deep tree nests one frame per
// level), more (a geometric node's rare tail, the binomial root's 2,000) on the heap.
class UtsCounts {
 public:
  explicit UtsCounts(int k) : heap_(k > kInline ? std::make_unique<UtsCount[]>(static_cast<std::size_t>(k)) : nullptr) {}
  UtsCount& operator[](int i) { return heap_ ? heap_[static_cast<std::size_t>(i)] : inline_[i]; }

 private:
  static constexpr int kInline = 16;
  UtsCount inline_[kInline];
  std::unique_ptr<UtsCount[]> heap_;
};

template <class Fj>
UtsCount uts(const UtsTree& t, const UtsNode& n) {
  const int k = uts_children(t, n);
  UtsCount c{1, k == 0 ? 1 : 0, n.height};
  if (k == 0) return c;
  UtsCounts kids(k);
  Fj::for_n(k, [&](int i) {
    UtsNode child;
    uts_child(n, i, child);
    kids[i] = uts<Fj>(t, child);
  });
  for (int i = 0; i < k; ++i) c += kids[i];
  return c;
}
static Task<UtsCount> uts_co(const UtsTree& t, UtsNode n) {
  const int k = uts_children(t, n);
  UtsCount c{1, k == 0 ? 1 : 0, n.height};
  if (k == 0) co_return c;
  std::vector<Task<UtsCount>> kids;
  kids.reserve(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) {
    UtsNode child;
    uts_child(n, i, child);
    kids.push_back(uts_co(t, child));
  }
  for (const UtsCount& x : co_await when_all(std::move(kids))) c += x;
  co_return c;
}

// ---- knapsack: branch and bound with a shared best value -------------------------

// BOTS's knapsack (and libfork's, after the Nowa paper): items sorted by
// value per weight, best first; a branch is cut when its value plus the
// rest of the capacity filled at the current item's density cannot beat
// the best value any task has found so far; each node tries leaving its
// item out and putting it in, and returns the best value of its subtree
// (kNone: over capacity).
struct Item {
  int weight, value;
};
inline constexpr int kNone = -1;

// The best value found so far, shared by every task: raised with a CAS
// loop, read relaxed (a stale bound only prunes less).
struct Best {
  std::atomic<int> value{0};
  void offer(int v) noexcept {
    // relaxed: only the maximum matters; the joins publish the answer.
    int b = value.load(std::memory_order_relaxed);
    while (v > b && !value.compare_exchange_weak(b, v, std::memory_order_relaxed)) {
    }
  }
  [[nodiscard]] int get() const noexcept { return value.load(std::memory_order_relaxed); }  // relaxed: see offer()
};

// Whether the node is a leaf (its value, or kNone, in `out`).
inline bool knapsack_leaf(const Item* e, int capacity, int items, int value, const Best& best, int& out) {
  if (capacity < 0) return out = kNone, true;
  if (items == 0 || capacity == 0) return out = value, true;
  const double bound = value + static_cast<double>(capacity) * e->value / e->weight;
  if (bound < best.get()) return out = kNone, true;
  return false;
}

template <class Fj>
int knapsack(const Item* e, int capacity, int items, int value, Best& best) {
  int out = 0;
  if (knapsack_leaf(e, capacity, items, value, best, out)) return out;
  int without = kNone, with = kNone;
  Fj::invoke([&] { without = knapsack<Fj>(e + 1, capacity, items - 1, value, best); },
             [&] { with = knapsack<Fj>(e + 1, capacity - e->weight, items - 1, value + e->value, best); });
  const int b = std::max(with, without);
  best.offer(b);
  return b;
}
static Task<int> knapsack_co(const Item* e, int capacity, int items, int value, Best& best) {
  int out = 0;
  if (knapsack_leaf(e, capacity, items, value, best, out)) co_return out;
  // The item taken first, in place (when_all runs its first child here),
  // as the other forms run it.
  auto [with, without] = co_await when_all(knapsack_co(e + 1, capacity - e->weight, items - 1, value + e->value, best),
                                           knapsack_co(e + 1, capacity, items - 1, value, best));
  const int b = std::max(with, without);
  best.offer(b);
  co_return b;
}

}  // namespace weft::xp::suite
