// parallel_for over iterator ranges and 2-D blocked ranges, with each
// partitioner, a stop token, exceptions and nesting.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "watchdog.hpp"
#include "weft/detail/exec/remote_wait.hpp"
#include "weft/exec/parallel_for.hpp"

namespace {

weft::PoolOptions workers(int n) {
  weft::PoolOptions o;
  o.workers = n;
  return o;
}

// Calls test(partitioner, name) with each partitioner.
template <class Test>
void for_each_partitioner(const Test& test) {
  test(weft::adaptive, "adaptive");
  test(weft::static_partition, "static_partition");
  test(weft::fixed_grain(7), "fixed_grain(7)");
}

using Range = weft::BlockedRange2d<int>;

// The cells a 2-D loop's blocks covered, and what each block looked like.
class GridLog {
 public:
  GridLog(int rows, int cols) : rows_(rows), cols_(cols), hits_(std::make_unique<std::atomic<int>[]>(cells(rows, cols))) {}

  void visit(const Range& b) {
    {
      std::lock_guard lock(mutex_);
      blocks_.push_back(b);
    }
    for (int r = b.row_lo; r < b.row_hi; ++r)
      for (int c = b.col_lo; c < b.col_hi; ++c) hits_[static_cast<std::size_t>(r * cols_ + c)].fetch_add(1);
  }

  testing::AssertionResult each_cell_once() const {
    for (const Range& b : blocks_) {
      if (b.row_lo >= b.row_hi || b.col_lo >= b.col_hi || b.row_lo < 0 || b.row_hi > rows_ || b.col_lo < 0 ||
          b.col_hi > cols_)
        return testing::AssertionFailure() << "block [" << b.row_lo << "," << b.row_hi << ")x[" << b.col_lo << ","
                                           << b.col_hi << ") is empty or outside " << rows_ << "x" << cols_;
    }
    for (int r = 0; r < rows_; ++r) {
      for (int c = 0; c < cols_; ++c) {
        const int h = hits_[static_cast<std::size_t>(r * cols_ + c)].load();
        if (h != 1) return testing::AssertionFailure() << "cell (" << r << "," << c << ") visited " << h << " times";
      }
    }
    return testing::AssertionSuccess();
  }

  const std::vector<Range>& blocks() const { return blocks_; }

 private:
  static std::size_t cells(int rows, int cols) { return static_cast<std::size_t>(std::max(rows * cols, 1)); }
  int rows_;
  int cols_;
  std::unique_ptr<std::atomic<int>[]> hits_;
  std::mutex mutex_;
  std::vector<Range> blocks_;
};

TEST(ParallelForIterators, EveryElementOnceWithEachPartitioner) {
  weft::test::Watchdog dog("iterator ranges");
  for (int w : {1, 2, 3}) {
    weft::ThreadPool pool(workers(w));
    for (std::size_t n : {0UL, 1UL, 2UL, 10'007UL, 1'000'000UL}) {
      for_each_partitioner([&](const auto& part, const char* name) {
        std::vector<std::atomic<int>> hits(n);
        weft::parallel_for(pool, hits.begin(), hits.end(), [](std::atomic<int>& h) { h.fetch_add(1); }, part);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << name << ", element " << i << " of " << n;
        weft::parallel_for(pool, hits.data(), hits.data() + n, 100, [](std::atomic<int>& h) { h.fetch_add(1); }, part);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 2) << name << ", grain 100, element " << i;
      });
    }
  }
}

TEST(ParallelForIterators, WritesThroughTheReferenceOfAnyRandomAccessIterator) {
  weft::ThreadPool pool(workers(2));
  std::deque<long> d(5000);
  std::iota(d.begin(), d.end(), 0L);
  weft::parallel_for(pool, d.begin(), d.end(), [](long& x) { x *= 3; });
  for (std::size_t i = 0; i < d.size(); ++i) ASSERT_EQ(d[i], 3 * static_cast<long>(i));
  std::vector<long> reversed(d.rbegin(), d.rend());
  weft::parallel_for(pool, reversed.rbegin(), reversed.rend(), [](long& x) { x += 1; });
  EXPECT_EQ(reversed.front(), 3 * 4999 + 1);
  EXPECT_EQ(reversed.back(), 1);
}

TEST(ParallelFor2d, EveryCellOnceForEachShapeGrainAndPartitioner) {
  weft::test::Watchdog dog("2-D ranges");
  const std::pair<int, int> shapes[] = {{0, 0}, {0, 5}, {5, 0}, {1, 1}, {101, 103}, {1000, 3}, {3, 1000}};
  for (int w : {1, 2, 3}) {
    weft::ThreadPool pool(workers(w));
    for (const auto& shape : shapes) {
      for (const auto& grains : {std::pair{1, 1}, std::pair{7, 3}, std::pair{0, -5}}) {
        // Named copies: clang 14 cannot capture structured bindings.
        const int rows = shape.first;
        const int cols = shape.second;
        const int rg = grains.first;
        const int cg = grains.second;
        for_each_partitioner([&](const auto& part, const char* name) {
          GridLog log(rows, cols);
          weft::parallel_for(pool, Range{0, rows, rg, 0, cols, cg}, [&](const Range& b) { log.visit(b); }, part);
          ASSERT_TRUE(log.each_cell_once()) << name << ", " << w << " workers, grains " << rg << "," << cg;
          for (const Range& b : log.blocks()) ASSERT_TRUE(b.row_grain == rg && b.col_grain == cg) << name;
        });
      }
    }
  }
}

TEST(ParallelFor2d, OffsetAndReversedBounds) {
  weft::ThreadPool pool(workers(2));
  std::atomic<long> sum{0};
  weft::parallel_for(pool, Range{-5, 5, 1, 10, 20, 1}, [&](const Range& b) {
    for (int r = b.row_lo; r < b.row_hi; ++r)
      for (int c = b.col_lo; c < b.col_hi; ++c) sum.fetch_add(r * 100 + c);
  });
  EXPECT_EQ(sum.load(), 100 * -5 * 10 + 145 * 10);  // rows -5..4 sum to -5, columns 10..19 to 145
  std::atomic<int> n{0};
  weft::parallel_for(pool, Range{5, 3, 1, 0, 10, 1}, [&](const Range&) { n++; });
  weft::parallel_for(pool, Range{0, 10, 1, 4, 4, 1}, [&](const Range&) { n++; });
  EXPECT_EQ(n.load(), 0);
}

// Like oneTBB's blocked_range2d: the dimension with more grains splits, so
// a wide grid's blocks keep all their rows and a tall one's all columns.
TEST(ParallelFor2d, SplitsTheLongerDimension) {
  weft::ThreadPool pool(workers(2));
  for (const auto& [rows, cols] : {std::pair{3, 1000}, std::pair{1000, 3}}) {
    GridLog log(rows, cols);
    weft::parallel_for(pool, Range{0, rows, 1, 0, cols, 1}, [&](const Range& b) { log.visit(b); },
                       weft::fixed_grain(100));
    ASSERT_TRUE(log.each_cell_once());
    EXPECT_GT(log.blocks().size(), 1U);
    for (const Range& b : log.blocks()) {
      if (rows < cols) {
        EXPECT_EQ(b.row_hi - b.row_lo, rows);
      } else {
        EXPECT_EQ(b.col_hi - b.col_lo, cols);
      }
    }
  }
}

TEST(ParallelForFixedGrain, LeavesHoldAtMostTheGrain) {
  weft::ThreadPool pool(workers(3));
  for (std::size_t g : {0UL, 1UL, 2UL, 7UL, 64UL, 5000UL}) {
    GridLog rows_only(1009, 1);
    weft::parallel_for(pool, Range{0, 1009, 1, 0, 1, 1}, [&](const Range& b) { rows_only.visit(b); },
                       weft::fixed_grain(g));
    ASSERT_TRUE(rows_only.each_cell_once());
    for (const Range& b : rows_only.blocks()) {
      ASSERT_GE(b.row_hi - b.row_lo, 1);
      ASSERT_LE(static_cast<std::size_t>(b.row_hi - b.row_lo), std::max<std::size_t>(g, 1)) << "grain " << g;
    }
    GridLog grid(101, 103);
    weft::parallel_for(pool, Range{0, 101, 1, 0, 103, 1}, [&](const Range& b) { grid.visit(b); },
                       weft::fixed_grain(g));
    ASSERT_TRUE(grid.each_cell_once());
    for (const Range& b : grid.blocks())
      ASSERT_LE(static_cast<std::size_t>((b.row_hi - b.row_lo) * (b.col_hi - b.col_lo)), std::max<std::size_t>(g, 1));
  }
}

// A grain larger than fixed_grain's bound wins: the range is not divisible.
TEST(ParallelForFixedGrain, TheRangesGrainIsAFloor) {
  weft::ThreadPool pool(workers(2));
  GridLog log(1000, 1);
  weft::parallel_for(pool, Range{0, 1000, 300, 0, 1, 1}, [&](const Range& b) { log.visit(b); }, weft::fixed_grain(1));
  ASSERT_TRUE(log.each_cell_once());
  for (const Range& b : log.blocks()) EXPECT_GT(b.row_hi - b.row_lo, 150);
}

// Which worker ran each index of a static loop. Every thread that enters
// the loop waits until each of the pool's workers has entered: so none can
// finish its block and take another's, and the mapping the test sees is
// the one static_partition promises whenever every worker is free.
std::vector<int> static_owners(weft::ThreadPool& pool, std::size_t n) {
  std::vector<int> owner(n, -2);
  std::vector<std::atomic<bool>> entered(static_cast<std::size_t>(pool.size()));
  std::atomic<int> started{0};
  weft::parallel_for(
      pool, std::size_t{0}, n,
      [&](std::size_t i) {
        const int w = weft::ThreadPool::current_worker_index();
        if (w >= 0 && !entered[static_cast<std::size_t>(w)].exchange(true)) {
          started.fetch_add(1);
          while (started.load() < pool.size()) std::this_thread::yield();
        }
        owner[i] = w;
      },
      weft::static_partition);
  return owner;
}

// Block k is the k-th contiguous part, run by worker k.
void expect_block_k_on_worker_k(const std::vector<int>& owner, int blocks) {
  ASSERT_EQ(owner.front(), 0);
  ASSERT_EQ(owner.back(), blocks - 1);
  for (std::size_t i = 1; i < owner.size(); ++i) {
    ASSERT_TRUE(owner[i] == owner[i - 1] || owner[i] == owner[i - 1] + 1) << "index " << i << ": worker "
                                                                             << owner[i - 1] << " then " << owner[i];
  }
}

TEST(ParallelForStatic, SameWorkerRunsTheSameBlockOnEveryCall) {
  weft::test::Watchdog dog("static mapping");
  for (int w : {1, 2, 3}) {
    weft::ThreadPool pool(workers(w));
    const std::vector<int> first = static_owners(pool, 100'000);
    expect_block_k_on_worker_k(first, w);
    for (int call = 0; call < 5; ++call) ASSERT_EQ(static_owners(pool, 100'000), first) << "call " << call;
  }
}

// A worker that calls runs its own block; the others go to their workers.
TEST(ParallelForStatic, ACallingWorkerRunsItsOwnBlock) {
  weft::test::Watchdog dog("static from a worker");
  weft::ThreadPool pool(workers(3));
  for (int call = 0; call < 5; ++call) {
    auto f = pool.submit([&] { return std::pair{weft::ThreadPool::current_worker_index(), static_owners(pool, 30'000)}; });
    const auto [caller, owner] = weft::detail::get_remote(f);
    expect_block_k_on_worker_k(owner, 3);
    EXPECT_EQ(owner[static_cast<std::size_t>(caller) * 10'000], caller);
  }
}

// Without a barrier a block may move to a worker that finished early, but
// every index still runs once; fewer indices than workers leaves blocks empty.
TEST(ParallelForStatic, EveryIndexOnceWhateverTheTiming) {
  weft::ThreadPool pool(workers(3));
  for (std::size_t n : {1UL, 2UL, 3UL, 4UL, 1000UL}) {
    std::vector<std::atomic<int>> hits(n);
    for (int call = 0; call < 20; ++call)
      weft::parallel_for(pool, hits.begin(), hits.end(), [](std::atomic<int>& h) { h.fetch_add(1); },
                         weft::static_partition);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 20) << "n " << n << ", index " << i;
  }
}

// The only worker calls: nobody is idle, so adaptive must not split; the
// whole range is one leaf (2-D: one body call; 1-D: one run in order).
TEST(ParallelForAdaptive, OneWorkerPoolRunsOneLeaf) {
  weft::ThreadPool pool(workers(1));
  auto f = pool.submit([&] {
    GridLog log(300, 200);
    weft::parallel_for(pool, Range{0, 300, 1, 0, 200, 1}, [&](const Range& b) { log.visit(b); });
    EXPECT_TRUE(log.each_cell_once());
    std::vector<int> order;
    weft::parallel_for(pool, 0, 100'000, [&](int i) { order.push_back(i); });
    std::vector<int> expected(100'000);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(order, expected);
    return log.blocks().size();
  });
  EXPECT_EQ(weft::detail::get_remote(f), 1U);
}

// From outside a 1-worker pool: the pieces cut up front for the two
// threads, then splits only where a piece starts while the worker is idle:
// the worker starts pieces only when busy (not idle), and the caller, not
// being a worker, starts just its first; each split there halves it, so
// at most log2(cells) of them.
TEST(ParallelForAdaptive, FewLeavesFromOutsideAOneWorkerPool) {
  weft::ThreadPool pool(workers(1));
  for (int call = 0; call < 20; ++call) {
    GridLog log(256, 256);
    weft::parallel_for(pool, Range{0, 256, 1, 0, 256, 1}, [&](const Range& b) { log.visit(b); }, weft::adaptive);
    ASSERT_TRUE(log.each_cell_once());
    EXPECT_LE(log.blocks().size(), 2 * weft::detail::kAdaptivePiecesPerThread + 16U);
  }
}

TEST(ParallelForStop, RequestedBeforeTheCallRunsNothing) {
  weft::ThreadPool pool(workers(2));
  std::stop_source src;
  src.request_stop();
  std::atomic<int> ran{0};
  for_each_partitioner([&](const auto& part, const char* name) {
    std::vector<int> v(10'000);
    weft::parallel_for(pool, v.begin(), v.end(), [&](int&) { ran++; }, part, src.get_token());
    weft::parallel_for(pool, 0, 10'000, [&](int) { ran++; }, part, src.get_token());
    weft::parallel_for(pool, 0, 10'000, 10, [&](int) { ran++; }, part, src.get_token());
    weft::parallel_for(pool, Range{0, 100, 1, 0, 100, 1}, [&](const Range&) { ran++; }, part, src.get_token());
    EXPECT_EQ(ran.load(), 0) << name;
  });
  weft::parallel_for(pool, 0, 10'000, [&](int) { ran++; }, src.get_token());  // adaptive by default
  EXPECT_EQ(ran.load(), 0);
}

// Chunks running when stop is requested finish; no new one starts: a
// 1-D chunk is at most 1024 indices (fixed_grain(500): 500), and 4 threads
// run at most one each, so far fewer than n indices run.
TEST(ParallelForStop, RequestedFromInsideAChunkStopsNewChunks) {
  weft::test::Watchdog dog("stop from inside");
  weft::ThreadPool pool(workers(3));
  constexpr int kN = 1'000'000;
  const auto run = [&](const auto& part, const char* name) {
    std::stop_source src;
    std::atomic<int> ran{0};
    weft::parallel_for(
        pool, 0, kN,
        [&](int) {
          if (ran.fetch_add(1) == 100) src.request_stop();
        },
        part, src.get_token());
    EXPECT_GT(ran.load(), 100) << name;
    EXPECT_LE(ran.load(), 4 * 1024 + 100) << name;
  };
  run(weft::adaptive, "adaptive");
  run(weft::static_partition, "static_partition");
  run(weft::fixed_grain(500), "fixed_grain(500)");
  std::stop_source src;
  std::atomic<int> blocks{0};
  weft::parallel_for(
      pool, Range{0, 1000, 1, 0, 1000, 1},
      [&](const Range&) {
        if (blocks.fetch_add(1) == 0) src.request_stop();
      },
      weft::fixed_grain(100), src.get_token());
  EXPECT_GE(blocks.load(), 1);
  EXPECT_LE(blocks.load(), 4);  // one running per thread at most
}

TEST(ParallelForExceptions, EveryElementRunsAndTheFirstErrorArrives) {
  weft::ThreadPool pool(workers(2));
  for_each_partitioner([&](const auto& part, const char* name) {
    std::vector<int> v(20'000, 1);
    std::atomic<int> ran{0};
    EXPECT_THROW(weft::parallel_for(
                     pool, v.begin(), v.end(),
                     [&](int& x) {
                       ran++;
                       if (&x == &v[123] || &x == &v[19'000]) throw std::out_of_range("bad element");
                     },
                     part),
                 std::out_of_range)
        << name;
    EXPECT_EQ(ran.load(), 20'000) << name;
    std::atomic<int> blocks{0};
    std::atomic<int> cells{0};
    EXPECT_THROW(weft::parallel_for(
                     pool, Range{0, 100, 1, 0, 100, 1},
                     [&](const Range& b) {
                       blocks++;
                       cells += (b.row_hi - b.row_lo) * (b.col_hi - b.col_lo);
                       if (b.row_lo == 0 && b.col_lo == 0) throw std::runtime_error("bad block");
                     },
                     part),
                 std::runtime_error)
        << name;
    EXPECT_EQ(cells.load(), 10'000) << name;
    // The pool is still usable.
    std::atomic<int> after{0};
    weft::parallel_for(pool, v.begin(), v.end(), [&](int&) { after++; }, part);
    EXPECT_EQ(after.load(), 20'000) << name;
  });
}

TEST(ParallelForNested, InsideATaskOnAOneWorkerPool) {
  weft::test::Watchdog dog("nested ranges");
  weft::ThreadPool pool(workers(1));
  for_each_partitioner([&](const auto& part, const char* name) {
    auto f = pool.submit([&] {
      std::vector<int> outer(100);
      std::atomic<long> sum{0};
      weft::parallel_for(pool, outer.begin(), outer.end(), [&](int&) {
        weft::parallel_for(pool, Range{0, 10, 1, 0, 10, 1}, [&](const Range& b) {
          sum.fetch_add((b.row_hi - b.row_lo) * (b.col_hi - b.col_lo));
        }, part);
      }, part);
      return sum.load();
    });
    EXPECT_EQ(weft::detail::get_remote(f), 100L * 100) << name;
  });
}

TEST(ParallelForDefaultPool, FormsWithoutAPool) {
  std::vector<int> v(1000, 1);
  weft::parallel_for(v.begin(), v.end(), [](int& x) { x += 1; }, weft::static_partition);
  weft::parallel_for(std::size_t{0}, v.size(), [&](std::size_t i) { v[i] *= 2; });
  std::atomic<int> cells{0};
  weft::parallel_for(Range{0, 10, 1, 0, 10, 1}, [&](const Range& b) { cells += (b.row_hi - b.row_lo) * (b.col_hi - b.col_lo); });
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](int x) { return x == 4; }));
  EXPECT_EQ(cells.load(), 100);
}

}  // namespace
