// docs/guide/pool.md (Seeing inside): what the workers did — stats(), the
// worker start/stop hooks, and a trace for Perfetto.
#include <weft/weft.hpp>

#include <atomic>
#include <sstream>
#include <string>
#include <vector>

#include "expect.hpp"

int main() {
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  weft::PoolOptions o;
  o.workers = 2;
  o.on_worker_start = [&](int) { started++; };   // name the thread, set up an arena...
  o.on_worker_stop = [&](int) { stopped++; };    // ...and tear it down
  o.trace_capacity = 1 << 14;                    // events kept per worker; 0 (default): no trace
  weft::ThreadPool pool(o);

  std::vector<long> squares(100'000);
  weft::parallel_for(pool, std::size_t{0}, squares.size(), [&](std::size_t i) { squares[i] = static_cast<long>(i * i); });
  expect(squares.back() == 99'999L * 99'999L, "parallel_for filled the vector");
  for (int i = 0; i < 100; ++i) pool.post([] {});
  pool.wait_idle();

  weft::PoolStats s = pool.stats();               // any thread, any time
  expect(s.workers.size() == 2, "one entry per worker");
  expect(s.workers[0].tasks_run + s.workers[1].tasks_run >= 100, "the workers ran the posted tasks");
  // This thread computed the loop as one of the 2 (in the pool's seat), or
  // handed it to the workers: its share is `seated`.
  expect(s.total.tasks_run == s.workers[0].tasks_run + s.workers[1].tasks_run + s.seated.tasks_run,
         "total is the sum");

  std::ostringstream json;                        // or a std::ofstream("trace.json")
  weft::write_chrome_trace(json, {pool.trace()}); // open it in ui.perfetto.dev
  expect(json.str().find(R"("name":"worker 1")") != std::string::npos, "a thread per worker");
  expect(json.str().find(R"("ph":"X")") != std::string::npos, "task runs as complete events");

  pool.shutdown();
  expect(started == 2 && stopped == 2, "each hook ran once per worker");
}
