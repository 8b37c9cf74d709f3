// docs/guide/pool.md: the work-stealing pool, futures, fork-join,
// parallel_for, and where errors go; docs/guide/algorithms.md (Loops):
// parallel_for over iterators and 2-D blocks, with partitioners.
#include <weft/weft.hpp>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <stop_token>
#include <vector>

#include "expect.hpp"

namespace {

long work(long x) { return x * x; }

}  // namespace

int main() {
  weft::ThreadPool pool;                          // available_parallelism() workers
  weft::PoolOptions o;
  o.workers = 2;
  o.placement = weft::Placement::compact;         // pin workers
  weft::ThreadPool pinned(o);
  expect(pool.size() == weft::available_parallelism() && pinned.size() == 2, "worker counts");

  std::atomic<int> logged{0};
  pool.post([&] { logged++; });                   // fire and forget
  weft::Future<int> f = pool.submit([] { return 42; });
  int v = f.get();                                // value, or the task's exception rethrown
  expect(v == 42, "get() returns the task's value");

  long left = 0;
  long right = 0;
  weft::TaskGroup g(pool);                        // fork-join
  g.run([&] { left = work(3); });
  right = work(4);
  g.wait();                                       // first exception rethrown; all tasks ran
  expect(left + right == 25, "wait() returns after the group's tasks");

  std::vector<int> in(100'000, 1);
  std::vector<int> out(in.size(), 0);
  weft::parallel_for(pool, std::size_t{0}, in.size(), [&](std::size_t i) { out[i] = 2 * in[i]; });
  pool.wait_idle();                               // nothing queued or running
  for (const int x : out) expect(x == 2, "parallel_for visits every index");
  expect(logged == 1, "the posted task ran before wait_idle() returned");

  // Loops (docs/guide/algorithms.md): iterators, 2-D blocks, partitioners.
  weft::parallel_for(pool, out.begin(), out.end(), [](int& x) { x += 1; });    // f(element)
  for (const int x : out) expect(x == 3, "parallel_for visits every element");
  const std::size_t rows = 300;
  const std::size_t cols = 400;
  std::vector<float> grid(rows * cols, 0.0F);
  weft::BlockedRange2d<std::size_t> cells{0, rows, 16, 0, cols, 64};           // grains 16 x 64
  weft::parallel_for(pool, cells, [&](const weft::BlockedRange2d<std::size_t>& b) {
    for (std::size_t r = b.row_lo; r < b.row_hi; ++r)
      for (std::size_t c = b.col_lo; c < b.col_hi; ++c) grid[r * cols + c] = float(r + c);
  });
  expect(grid[rows * cols - 1] == float(rows + cols - 2), "the 2-D loop covers the grid");
  for (int pass = 0; pass < 3; ++pass)                                         // the same block per worker
    weft::parallel_for(pool, grid.begin(), grid.end(), [](float& x) { x *= 0.5F; }, weft::static_partition);
  std::stop_source stop;
  weft::parallel_for(pool, 0, 1'000'000, [&](int i) { if (i == 500) stop.request_stop(); },
                     weft::fixed_grain(1000), stop.get_token());               // leaves of <= 1000; stoppable
  expect(stop.stop_requested(), "the loop reached index 500 and stopped");

  // Errors are never dropped: a submitted task's goes to its Future, a
  // posted task's to the next wait_idle().
  weft::Future<int> bad = pool.submit([]() -> int { throw std::runtime_error("task failed"); });
  bool caught = false;
  try {
    (void)bad.get();
  } catch (const std::runtime_error&) {
    caught = true;
  }
  expect(caught, "get() rethrows the task's exception");
  pool.post([] { throw std::runtime_error("posted task failed"); });
  caught = false;
  try {
    pool.wait_idle();
  } catch (const std::runtime_error&) {
    caught = true;
  }
  expect(caught, "wait_idle() rethrows a posted task's exception");
  return 0;
}
