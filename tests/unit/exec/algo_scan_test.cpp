#include "weft/exec/parallel_scan.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "affine.hpp"
#include "algo_support.hpp"
#include "watchdog.hpp"

namespace {

using weft::test::workers;

using weft::test::Affine;
using weft::test::compose;

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
  // Early (the first chunk, or a fold in round 1) and late (the last calls,
  // in a later round: a scan makes at least n - 1 calls).
  for (long k : {1L, 60'000L, 190'000L, 199'000L}) {
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

// A window's two ends meet wherever the takers' speeds put them. At one
// extreme the calling worker stalls on its first call, so the other workers
// fold every chunk but its first (chunk 0 is always the scanner's); at the
// other no other worker is free, so one thread scans every chunk. Both give
// the standard scan's answer.

// Counts the op's calls per thread.
class CallsByThread {
 public:
  void count() {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++calls_[std::this_thread::get_id()];
  }
  long others_than(std::thread::id t) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    long k = 0;
    for (const auto& [id, c] : calls_)
      if (id != t) k += c;
    return k;
  }
  std::size_t threads() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return calls_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::thread::id, long> calls_;
};

// The scan of n elements on `w` workers with the calling worker's call on
// element `at` stalled until the other workers have stopped (nothing left
// for them to take), at most 20 s. `at` must be where a window starts (the
// element after it for the range's start): only the calling worker's scan
// passes that element to op. Returns the calls the other workers made.
long scan_stalled_at(std::size_t n, int w, std::size_t at) {
  weft::ThreadPool pool(workers(w));
  auto v = affines(n);
  constexpr std::uint64_t kMark = 1'000'003;  // random values stay below 1000
  v[at].a = kMark;
  std::vector<Affine> want(n);
  std::inclusive_scan(v.begin(), v.end(), want.begin(), compose);
  std::vector<Affine> got(n);
  CallsByThread calls;
  std::thread::id scanner;  // written by the scanner before it reads the others' count
  auto op = [&](const Affine& l, const Affine& r) {
    if (r.a == kMark) {
      scanner = std::this_thread::get_id();
      long seen = -1;
      for (int i = 0; i < 2000; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const long now = calls.others_than(scanner);
        if (now > 0 && now == seen) break;
        seen = now;
      }
    }
    calls.count();
    return compose(l, r);
  };
  weft::parallel_inclusive_scan(pool, v.begin(), v.end(), got.begin(), op);
  EXPECT_EQ(got, want);
  return calls.others_than(scanner);
}

TEST(ParallelScan, TheScannerStalledSoTheOthersFoldEveryChunkButItsFirst) {
  weft::test::Watchdog dog("scan with a stalled scanner");
  const int w = 3;
  const std::size_t n = 40 * weft::detail::kScanMinBlock + 5;
  // Window 1 is [0, m), in `chunks` chunks; its chunk 0 is always the
  // scanner's. Stalled on its first call, op(v[0], v[1]), the scanner
  // leaves the others to fold every other chunk (a chunk of k elements:
  // k - 1 calls).
  const std::size_t m = n / (w + 1) * w;
  const std::size_t chunks = std::min(m / weft::detail::kScanMinBlock, weft::detail::kScanChunksPerWorker * w);
  const std::size_t first_chunk = m / chunks + 1;
  EXPECT_GE(scan_stalled_at(n, w, 1), static_cast<long>(m - first_chunk - chunks));
  // Stalled at window 2's start, [m, n): the others scan window 1's folded
  // chunks, then fold every chunk of window 2 but its first, and a third
  // round scans those.
  const std::size_t chunks2 = std::min((n - m) / weft::detail::kScanMinBlock, weft::detail::kScanChunksPerWorker);
  const std::size_t first_chunk2 = (n - m) / chunks2 + 1;
  EXPECT_GE(scan_stalled_at(n, w, m), static_cast<long>(n - m - first_chunk2 - chunks2));
}

TEST(ParallelScan, NoOtherWorkerFreeSoOneThreadScansEveryChunk) {
  weft::test::Watchdog dog("scan with the other worker busy");
  weft::ThreadPool pool(workers(2));
  const std::size_t n = 40 * weft::detail::kScanMinBlock + 5;
  const auto v = affines(n);
  std::vector<Affine> want(n);
  std::exclusive_scan(v.begin(), v.end(), want.begin(), Affine{1, 0}, compose);
  std::vector<Affine> got(n);
  // Flags only (seq_cst by default, any order would do): no data rides on
  // them, and blocker.get() orders the end.
  std::atomic<bool> busy{false};
  std::atomic<bool> done{false};
  // One worker is held; the scan runs on the other (a pool task, or as a
  // pool task from this thread: on_workers.hpp), whose helpers find no
  // thief.
  auto blocker = pool.submit([&] {
    busy.store(true);
    while (!done.load()) std::this_thread::yield();
  });
  while (!busy.load()) std::this_thread::yield();
  CallsByThread calls;
  auto op = [&](const Affine& l, const Affine& r) {
    calls.count();
    return compose(l, r);
  };
  try {
    pool.submit([&] { weft::parallel_exclusive_scan(pool, v.begin(), v.end(), got.begin(), Affine{1, 0}, op); })
        .get();
  } catch (...) {
    done.store(true);
    throw;
  }
  done.store(true);
  blocker.get();
  EXPECT_EQ(got, want);
  EXPECT_EQ(calls.threads(), 1u);
}

}  // namespace
