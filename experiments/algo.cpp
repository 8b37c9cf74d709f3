#include "weft/xp/algo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <variant>

#include <pthread.h>

#include "kernels.hpp"
#include "peer_support.hpp"
#include "weft/exec/parallel_find.hpp"
#include "weft/exec/parallel_reduce.hpp"
#include "weft/exec/parallel_scan.hpp"
#include "weft/exec/parallel_sort.hpp"
#include "weft/exec/pipeline.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

#ifdef WEFT_HAVE_TBB
// libstdc++ runs the parallel policies on oneTBB when its headers are there
// (and serially when they are not), so <execution> belongs to the tbb build.
#include <execution>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_scan.h>
#include <oneapi/tbb/parallel_sort.h>
#endif

namespace weft::xp {

namespace {

// ---- the variants: one set of calls, each run by one library ----------------

// A policy object like std::execution::par: libstdc++'s dispatch takes the
// policy as an lvalue (a temporary does not compile).
template <class Policy>
inline constexpr Policy kPolicy{};

// The standard algorithms: with no Policy the serial ones, with
// std::execution::parallel_policy the parallel ones.
template <class... Policy>
struct StdAlgorithms {
  template <class It, class T, class Op>
  T reduce(It first, It last, T init, Op op) const {
    return std::reduce(kPolicy<Policy>..., first, last, init, op);
  }
  template <class It, class T, class Transform>
  T transform_reduce(It first, It last, T init, Transform tr) const {
    return std::transform_reduce(kPolicy<Policy>..., first, last, init, std::plus<>{}, tr);
  }
  template <class It, class Out>
  void inclusive_scan(It first, It last, Out out) const {
    std::inclusive_scan(kPolicy<Policy>..., first, last, out);
  }
  template <class It, class Out>
  void exclusive_scan(It first, It last, Out out) const {
    using T = typename std::iterator_traits<It>::value_type;
    std::exclusive_scan(kPolicy<Policy>..., first, last, out, T{});
  }
  template <class It, class Comp>
  void sort(It first, It last, Comp comp) const {
    std::sort(kPolicy<Policy>..., first, last, comp);
  }
  template <class It, class Comp>
  void stable_sort(It first, It last, Comp comp) const {
    std::stable_sort(kPolicy<Policy>..., first, last, comp);
  }
  template <class It, class Pred>
  It find_if(It first, It last, Pred pred) const {
    return std::find_if(kPolicy<Policy>..., first, last, pred);
  }
  // The standard library has no pipeline: only the serial loop.
  template <class F>
    requires(sizeof...(Policy) == 0)
  void pipeline(const std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out, F f) const {
    std::size_t w = 0;
    for (std::uint64_t x : in) out[w++] = f(x);
  }
};
using Serial = StdAlgorithms<>;

// One block [begin, end) of a find-first over first[0, n): skipped if a
// match before it is known, else searched, its first match recorded in
// `best` (the least index wins). The oneTBB and OpenMP variants hand out
// the blocks; libstdc++'s parallel find_if on oneTBB works the same way.
// Cancelling at a match would be find-any, not find-first (a block before
// it may still be unsearched).
template <class It, class Pred>
void find_first_in(It first, std::ptrdiff_t begin, std::ptrdiff_t end, Pred& pred,
                   std::atomic<std::ptrdiff_t>& best) {
  // relaxed: a hint to skip; the answer is read after the loop joins.
  if (begin >= best.load(std::memory_order_relaxed)) return;
  // std::find_if within the block, as a user of either library would write it.
  const std::ptrdiff_t i = std::find_if(first + begin, first + end, pred) - first;
  if (i == end) return;
  std::ptrdiff_t seen = best.load(std::memory_order_relaxed);  // relaxed: only its value matters
  // relaxed: the least index wins on its value alone; nothing else is published through it.
  while (i < seen && !best.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
  }
}

// Items alive at once in the pipeline workload, for both libraries (oneTBB
// suggests a small multiple of the threads).
inline constexpr std::size_t kPipelineTokens = 16;

struct WeftAlgorithms {
  ThreadPool* pool = nullptr;
  template <class It, class T, class Op>
  T reduce(It first, It last, T init, Op op) const {
    return parallel_reduce(*pool, first, last, init, op);
  }
  template <class It, class T, class Transform>
  T transform_reduce(It first, It last, T init, Transform tr) const {
    return parallel_transform_reduce(*pool, first, last, init, std::plus<>{}, tr);
  }
  template <class It, class Out>
  void inclusive_scan(It first, It last, Out out) const {
    parallel_inclusive_scan(*pool, first, last, out);
  }
  template <class It, class Out>
  void exclusive_scan(It first, It last, Out out) const {
    using T = typename std::iterator_traits<It>::value_type;
    parallel_exclusive_scan(*pool, first, last, out, T{});
  }
  template <class It, class Comp>
  void sort(It first, It last, Comp comp) const {
    parallel_sort(*pool, first, last, comp);
  }
  template <class It, class Comp>
  void stable_sort(It first, It last, Comp comp) const {
    parallel_stable_sort(*pool, first, last, comp);
  }
  template <class It, class Pred>
  It find_if(It first, It last, Pred pred) const {
    return parallel_find_if(*pool, first, last, pred);
  }
  template <class F>
  void pipeline(const std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out, F f) const {
    std::size_t next = 0;
    std::size_t w = 0;
    parallel_pipeline(*pool, kPipelineTokens,
                      stage<void, std::uint64_t>(StageMode::serial_in_order,
                                                 [&](FlowControl& fc) -> std::uint64_t {
                                                   if (next == in.size()) {
                                                     fc.stop();
                                                     return 0;
                                                   }
                                                   return in[next++];
                                                 }),
                      stage<std::uint64_t, std::uint64_t>(StageMode::parallel, f),
                      stage<std::uint64_t, void>(StageMode::serial_in_order, [&](std::uint64_t y) { out[w++] = y; }));
  }
};

#ifdef WEFT_HAVE_TBB
using StdPar = StdAlgorithms<std::execution::parallel_policy>;

// oneTBB's own algorithms. It has no stable sort: that workload says so.
// kDeterministic: the reductions are parallel_deterministic_reduce, whose
// split tree is fixed by the range and the grain (simple_partitioner), so
// one input gives one answer whatever the threads; the grain matches weft's
// default leaf count, n / 256, for the same tree shape at the same price in
// splits. Only the reduction workloads run that variant.
template <bool kDeterministic>
struct TbbAlgorithms {
  static constexpr std::size_t kLeaves = 256;
  template <class It, class T, class Op>
  T reduce(It first, It last, T init, Op op) const {
    return transform_reduce_with(first, last, init, op, std::identity{});
  }
  template <class It, class T, class Transform>
  T transform_reduce(It first, It last, T init, Transform tr) const {
    return transform_reduce_with(first, last, init, std::plus<>{}, tr);
  }
  template <class It, class Out>
  void inclusive_scan(It first, It last, Out out) const {
    scan<true>(first, last, out);
  }
  template <class It, class Out>
  void exclusive_scan(It first, It last, Out out) const {
    scan<false>(first, last, out);
  }
  template <class It, class Comp>
  void sort(It first, It last, Comp comp) const {
    oneapi::tbb::parallel_sort(first, last, comp);
  }
  // The first match, oneTBB's auto_partitioner handing out the blocks.
  template <class It, class Pred>
  It find_if(It first, It last, Pred pred) const {
    using Range = oneapi::tbb::blocked_range<std::ptrdiff_t>;
    std::atomic<std::ptrdiff_t> best{last - first};
    oneapi::tbb::parallel_for(Range(0, last - first),
                              [&](const Range& r) { find_first_in(first, r.begin(), r.end(), pred, best); });
    // relaxed: parallel_for's return orders every task's store before it.
    return first + best.load(std::memory_order_relaxed);
  }
  template <class F>
  void pipeline(const std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out, F f) const {
    namespace tbb = oneapi::tbb;
    std::size_t next = 0;
    std::size_t w = 0;
    tbb::parallel_pipeline(
        kPipelineTokens,
        tbb::make_filter<void, std::uint64_t>(tbb::filter_mode::serial_in_order,
                                              [&](tbb::flow_control& fc) -> std::uint64_t {
                                                if (next == in.size()) {
                                                  fc.stop();
                                                  return 0;
                                                }
                                                return in[next++];
                                              }) &
            tbb::make_filter<std::uint64_t, std::uint64_t>(tbb::filter_mode::parallel, f) &
            tbb::make_filter<std::uint64_t, void>(tbb::filter_mode::serial_in_order,
                                                  [&](std::uint64_t y) { out[w++] = y; }));
  }

 private:
  // oneTBB's scan body: the prefix before (exclusive) or after (inclusive)
  // each element, written on the final pass.
  template <bool kInclusive, class It, class Out>
  static void scan(It first, It last, Out out) {
    using T = typename std::iterator_traits<It>::value_type;
    using Range = oneapi::tbb::blocked_range<std::ptrdiff_t>;
    oneapi::tbb::parallel_scan(
        Range(0, last - first), T{},
        [&](const Range& r, T acc, bool is_final) {
          for (std::ptrdiff_t i = r.begin(); i != r.end(); ++i) {
            if constexpr (!kInclusive) {
              if (is_final) out[i] = acc;
            }
            acc += first[i];
            if constexpr (kInclusive) {
              if (is_final) out[i] = acc;
            }
          }
          return acc;
        },
        std::plus<>{});
  }
  // init starts every block, so it must be op's identity (0 here).
  template <class It, class T, class Op, class Transform>
  static T transform_reduce_with(It first, It last, T init, Op op, Transform tr) {
    using Range = oneapi::tbb::blocked_range<It>;
    const auto fold = [&](const Range& r, T acc) {
      for (It it = r.begin(); it != r.end(); ++it) acc = op(acc, tr(*it));
      return acc;
    };
    if constexpr (kDeterministic) {
      const std::size_t grain = std::max<std::size_t>(1, static_cast<std::size_t>(last - first) / kLeaves);
      return oneapi::tbb::parallel_deterministic_reduce(Range(first, last, grain), init, fold, op);
    } else {
      return oneapi::tbb::parallel_reduce(Range(first, last), init, fold, op);
    }
  }
};
using Tbb = TbbAlgorithms<false>;
using TbbDeterministic = TbbAlgorithms<true>;
#endif

#ifdef WEFT_HAVE_OPENMP
// OpenMP's constructs, written as OpenMP users write them: each call is its
// own `omp parallel for num_threads(threads)` region on the calling thread
// (the team's master, so the caller is one of the `threads`), the
// reductions with `reduction(+:)` and the default (static) schedule, the
// scans with `reduction(inscan, +:)` and `omp scan` (OpenMP 5.0). OpenMP
// has no parallel sort and no pipeline construct: those workloads say so.
struct OmpAlgorithms {
  int threads = 1;
  template <class It, class T, class Op>
  T reduce(It first, It last, T init, Op /*plus*/) const {
    static_assert(std::is_same_v<Op, std::plus<>>, "reduction(+:) is the only reduction the workloads use");
    return transform_reduce(first, last, init, std::identity{});
  }
  template <class It, class T, class Transform>
  T transform_reduce(It first, It last, T init, Transform tr) const {
    const std::ptrdiff_t n = last - first;
    T acc = init;
#pragma omp parallel for num_threads(threads) reduction(+ : acc)
    for (std::ptrdiff_t i = 0; i < n; ++i) acc += tr(first[i]);
    return acc;
  }
  // The scans run over int64 (the workloads' type) in non-template
  // functions: clang 14 crashes on `omp scan` over a dependent type.
  template <class It, class Out>
  void inclusive_scan(It first, It last, Out out) const {
    static_assert(std::is_same_v<typename std::iterator_traits<It>::value_type, std::int64_t>);
    scan_i64(&*first, &*out, last - first, threads, true);
  }
  template <class It, class Out>
  void exclusive_scan(It first, It last, Out out) const {
    static_assert(std::is_same_v<typename std::iterator_traits<It>::value_type, std::int64_t>);
    scan_i64(&*first, &*out, last - first, threads, false);
  }
  static void scan_i64(const std::int64_t* in, std::int64_t* out, std::ptrdiff_t n, int threads, bool inclusive) {
    std::int64_t acc = 0;
    if (inclusive) {
#pragma omp parallel for num_threads(threads) reduction(inscan, + : acc)
      for (std::ptrdiff_t i = 0; i < n; ++i) {
        acc += in[i];
#pragma omp scan inclusive(acc)
        out[i] = acc;
      }
    } else {
#pragma omp parallel for num_threads(threads) reduction(inscan, + : acc)
      for (std::ptrdiff_t i = 0; i < n; ++i) {
        out[i] = acc;
#pragma omp scan exclusive(acc)
        acc += in[i];
      }
    }
  }
  // The first match, the blocks handed out in order (schedule(dynamic)).
  // OpenMP's `cancel for` would need OMP_CANCELLATION=true and still be
  // find-any, not find-first.
  template <class It, class Pred>
  It find_if(It first, It last, Pred pred) const {
    const std::ptrdiff_t n = last - first;
    // About oneTBB's auto_partitioner's count: a few blocks per thread.
    const std::ptrdiff_t block = std::max<std::ptrdiff_t>(1024, n / (64 * threads));
    const std::ptrdiff_t blocks = (n + block - 1) / block;
    std::atomic<std::ptrdiff_t> best{n};
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (std::ptrdiff_t b = 0; b < blocks; ++b)
      find_first_in(first, b * block, std::min(n, (b + 1) * block), pred, best);
    // relaxed: the region's closing barrier orders every thread's store before it.
    return first + best.load(std::memory_order_relaxed);
  }
};
#endif

// The variant types the build has, weft's and the serial ones always.
template <class... Ts>
struct ExecutorOf {
  template <class... More>
  using with = ExecutorOf<Ts..., More...>;
  using type = std::variant<Ts...>;
};
using ExecutorBase = ExecutorOf<Serial, WeftAlgorithms>;
#ifdef WEFT_HAVE_TBB
using ExecutorTbb = ExecutorBase::with<StdPar, Tbb, TbbDeterministic>;
#else
using ExecutorTbb = ExecutorBase;
#endif
#ifdef WEFT_HAVE_OPENMP
using Executor = ExecutorTbb::with<OmpAlgorithms>::type;
#else
using Executor = ExecutorTbb::type;
#endif

// Sets up a variant's threads (a pool, an arena) for `threads` workers and
// calls body with its executor, as often as body likes.
using Body = std::function<void(Executor&)>;
using WithExecutor = void (*)(int threads, const Body& body);

void with_serial(int /*threads*/, const Body& body) {
  Executor ex{Serial{}};
  body(ex);
}

void with_weft(int threads, const Body& body) {
  ThreadPool pool(PoolOptions{.workers = threads});
  start_workers(pool);
  Executor ex{WeftAlgorithms{&pool}};
  body(ex);
}

#ifdef WEFT_HAVE_OPENMP
#if defined(__clang__)
// clang (14 and later) keeps an `omp scan`'s buffer, one element per
// iteration, in a stack array of the function around the parallel region,
// on the thread that starts it: a scan of 5M int64 needs 40 MB of stack
// against the main thread's 8 MB (libgomp's scan needs none). An OpenMP user
// of clang raises the stack (ulimit -s, or a thread of their own); here the
// openmp variant runs from a thread whose stack holds it: kOmpStackBase plus
// the scans' buffer, set by run_algo() from --n.
constexpr std::size_t kOmpStackBase = std::size_t{16} << 20;
std::size_t omp_stack_bytes = kOmpStackBase;

// Faults in `bytes` of this thread's stack below the caller's frame, so
// the timed scans find their buffer's pages mapped, as on a thread that
// reuses its stack.
[[gnu::noinline]] void touch_stack(std::size_t bytes) {
  auto* p = static_cast<volatile char*>(__builtin_alloca(bytes));
  for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 0;
}

// Runs `f` on a new thread with a stack of `bytes`, the scans' buffer of
// it (all but kOmpStackBase) faulted in first, and waits for it; rethrows
// what `f` threw.
void on_own_stack(std::size_t bytes, const std::function<void()>& f) {
  struct Call {
    const std::function<void()>* f;
    std::size_t touch;
    std::exception_ptr error;
  } call{&f, bytes - kOmpStackBase, nullptr};
  pthread_attr_t attr;
  if (int e = pthread_attr_init(&attr); e != 0) throw std::system_error(e, std::generic_category(), "pthread_attr_init");
  int e = pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread{};
  if (e == 0)
    e = pthread_create(
        &thread, &attr,
        [](void* arg) -> void* {
          auto* c = static_cast<Call*>(arg);
          try {
            touch_stack(c->touch);
            (*c->f)();
          } catch (...) {
            c->error = std::current_exception();
          }
          return nullptr;
        },
        &call);
  pthread_attr_destroy(&attr);
  if (e != 0)
    throw std::system_error(e, std::generic_category(),
                            "algo: openmp: a thread with a " + std::to_string(bytes >> 20) + " MB stack");
  pthread_join(thread, nullptr);
  if (call.error) std::rethrow_exception(call.error);
}
#endif

// The team is woken before the timed calls, as with_weft()'s pool is
// started (where it ran: run_algo() looks once per size for the notes).
void with_openmp(int threads, const Body& body) {
  const auto run = [&] {
    OmpTeamSeen ignored;
    omp_wake_team(threads, ignored);
    Executor ex{OmpAlgorithms{threads}};
    body(ex);
  };
#if defined(__clang__)
  on_own_stack(omp_stack_bytes, run);
#else
  run();
#endif
}
#endif

#ifdef WEFT_HAVE_TBB
// libstdc++'s oneTBB backend wraps every parallel algorithm in
// this_task_arena::isolate, which runs in the caller's arena: an arena of
// `threads` bounds std::execution::par as it bounds oneTBB's own calls.
template <class Ex>
void with_arena(int threads, const Body& body) {
  in_tbb_arena(threads, [&] {
    Executor ex{Ex{}};
    body(ex);
    return 0.0;
  });
}

// The threads std::execution::par ran its work on inside an arena of
// `threads`: items that each spin ~50 us, so every thread that can join does.
int std_par_threads_seen(int threads) {
  std::mutex m;
  std::set<std::thread::id> ids;
  std::vector<int> items(256);
  with_arena<StdPar>(threads, [&](Executor&) {
    std::for_each(std::execution::par, items.begin(), items.end(), [&](int&) {
      const std::int64_t until = wall_ns() + 50'000;
      while (wall_ns() < until) {
      }
      const std::lock_guard<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
    });
  });
  return static_cast<int>(ids.size());
}
#endif

const std::array<harness::Variant<WithExecutor>, 6> kVariants{{
    {"serial", kBuiltIn, false, with_serial},
    {"std-par", kTbb, true, WEFT_XP_IF_TBB(with_arena<StdPar>)},
    {"tbb", kTbb, true, WEFT_XP_IF_TBB(with_arena<Tbb>)},
    {"tbb-deterministic", kTbb, true, WEFT_XP_IF_TBB(with_arena<TbbDeterministic>)},
    {"openmp", kOpenMp, true, WEFT_XP_IF_OPENMP(with_openmp)},
    {"weft", kBuiltIn, true, with_weft},
}};

// ---- the workloads ----------------------------------------------------------

// splitmix64 of the index: fixed inputs, the same on every run and machine.
std::uint64_t mix(std::uint64_t i) noexcept {
  std::uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A full-mantissa double in [0, 1): sums of them round, so their grouping
// shows in the bits (what the deterministic rows look for).
double unit_double(std::uint64_t i) noexcept { return static_cast<double>(mix(i) >> 11) * 0x1.0p-53; }

template <class T, class Make>
std::vector<T> generate(std::int64_t n, Make make) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = make(i);
  return v;
}

[[noreturn]] void wrong(std::string_view workload, std::string_view variant, const std::string& what) {
  throw std::runtime_error("algo: " + std::string(workload) + ": " + std::string(variant) + " " + what);
}

// A sum, or a sum of squares, of n doubles.
class Reduction {
 public:
  Reduction(std::int64_t n, bool squares) : squares_(squares), x_(generate<double>(n, unit_double)) {
    Serial ex;
    run(ex);
    expected_ = result_;
  }
  void reset() {}
  template <class Ex>
  void run(Ex& ex) {
    result_ = squares_ ? ex.transform_reduce(x_.begin(), x_.end(), 0.0, [](double v) { return v * v; })
                       : ex.reduce(x_.begin(), x_.end(), 0.0, std::plus<>{});
  }
  // Any grouping of the sum is right; a lost or doubled element (each is
  // worth about 2/n of the total) is not.
  void check(std::string_view workload, std::string_view variant) const {
    if (!(std::fabs(result_ - expected_) <= 1e-9 * expected_))
      wrong(workload, variant, "gave " + std::to_string(result_) + ", serial " + std::to_string(expected_));
  }
  std::uint64_t bits() const noexcept { return std::bit_cast<std::uint64_t>(result_); }
  static std::string not_offered(std::string_view /*variant*/) { return {}; }

 private:
  bool squares_;
  std::vector<double> x_;
  double result_ = 0;
  double expected_ = 0;
};

// Prefix sums of n int64 in [0, 1000): inclusive (out[i] counts x[i]) or
// exclusive (out[i] is the sum before it, out[0] = 0).
class Scan {
 public:
  Scan(std::int64_t n, bool inclusive)
      : inclusive_(inclusive),
        x_(generate<std::int64_t>(n, [](std::uint64_t i) { return static_cast<std::int64_t>(mix(i) % 1000); })),
        out_(x_.size()),
        expected_(x_.size()) {
    if (inclusive_)
      std::inclusive_scan(x_.begin(), x_.end(), expected_.begin());
    else
      std::exclusive_scan(x_.begin(), x_.end(), expected_.begin(), std::int64_t{0});
  }
  // A variant that wrote nothing must not pass on the previous one's output.
  void reset() { std::fill(out_.begin(), out_.end(), std::int64_t{-1}); }
  template <class Ex>
  void run(Ex& ex) {
    if (inclusive_)
      ex.inclusive_scan(x_.begin(), x_.end(), out_.begin());
    else
      ex.exclusive_scan(x_.begin(), x_.end(), out_.begin());
  }
  void check(std::string_view workload, std::string_view variant) const {
    const auto bad = std::mismatch(out_.begin(), out_.end(), expected_.begin());
    if (bad.first != out_.end())
      wrong(workload, variant, "wrote a wrong prefix sum at " + std::to_string(bad.first - out_.begin()));
  }
  std::uint64_t bits() const noexcept { return 0; }
  static std::string not_offered(std::string_view /*variant*/) { return {}; }

 private:
  bool inclusive_;
  std::vector<std::int64_t> x_, out_, expected_;
};

// (key, index) pairs: stable sorting by key leaves each key's indices rising.
struct KeyIndex {
  std::uint64_t key;
  std::uint64_t index;
  bool operator==(const KeyIndex&) const = default;
};

// A sort (kStable: a stable one) of n elements made by make(i), by comp.
template <class T, class Comp, bool kStable>
class Sort {
 public:
  template <class Make>
  Sort(std::int64_t n, Make make) : input_(generate<T>(n, make)) {
    Serial ex;
    reset();
    run(ex);
    expected_ = std::move(work_);
  }
  void reset() { work_ = input_; }
  template <class Ex>
  void run(Ex& ex) {
    if constexpr (kStable) {
      if constexpr (requires { ex.stable_sort(work_.begin(), work_.end(), Comp{}); })
        ex.stable_sort(work_.begin(), work_.end(), Comp{});
      else
        throw std::logic_error("algo: stable-sort run on a variant that does not offer it");
    } else {
      if constexpr (requires { ex.sort(work_.begin(), work_.end(), Comp{}); })
        ex.sort(work_.begin(), work_.end(), Comp{});
      else
        throw std::logic_error("algo: sort run on a variant that does not offer it");
    }
  }
  void check(std::string_view workload, std::string_view variant) const {
    if (work_ != expected_) wrong(workload, variant, "sorted differently from the serial sort");
  }
  std::uint64_t bits() const noexcept { return 0; }
  static std::string not_offered(std::string_view variant) {
    if (variant == "openmp") return "not offered: OpenMP has no parallel sort";
    return kStable && variant == "tbb" ? "not offered: oneTBB has no parallel stable sort" : std::string();
  }

 private:
  std::vector<T> input_, expected_, work_;
};

struct ByKey {
  bool operator()(const KeyIndex& a, const KeyIndex& b) const noexcept { return a.key < b.key; }
};

// find_if over n uint64 (below 2^63) for the one element equal to 2^63, at `at`.
class Find {
 public:
  static constexpr std::uint64_t kTarget = std::uint64_t{1} << 63;
  Find(std::int64_t n, std::int64_t at)
      : x_(generate<std::uint64_t>(n, [](std::uint64_t i) { return mix(i) >> 1; })), at_(at) {
    x_[static_cast<std::size_t>(at)] = kTarget;
  }
  void reset() { found_ = -1; }
  template <class Ex>
  void run(Ex& ex) {
    found_ = ex.find_if(x_.begin(), x_.end(), [](std::uint64_t v) { return v == kTarget; }) - x_.begin();
  }
  void check(std::string_view workload, std::string_view variant) const {
    if (found_ != at_) wrong(workload, variant, "found " + std::to_string(found_) + ", not " + std::to_string(at_));
  }
  std::uint64_t bits() const noexcept { return 0; }
  static std::string not_offered(std::string_view /*variant*/) { return {}; }

 private:
  std::vector<std::uint64_t> x_;
  std::int64_t at_;
  std::ptrdiff_t found_ = -1;
};

// A three-stage pipeline of n items: a serial read of in[i], a parallel
// transform of about 1 us (kPipelineRounds rounds of splitmix64), a serial
// in-order write to out[i]. The write order is checked: an item out of
// order lands in the wrong place.
class Pipe {
 public:
  static constexpr int kPipelineRounds = 256;
  explicit Pipe(std::int64_t n) : in_(generate<std::uint64_t>(n, mix)), out_(in_.size()), expected_(in_.size()) {
    std::transform(in_.begin(), in_.end(), expected_.begin(), transform);
  }
  void reset() { std::fill(out_.begin(), out_.end(), std::uint64_t{0}); }
  template <class Ex>
  void run(Ex& ex) {
    if constexpr (requires { ex.pipeline(in_, out_, transform); })
      ex.pipeline(in_, out_, transform);
    else
      throw std::logic_error("algo: pipeline run on a variant that does not offer it");
  }
  void check(std::string_view workload, std::string_view variant) const {
    const auto bad = std::mismatch(out_.begin(), out_.end(), expected_.begin());
    if (bad.first != out_.end())
      wrong(workload, variant, "wrote a wrong item at " + std::to_string(bad.first - out_.begin()));
  }
  std::uint64_t bits() const noexcept { return 0; }
  static std::string not_offered(std::string_view variant) {
    if (variant == "openmp") return "not offered: OpenMP has no pipeline construct";
    return variant == "std-par" ? "not offered: the standard library has no pipeline" : std::string();
  }

 private:
  static std::uint64_t transform(std::uint64_t x) noexcept {
    for (int i = 0; i < kPipelineRounds; ++i) x = mix(x);
    return x;
  }
  std::vector<std::uint64_t> in_, out_, expected_;
};

// One workload's inputs, behind the type the run loop sees.
class Case {
 public:
  virtual ~Case() = default;
  // One call of the workload by `ex`, checked: its seconds (the call alone).
  virtual double time(std::string_view variant, Executor& ex) = 0;
  // The bits of the last result (reductions; 0 otherwise).
  virtual std::uint64_t bits() const noexcept = 0;
  // Why `variant` has no such algorithm (empty: it has).
  virtual std::string not_offered(std::string_view variant) const = 0;
};

template <class W>
class CaseOf final : public Case {
 public:
  template <class... Args>
  CaseOf(std::string_view name, Args&&... args) : name_(name), w_(std::forward<Args>(args)...) {}
  double time(std::string_view variant, Executor& ex) override {
    w_.reset();
    const std::int64_t t0 = wall_ns();
    std::visit([&](auto& e) { w_.run(e); }, ex);
    const double s = static_cast<double>(wall_ns() - t0) / 1e9;
    w_.check(name_, variant);
    return s;
  }
  std::uint64_t bits() const noexcept override { return w_.bits(); }
  std::string not_offered(std::string_view variant) const override { return W::not_offered(variant); }

 private:
  std::string_view name_;
  W w_;
};

// The workload list, in run order: a name, whether it is a reduction
// (tbb-deterministic and deterministic rows), which parameter sizes it, what
// a row's note says of it (after the size) and how its inputs are made.
struct Workload {
  std::string_view name;
  bool reduction = false;
  std::int64_t AlgoParams::*size = &AlgoParams::n;
  std::string_view what;
  std::unique_ptr<Case> (*make)(const AlgoParams& p);
};

template <class W, class... Args>
std::unique_ptr<Case> make_case(std::string_view name, Args&&... args) {
  return std::make_unique<CaseOf<W>>(name, std::forward<Args>(args)...);
}

const std::array<Workload, 10> kWorkloads{{
    {"reduce", true, &AlgoParams::n, "sum of {} doubles",
     [](const AlgoParams& p) { return make_case<Reduction>("reduce", p.n, false); }},
    {"transform-reduce", true, &AlgoParams::n, "sum of the squares of {} doubles",
     [](const AlgoParams& p) { return make_case<Reduction>("transform-reduce", p.n, true); }},
    {"inclusive-scan", false, &AlgoParams::n, "inclusive scan of {} int64",
     [](const AlgoParams& p) { return make_case<Scan>("inclusive-scan", p.n, true); }},
    {"exclusive-scan", false, &AlgoParams::n, "exclusive scan of {} int64",
     [](const AlgoParams& p) { return make_case<Scan>("exclusive-scan", p.n, false); }},
    {"sort-u64", false, &AlgoParams::sort_n, "sort of {} random uint64",
     [](const AlgoParams& p) { return make_case<Sort<std::uint64_t, std::less<>, false>>("sort-u64", p.sort_n, mix); }},
    {"sort-f64", false, &AlgoParams::sort_n, "sort of {} random doubles",
     [](const AlgoParams& p) {
       return make_case<Sort<double, std::less<>, false>>("sort-f64", p.sort_n,
                                                          [](std::uint64_t i) { return unit_double(i) - 0.5; });
     }},
    {"stable-sort", false, &AlgoParams::sort_n, "stable sort of {} (key, index) pairs by key, ~8 per key",
     [](const AlgoParams& p) {
       const std::uint64_t keys = static_cast<std::uint64_t>(p.sort_n) / 8 + 1;
       return make_case<Sort<KeyIndex, ByKey, true>>("stable-sort", p.sort_n,
                                                     [keys](std::uint64_t i) { return KeyIndex{mix(i) % keys, i}; });
     }},
    {"find-half", false, &AlgoParams::n, "find_if over {} uint64, the match at n/2",
     [](const AlgoParams& p) { return make_case<Find>("find-half", p.n, p.n / 2); }},
    {"find-end", false, &AlgoParams::n, "find_if over {} uint64, the match at the end",
     [](const AlgoParams& p) { return make_case<Find>("find-end", p.n, p.n - 1); }},
    {"pipeline", false, &AlgoParams::pipeline_n,
     "pipeline of {} items: serial read, parallel ~1 us transform, serial in-order write",
     [](const AlgoParams& p) { return make_case<Pipe>("pipeline", p.pipeline_n); }},
}};

// "sum of 1000 doubles": the workload's note with its size.
std::string what_of(const Workload& w, const AlgoParams& p) {
  const std::size_t at = w.what.find("{}");
  return std::string(w.what.substr(0, at)) + std::to_string(p.*w.size) + std::string(w.what.substr(at + 2));
}

const Workload& workload(std::string_view name) {
  for (const Workload& w : kWorkloads)
    if (w.name == name) return w;
  throw std::invalid_argument("unknown workload '" + std::string(name) + "'");
}

// ---- rows -------------------------------------------------------------------

// The variant's samples over the serial run of the same round.
std::vector<double> speedups(const harness::Unit& serial, const harness::Unit& u) {
  std::vector<double> out;
  for (std::size_t i = 0; i < std::min(serial.samples.size(), u.samples.size()); ++i)
    if (u.samples[i] > 0) out.push_back(serial.samples[i] / u.samples[i]);
  return out;
}

// Whether `runs` runs at each of `workers` give one bit pattern: the
// deterministic row of a reduction, its note the count of patterns seen.
Row determinism_row(const harness::Variant<WithExecutor>& v, const std::string& why_not, Case& c,
                    const AlgoParams& p) {
  if (!why_not.empty()) return make_row(std::string(v.name), 0, "deterministic", "bool", {}, why_not);
  std::set<std::uint64_t> patterns;
  const std::vector<int> counts = v.pooled ? p.det_workers : std::vector<int>{0};
  for (int w : counts) {
    v.run(w, [&](Executor& ex) {
      for (int i = 0; i < p.det_runs; ++i) {
        c.time(v.name, ex);
        patterns.insert(c.bits());
      }
    });
  }
  std::string at;
  for (int w : p.det_workers) at += (at.empty() ? "" : ", ") + std::to_string(w);
  Row row = make_row(std::string(v.name), 0, "deterministic", "bool", {patterns.size() == 1 ? 1.0 : 0.0});
  row.note = std::to_string(p.det_runs) + " runs" + (v.pooled ? " at " + at + " workers" : "") + ": " +
             std::to_string(patterns.size()) + (patterns.size() == 1 ? " bit pattern" : " bit patterns");
  return row;
}

// The algorithms' goals (they hold at kGoalWorkers), with this run's figures.
nlohmann::json goal_ratios(const Result& r, const AlgoParams& p, const std::vector<int>& workers) {
  nlohmann::json ratios = nlohmann::json::array();
  for (int t : workers) {
    const std::string at = " (" + std::to_string(t) + " workers)";
    const auto goal = [t](const char* g) { return goal_at(t, g); };
    const auto time_of = [&](const char* variant, const std::string& w) {
      return Key(variant, "ms", variant == std::string_view("serial") ? std::optional<int>(0) : t).workload(w);
    };
    for (const std::string& w : p.workloads) {
      add_ratio(ratios, w + ": weft / tbb time" + at, ratio(r, time_of("weft", w), time_of("tbb", w)), goal("<= 1.0"));
      add_ratio(ratios, w + ": weft / std-par time" + at, ratio(r, time_of("weft", w), time_of("std-par", w)),
                goal("<= 1.0"));
      add_ratio(ratios, w + ": weft / openmp time" + at, ratio(r, time_of("weft", w), time_of("openmp", w)),
                goal("<= 1.0"));
    }
    add_ratio(ratios, "sort-u64: weft speed-up over serial" + at,
              ratio(r, time_of("serial", "sort-u64"), time_of("weft", "sort-u64")), goal(">= 1.6"));
    for (const std::string& w : p.workloads) {
      if (!workload(w).reduction) continue;
      std::optional<double> fastest;
      for (const char* v : {"std-par", "tbb", "openmp"})
        if (const auto m = median(r, time_of(v, w))) fastest = fastest ? std::min(*fastest, *m) : *m;
      const auto weft_ms = median(r, time_of("weft", w));
      add_ratio(ratios, w + ": weft / fastest non-deterministic" + at,
                weft_ms && fastest ? std::optional<double>(*weft_ms / *fastest) : std::nullopt, goal("<= 1.05"));
      add_ratio(ratios, w + ": weft / tbb-deterministic" + at,
                ratio(r, time_of("weft", w), time_of("tbb-deterministic", w)), goal("< 1.0"));
    }
  }
  return ratios;
}

}  // namespace

const std::vector<std::string>& algo_variants() { return harness::names_of<kVariants>(); }

const std::vector<std::string>& algo_workloads() { return harness::names_of<kWorkloads>(); }

Result run_algo(const AlgoParams& p) {
  const std::vector<int> workers = harness::counts_or_usable(p.workers);
  const harness::PlanOptions plan{p.reps, true};
  Result r;
  r.experiment = "algo";
  nlohmann::json std_par_threads = nlohmann::json::object();
#ifdef WEFT_HAVE_TBB
  for (int t : workers) std_par_threads[std::to_string(t)] = std_par_threads_seen(t);
#endif
  // Where an OpenMP team of each size ran, for the openmp rows' notes.
  std::map<int, OmpTeamSeen> omp_teams;
#ifdef WEFT_HAVE_OPENMP
#if defined(__clang__)
  omp_stack_bytes = kOmpStackBase + static_cast<std::size_t>(p.n) * sizeof(std::int64_t);
  if (std::find(p.variants.begin(), p.variants.end(), "openmp") != p.variants.end())
    r.notes.push_back("openmp ran from a thread with a " + std::to_string(omp_stack_bytes >> 20) +
                      " MB stack: clang's omp scan keeps one element per iteration on the stack of the thread "
                      "that starts the loop");
#endif
  if (std::find(p.variants.begin(), p.variants.end(), "openmp") != p.variants.end())
    for (int t : workers) omp_wake_team(t, omp_teams[t]);
#endif
  // One workload at a time, its variants interleaved: only its inputs are
  // in memory, and the rounds pair its serial and parallel runs.
  for (const Workload& w : kWorkloads) {
    if (std::find(p.workloads.begin(), p.workloads.end(), w.name) == p.workloads.end()) continue;
    const std::unique_ptr<Case> c = w.make(p);
    std::vector<std::string> names;
    for (const std::string& v : p.variants)
      if (w.reduction || v != "tbb-deterministic") names.push_back(v);
    std::vector<harness::Unit> units = harness::plan_units(kVariants, names, workers);
    for (harness::Unit& u : units)
      if (u.runs()) u.why_not = c->not_offered(u.variant);
    harness::run_units(units, plan, [&](const harness::Unit& u, std::size_t) {
      double s = 0;
      harness::variant(kVariants, u.variant).run(u.threads, [&](Executor& ex) { s = c->time(u.variant, ex); });
      return s;
    });

    const auto serial = std::find_if(units.begin(), units.end(),
                                     [](const harness::Unit& u) { return u.variant == "serial" && u.runs(); });
    const std::int64_t items = p.*w.size;
    for (const harness::Unit& u : units) {
      std::vector<double> ms;
      for (double s : u.samples) ms.push_back(s * 1e3);
      Row row = make_row(u.variant, u.threads, "ms", "ms", std::move(ms), u.why_not);
      row.labels.workload = std::string(w.name);
      row.labels.items = items;
      if (u.runs()) {
        row.note = what_of(w, p);
        if (u.variant == "std-par" && std_par_threads.contains(std::to_string(u.threads)))
          row.note += "; std::execution::par in a task_arena(" + std::to_string(u.threads) + "): ran on " +
                      std_par_threads[std::to_string(u.threads)].dump() + " threads";
        if (u.variant == "openmp") row.note = omp_teams[u.threads].note(row.note);
      }
      r.rows.push_back(row);
      if (u.variant == "serial" || serial == units.end()) continue;
      r.rows.push_back(with_metric(row, "speedup", "x", u.runs() ? speedups(*serial, u) : std::vector<double>{}));
    }
    if (!w.reduction) continue;
    for (const std::string& v : names) {
      const auto& variant = harness::variant(kVariants, v);
      const auto u = std::find_if(units.begin(), units.end(), [&](const harness::Unit& x) { return x.variant == v; });
      Row row = determinism_row(variant, u->why_not, *c, p);
      row.labels.workload = std::string(w.name);
      row.labels.items = items;
      r.rows.push_back(std::move(row));
    }
  }
  r.params = {{"pipeline_tokens", kPipelineTokens},
              {"workers", workers},
              {"det_workers", p.det_workers},
              {"seed", "splitmix64 of the index"},
              {"weft_threads", "a pool of `workers` workers; the calling thread computes each call as one of "
                               "them while a parked worker sits out (the pool's seat), or hands the call to a "
                               "worker and waits when none is parked"},
              {"openmp_threads", "a parallel for region per call, num_threads(`workers`) including the calling "
                                 "thread, after an empty region that wakes the team; OpenMP's defaults otherwise "
                                 "(OMP_PROC_BIND as the environment sets it: the notes say)"},
              {"tbb_threads", "task_arena of `workers` slots, the calling thread one of them (tbb, "
                              "tbb-deterministic, std-par)"},
              {"std_par_threads_seen", std_par_threads},
              {"tbb_deterministic_grain", "n / 256 (weft's default leaf count)"},
              {"warmup", harness::warmup_text(plan)}};
  r.extra["ratios"] = goal_ratios(r, p, workers);
  return r;
}

// The registration: `weft algo`, its sizes in the report, its figure.
namespace {

void print_compare(const Result& r) {
  print_weft_over_tbb_per_workload(r, 17);
  print_goals(r, 58);
}

const Register<AlgoParams> reg{{
    .name = "algo", .page = 100, .seconds = {10, 50, 120},
    .title = "Parallel algorithms against oneTBB and std::execution::par",
    .summary =
        "Parallel reduce, scan, sort, find and a pipeline: weft against std (serial and std::execution::par) and oneTBB",
    // The scan holds three arrays of n int64, the stable sort three of sort_n pairs.
    .options = {integer("--n", &AlgoParams::n, "Elements of the reduce, scan and find workloads", 1, 200'000'000),
                integer("--sort-n", &AlgoParams::sort_n, "Elements of the sort workloads", 1, 100'000'000),
                integer("--pipeline-n", &AlgoParams::pipeline_n, "Items of the pipeline workload", 1, 100'000'000),
                integer("--det-runs", &AlgoParams::det_runs, "Runs per worker count (1, 2, 4) for the deterministic rows",
                        1, 1000),
                names("--workload", &AlgoParams::workloads, "Workloads", "workload", algo_workloads),
                counts("--workers,-w", &AlgoParams::workers, "Thread counts", "available_parallelism"),
                variants(&AlgoParams::variants, algo_variants), reps(&AlgoParams::reps)},
    .sizes = {[](AlgoParams& p) {
                p.n = 5'000'000;
                p.sort_n = 1'000'000;
                p.pipeline_n = 100'000;
                p.reps = 3;
              },
              [](AlgoParams& p) {
                p.n = 25'000'000;
                p.sort_n = 5'000'000;
                p.pipeline_n = 500'000;
              },
              nullptr},
    .run = run_algo,
    .heading = "Parallel algorithms: ms per run, speed-up over serial, deterministic reductions",
    .print = print_compare,
    .figures = {"algo_vs_serial"}, .headlines = {"ms"},
}};

}  // namespace

}  // namespace weft::xp
