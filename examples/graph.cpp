// docs/guide/graph.md: a frame of a simulation as a task graph, built once
// and run many times; a condition node that loops; a graph inside a graph;
// stopping a run; the DOT dump.
#include <weft/weft.hpp>

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "expect.hpp"

int main() {
  weft::ThreadPool pool;

  // One frame: read the input, then physics and audio side by side, then draw.
  std::vector<double> positions(10'000, 0.0);
  double velocity = 0;
  std::atomic<int> sounds{0};
  int frames_drawn = 0;

  weft::TaskGraph frame("frame");
  weft::GraphNode input = frame.emplace([&] { velocity += 1; }).name("input");
  weft::GraphNode physics = frame.emplace([&] {
    weft::parallel_for(pool, std::size_t{0}, positions.size(), [&](std::size_t i) { positions[i] += velocity; });
  }).name("physics");
  weft::GraphNode audio = frame.emplace([&] { sounds.fetch_add(1); }).name("audio");
  weft::GraphNode draw = frame.emplace([&] { ++frames_drawn; }).name("draw");
  input.precede(physics, audio);      // physics and audio after input
  draw.succeed(physics, audio);       // draw after both

  frame.run(pool).get();              // one frame
  frame.run_n(pool, 59).get();        // 59 more, one after another
  expect(frames_drawn == 60, "every run drew a frame");
  expect(positions[0] == 60.0 * 61.0 / 2.0, "physics saw each frame's velocity, in order");
  expect(sounds.load() == 60, "audio ran once per frame");

  // A loop: a condition node returns the index of the successor to run next.
  weft::TaskGraph solve("solve");
  long error = 1'000'000;
  int iterations = 0;
  weft::GraphNode step = solve.emplace([&] { error /= 10; ++iterations; }).name("step");
  weft::GraphNode converged = solve.emplace_condition([&] { return error < 10 ? 1 : 0; }).name("converged?");
  weft::GraphNode report = solve.emplace([&] {}).name("report");
  step.precede(converged);
  converged.precede(step, report);    // 0: step again, 1: report
  solve.run(pool).get();
  expect(iterations == 6, "the loop ran until the condition picked the way out");

  // A graph as one node of another: the frame runs, then the solver.
  weft::TaskGraph tick("tick");
  weft::GraphNode f = tick.emplace_graph(frame).name("frame");
  weft::GraphNode s = tick.emplace_graph(solve).name("solve");
  f.precede(s);
  error = 1'000;
  tick.run(pool).get();
  expect(frames_drawn == 61, "the inner graph ran once");
  expect(iterations == 9, "and so did the solver, three steps this time");

  // Stopping: nodes not yet started are skipped and the run says so.
  std::stop_source stop;
  weft::TaskGraph long_job;
  weft::GraphNode first = long_job.emplace([&] { stop.request_stop(); });
  std::atomic<bool> second_ran{false};
  first.precede(long_job.emplace([&] { second_ran = true; }));
  bool cancelled = false;
  try {
    long_job.run(pool, stop.get_token()).get();
  } catch (const weft::cancelled&) {
    cancelled = true;
  }
  expect(cancelled && !second_ran, "a stop skips the nodes not started");

  // Errors name the problem: a cycle with no condition node on it.
  weft::TaskGraph bad("bad");
  weft::GraphNode a = bad.emplace([] {}).name("a");
  weft::GraphNode b = bad.emplace([] {}).name("b");
  a.precede(b);
  b.precede(a);
  std::string message;
  try {
    bad.run(pool).get();
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  expect(message.find("'a' -> 'b' -> 'a'") != std::string::npos, "the cycle is named");

  std::ostringstream dot;
  frame.dump(dot);                    // GraphViz: dot -Tsvg
  expect(dot.str().find("n0 -> n1;") != std::string::npos, "the dump has the edges");
  expect(dot.str().find("label=\"physics\"") != std::string::npos, "and the names");
  return 0;
}
