// TaskGraph under load, sized by weft::test::stress_count and run under
// ThreadSanitizer: several threads build their own random DAGs and run them
// on one small pool at once (from outside and from inside pool tasks),
// several runs of each queued together; other
// threads run condition loops and graphs that hold graphs, some of them
// stopped or thrown out of mid-run. Each node checks that all of its
// predecessors finished in this run before it started (the join counters'
// ordering) and bumps a plain per-node counter that TSan reports as a race if
// two runs of one graph ever overlapped.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

#include "callers.hpp"
#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/task_graph.hpp"
#include "weft/exec/thread_pool.hpp"

namespace {

// A random DAG of n nodes: edges only from lower to higher index. Each node
// records the run it last finished in (plain: runs of one graph never
// overlap, and its predecessors' writes happen before it through the join
// counters); a node whose predecessor has not finished this run is an error.
struct RandomDag {
  struct Node {
    std::vector<int> preds;
    long finished_run = 0;  // plain on purpose
  };
  std::vector<Node> nodes;
  long run = 0;  // bumped by the source node that all others follow
  std::atomic<long> errors{0};
  weft::TaskGraph graph;

  RandomDag(std::mt19937_64& rng, int n) : nodes(static_cast<std::size_t>(n)) {
    std::vector<weft::GraphNode> handles;
    handles.push_back(graph.emplace([this] {
      ++run;
      nodes[0].finished_run = run;
    }));
    for (int i = 1; i < n; ++i) {
      handles.push_back(graph.emplace([this, i] {
        for (int p : nodes[static_cast<std::size_t>(i)].preds)
          if (nodes[static_cast<std::size_t>(p)].finished_run != run) errors.fetch_add(1);
        nodes[static_cast<std::size_t>(i)].finished_run = run;
      }));
      // Node 0 precedes every node, so `run` is bumped before all of them.
      handles[0].precede(handles.back());
      nodes[static_cast<std::size_t>(i)].preds.push_back(0);
      const int extra = static_cast<int>(rng() % 3);
      for (int e = 0; e < extra && i > 1; ++e) {
        const int p = 1 + static_cast<int>(rng() % static_cast<unsigned>(i - 1));
        handles[static_cast<std::size_t>(p)].precede(handles.back());
        nodes[static_cast<std::size_t>(i)].preds.push_back(p);
      }
    }
  }
};

// Three threads on a pool of three, every other round from inside a pool
// task (whose waits run the graphs' nodes).
TEST(TaskGraphStress, ManyRandomGraphsRunConcurrentlyInOrder) {
  weft::test::Watchdog dog("task graph stress", std::chrono::seconds(240));
  std::atomic<long> errors{0};
  weft::test::callers_and_nested(3, 3, weft::test::stress_count(2000, 100),
                                 [&](weft::ThreadPool& pool, std::mt19937_64& rng) {
                                   RandomDag dag(rng, 2 + static_cast<int>(rng() % 40));
                                   const int runs = 1 + static_cast<int>(rng() % 4);
                                   std::vector<weft::Future<void>> fs;
                                   for (int k = 0; k < runs; ++k) fs.push_back(dag.graph.run(pool));
                                   fs.push_back(dag.graph.run_n(pool, 3));
                                   for (auto& f : fs) f.get();
                                   if (dag.run != runs + 3) errors.fetch_add(1);
                                   errors.fetch_add(dag.errors.load());
                                 });
  EXPECT_EQ(errors.load(), 0);
}

TEST(TaskGraphStress, LoopsCompositionFailuresAndStopsConcurrently) {
  weft::test::Watchdog dog("task graph loops stress", std::chrono::seconds(240));
  weft::PoolOptions o;
  o.workers = 2;
  weft::ThreadPool pool(o);
  const long rounds = weft::test::stress_count(3000, 100);
  std::vector<std::thread> threads;
  std::atomic<long> errors{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      // A loop of `body` rounds around a graph node that runs `inner`, which
      // throws on round `throw_at` of some runs and stops on others.
      weft::TaskGraph inner;
      long inner_runs = 0;  // plain: inner's runs never overlap
      std::atomic<long> throw_at{-1};
      inner.emplace([&] {
        ++inner_runs;
        if (inner_runs == throw_at.load()) throw std::runtime_error("inner threw");
      });
      weft::TaskGraph outer;
      int rounds_left = 0;  // touched by the condition only, between runs by this thread
      std::stop_source* stopper = nullptr;
      weft::GraphNode head = outer.emplace([&] {
        if (stopper != nullptr && rounds_left == 2) stopper->request_stop();
      });
      weft::GraphNode sub = outer.emplace_graph(inner);
      weft::GraphNode again = outer.emplace_condition([&] { return --rounds_left > 0 ? 0 : 1; });
      head.precede(sub);
      sub.precede(again);
      again.precede(head, outer.emplace([] {}));
      std::mt19937_64 rng(static_cast<std::uint64_t>(t) + 99);
      for (long r = 0; r < rounds; ++r) {
        rounds_left = 1 + static_cast<int>(rng() % 6);
        const int kind = static_cast<int>(rng() % 4);
        const long before = inner_runs;
        std::stop_source src;
        stopper = kind == 1 ? &src : nullptr;
        throw_at = kind == 2 ? before + 1 + static_cast<long>(rng() % static_cast<unsigned>(rounds_left)) : -1;
        const int asked = rounds_left;
        try {
          outer.run(pool, src.get_token()).get();
          if (kind == 2) errors.fetch_add(1);  // must have thrown
          if (kind != 1 && inner_runs - before != asked) errors.fetch_add(1);
        } catch (const std::runtime_error&) {
          if (kind != 2) errors.fetch_add(1);
        } catch (const weft::cancelled&) {
          if (kind != 1) errors.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
