// TaskGraph: dependency order, condition loops, composition, errors that
// name the node, failures and stops, runs that queue in call order, DOT.
#include "weft/exec/task_graph.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "future_support.hpp"
#include "throws.hpp"
#include "watchdog.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/parallel_for.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/exec/trace.hpp"
#include "weft/sync/event.hpp"

namespace {

using namespace std::chrono_literals;
using weft::test::workers;

// A node's runs: how many, and the tick of the last (a counter shared by a
// test's nodes, so order can be compared).
struct Probe {
  std::atomic<int> runs{0};
  std::atomic<long> at{-1};
  void hit(std::atomic<long>& clock) {
    at.store(clock.fetch_add(1));
    runs.fetch_add(1);
  }
};

TEST(TaskGraph, DiamondRunsEachNodeOnceAfterItsPredecessors) {
  weft::test::Watchdog dog("graph diamond");
  weft::ThreadPool pool(workers(2));
  weft::TaskGraph g("diamond");
  std::atomic<long> clock{0};
  Probe a, b, c, d;
  weft::GraphNode na = g.emplace([&] { a.hit(clock); }).name("a");
  weft::GraphNode nb = g.emplace([&] { b.hit(clock); }).name("b");
  weft::GraphNode nc = g.emplace([&] { c.hit(clock); }).name("c");
  weft::GraphNode nd = g.emplace([&] { d.hit(clock); }).name("d");
  na.precede(nb, nc);
  nd.succeed(nb, nc);
  EXPECT_EQ(g.size(), 4u);
  EXPECT_EQ(na.name(), "a");
  for (int r = 1; r <= 3; ++r) {
    g.run(pool).get();
    for (Probe* p : {&a, &b, &c, &d}) EXPECT_EQ(p->runs.load(), r);
    EXPECT_LT(a.at.load(), b.at.load());
    EXPECT_LT(a.at.load(), c.at.load());
    EXPECT_LT(b.at.load(), d.at.load());
    EXPECT_LT(c.at.load(), d.at.load());
  }
  g.run_n(pool, 100).get();
  EXPECT_EQ(d.runs.load(), 103);
}

TEST(TaskGraph, NodesWithoutPredecessorsAllStartWithTheRun) {
  weft::ThreadPool pool(workers(2));
  weft::TaskGraph g;
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) g.emplace([&] { ran.fetch_add(1); });
  g.run(pool).get();
  EXPECT_EQ(ran.load(), 50);
}

TEST(TaskGraph, ConditionLoopsBackUntilItPicksTheWayOut) {
  weft::test::Watchdog dog("graph loop");
  weft::ThreadPool pool(workers(2));
  weft::TaskGraph g("loop");
  std::atomic<int> loads{0}, lefts{0}, rights{0}, merges{0}, finishes{0};
  int rounds = 0;  // only the condition touches it: it runs after merge, which runs after all
  weft::GraphNode load = g.emplace([&] { loads.fetch_add(1); }).name("load");
  weft::GraphNode left = g.emplace([&] { lefts.fetch_add(1); });
  weft::GraphNode right = g.emplace([&] { rights.fetch_add(1); });
  weft::GraphNode merge = g.emplace([&] { merges.fetch_add(1); });
  weft::GraphNode finish = g.emplace([&] { finishes.fetch_add(1); }).name("finish");
  load.precede(left, right);
  merge.succeed(left, right);
  weft::GraphNode again = g.emplace_condition([&] { return ++rounds < 5 ? 0 : 1; }).name("again");
  merge.precede(again);
  again.precede(load, finish);
  g.run(pool).get();
  EXPECT_EQ(loads.load(), 5);
  EXPECT_EQ(lefts.load(), 5);
  EXPECT_EQ(rights.load(), 5);
  EXPECT_EQ(merges.load(), 5);
  EXPECT_EQ(finishes.load(), 1) << "finish waits for the condition: it is no source";
  rounds = 0;
  g.run(pool).get();
  EXPECT_EQ(loads.load(), 10);
  EXPECT_EQ(finishes.load(), 2);
}

TEST(TaskGraph, ConditionOutOfRangeFailsTheRunNamingTheNode) {
  weft::ThreadPool pool(workers(1));
  weft::TaskGraph g("g");
  std::atomic<int> after{0};
  weft::GraphNode c = g.emplace_condition([] { return 2; }).name("pick");
  c.precede(g.emplace([&] { after.fetch_add(1); }), g.emplace([&] { after.fetch_add(1); }));
  EXPECT_TRUE(weft::test::throws_containing<std::out_of_range>([&] { g.run(pool).get(); },
                                                              {"'pick' returned 2; it has 2 successor(s)"}));
  EXPECT_EQ(after.load(), 0);
}

TEST(TaskGraph, ACycleWithoutAConditionIsRefusedNamingItsNodes) {
  weft::ThreadPool pool(workers(1));
  weft::TaskGraph g("cyclic");
  weft::GraphNode s = g.emplace([] {}).name("start");
  weft::GraphNode a = g.emplace([] {}).name("a");
  weft::GraphNode b = g.emplace([] {}).name("b");
  s.precede(a);
  a.precede(b);
  b.precede(a);
  EXPECT_TRUE(weft::test::throws_containing<std::invalid_argument>(
      [&] { (void)g.run(pool); }, {"'a' -> 'b' -> 'a'", "weft::TaskGraph 'cyclic'"}));
  // The same shape through a condition is a loop, and runs.
  weft::TaskGraph h;
  std::atomic<int> n{0};
  weft::GraphNode x = h.emplace([&] { n.fetch_add(1); });
  weft::GraphNode back = h.emplace_condition([&] { return n.load() < 3 ? 0 : 1; });
  x.precede(back);
  back.precede(x, h.emplace([] {}));
  h.run(pool).get();
  EXPECT_EQ(n.load(), 3);
}

TEST(TaskGraph, EdgesToAnotherGraphAndEmptyHandlesAreRefused) {
  weft::TaskGraph g("one"), h("two");
  weft::GraphNode a = g.emplace([] {}).name("a");
  weft::GraphNode b = h.emplace([] {}).name("b");
  EXPECT_TRUE(weft::test::throws_containing<std::invalid_argument>(
      [&] { a.precede(b); }, {"'a' of weft::TaskGraph 'one' and 'b' of weft::TaskGraph 'two'"}));
  weft::GraphNode none;
  EXPECT_FALSE(none.valid());
  EXPECT_THROW(a.precede(none), std::invalid_argument);
  EXPECT_THROW(none.name("x"), std::invalid_argument);
  EXPECT_THROW(g.emplace_graph(g), std::invalid_argument);
}

TEST(TaskGraph, AGraphThatContainsItselfIsRefused) {
  weft::ThreadPool pool(workers(1));
  weft::TaskGraph outer("outer"), inner("inner");
  outer.emplace_graph(inner);
  inner.emplace_graph(outer);
  EXPECT_THROW((void)outer.run(pool), std::invalid_argument);
}

TEST(TaskGraph, ChangingItWhileARunIsQueuedOrRunningIsRefused) {
  weft::test::Watchdog dog("graph change while running");
  weft::ThreadPool pool(workers(1));
  weft::TaskGraph g("busy");
  weft::Event go;
  weft::GraphNode a = g.emplace([&] { go.wait(); });
  weft::Future<void> f = g.run(pool);
  EXPECT_THROW(g.emplace([] {}), std::logic_error);
  EXPECT_THROW(a.precede(a), std::logic_error);
  EXPECT_THROW(a.name("late"), std::logic_error);
  go.set();
  f.get();
  EXPECT_NO_THROW(a.name("now"));
  EXPECT_EQ(g.size(), 1u);
}

TEST(TaskGraph, AThrowingNodeSkipsWhatHasNotStartedAndTheGraphRunsAgain) {
  weft::ThreadPool pool(workers(2));
  weft::TaskGraph g;
  std::atomic<bool> fail{true};
  std::atomic<int> after{0};
  weft::GraphNode a = g.emplace([&] {
    if (fail.load()) throw std::runtime_error("a failed");
  });
  weft::GraphNode b = g.emplace([&] { after.fetch_add(1); });
  weft::GraphNode c = g.emplace([&] { after.fetch_add(1); });
  a.precede(b);
  b.precede(c);
  EXPECT_TRUE(weft::test::throws_what<std::runtime_error>([&] { g.run_n(pool, 10).get(); }, "a failed"));
  EXPECT_EQ(after.load(), 0);
  fail = false;
  g.run(pool).get();
  EXPECT_EQ(after.load(), 2);
}

// A join whose predecessors did not all run (a failed run, a branch a
// condition did not pick) waits for all of them again on the next run.
TEST(TaskGraph, AJoinLeftPartWayByAFailedRunWaitsForEveryPredecessorOnTheNext) {
  weft::ThreadPool pool(workers(1));  // one worker: the sources run in order, b first
  weft::TaskGraph g;
  std::atomic<long> clock{0};
  std::atomic<bool> fail{true};
  Probe a, b, x;
  weft::GraphNode nb = g.emplace([&] { b.hit(clock); });
  weft::GraphNode na = g.emplace([&] {
    if (fail.load()) throw std::runtime_error("a failed");
    a.hit(clock);
  });
  weft::GraphNode nx = g.emplace([&] { x.hit(clock); });
  nx.succeed(na, nb);
  EXPECT_TRUE(weft::test::throws_what<std::runtime_error>([&] { g.run(pool).get(); }, "a failed"));
  EXPECT_EQ(x.runs.load(), 0);
  fail = false;
  g.run_n(pool, 3).get();
  EXPECT_EQ(x.runs.load(), 3);
  EXPECT_LT(a.at.load(), x.at.load()) << "x ran before a, its other predecessor, finished";
}

TEST(TaskGraph, AJoinLeftPartWayByAStoppedRunWaitsForEveryPredecessorOnTheNext) {
  weft::ThreadPool pool(workers(1));  // one worker: the sources run in order, b first
  weft::TaskGraph g;
  std::atomic<long> clock{0};
  std::stop_source stop;
  Probe a, b, x;
  weft::GraphNode nb = g.emplace([&] {
    b.hit(clock);
    stop.request_stop();  // a, not started yet, is skipped
  });
  weft::GraphNode na = g.emplace([&] { a.hit(clock); });
  weft::GraphNode nx = g.emplace([&] { x.hit(clock); });
  nx.succeed(na, nb);
  EXPECT_THROW(g.run(pool, stop.get_token()).get(), weft::cancelled);
  EXPECT_EQ(a.runs.load(), 0);
  EXPECT_EQ(x.runs.load(), 0);
  g.run_n(pool, 2).get();
  EXPECT_EQ(x.runs.load(), 2);
  EXPECT_LT(a.at.load(), x.at.load()) << "x ran before a, its other predecessor, finished";
}

TEST(TaskGraph, AJoinLeftPartWayByAConditionWaitsForEveryPredecessorOnTheNextRun) {
  weft::ThreadPool pool(workers(2));
  weft::TaskGraph g;
  std::atomic<int> taken{0}, not_taken{0}, joined{0};
  weft::GraphNode pick = g.emplace_condition([] { return 0; });
  weft::GraphNode yes = g.emplace([&] { taken.fetch_add(1); });
  weft::GraphNode no = g.emplace([&] { not_taken.fetch_add(1); });
  pick.precede(yes, no);
  g.emplace([&] { joined.fetch_add(1); }).succeed(yes, no);
  g.run_n(pool, 5).get();
  EXPECT_EQ(taken.load(), 5);
  EXPECT_EQ(not_taken.load(), 0);
  EXPECT_EQ(joined.load(), 0) << "the join ran with one of its two predecessors never run";
}

TEST(TaskGraph, AStopSkipsTheNodesNotStartedAndTheRunIsCancelled) {
  weft::test::Watchdog dog("graph stop");
  weft::ThreadPool pool(workers(1));
  weft::TaskGraph g;
  std::stop_source src;
  std::atomic<int> after{0};
  weft::GraphNode a = g.emplace([&] { src.request_stop(); });
  a.precede(g.emplace([&] { after.fetch_add(1); }));
  EXPECT_THROW(g.run(pool, src.get_token()).get(), weft::cancelled);
  EXPECT_EQ(after.load(), 0);
  g.run(pool).get();
  EXPECT_EQ(after.load(), 1);
}

TEST(TaskGraph, RunsQueueInCallOrderAndNeverOverlap) {
  weft::test::Watchdog dog("graph run queue");
  weft::ThreadPool pool(workers(2));
  weft::TaskGraph g;
  std::atomic<int> inside{0}, most{0}, total{0};
  const auto node = [&] {
    const int now = inside.fetch_add(1) + 1;
    int m = most.load();
    while (now > m && !most.compare_exchange_weak(m, now)) {
    }
    std::this_thread::sleep_for(50us);
    total.fetch_add(1);
    inside.fetch_sub(1);
  };
  // Two parallel nodes per run: at most 2 inside at once, unless runs overlap.
  g.emplace(node);
  g.emplace(node);
  std::vector<weft::Future<void>> runs;
  for (int i = 0; i < 20; ++i) runs.push_back(g.run(pool));
  runs.back().wait();
  for (auto& f : runs) EXPECT_TRUE(f.ready()) << "a later run ended before an earlier one";
  for (auto& f : runs) f.get();
  EXPECT_LE(most.load(), 2);
  EXPECT_EQ(total.load(), 40);
}

TEST(TaskGraph, AGraphNodeRunsItsGraphOncePerRun) {
  weft::ThreadPool pool(workers(2));
  weft::TaskGraph inner("inner"), outer("outer");
  std::atomic<int> in{0}, before{0}, after{0};
  inner.emplace([&] { in.fetch_add(1); }).precede(inner.emplace([&] { in.fetch_add(1); }));
  weft::GraphNode b = outer.emplace([&] { before.fetch_add(1); });
  weft::GraphNode sub = outer.emplace_graph(inner).name("sub");
  weft::GraphNode a = outer.emplace([&] {
    EXPECT_EQ(in.load() % 2, 0) << "after the inner run, not during it";
    after.fetch_add(1);
  });
  b.precede(sub);
  sub.precede(a);
  outer.run_n(pool, 5).get();
  EXPECT_EQ(in.load(), 10);
  EXPECT_EQ(before.load(), 5);
  EXPECT_EQ(after.load(), 5);
}

TEST(TaskGraph, ANodeMayForkOnAOneWorkerPool) {
  weft::test::Watchdog dog("graph node forks");
  weft::ThreadPool pool(workers(1));
  weft::TaskGraph g;
  std::atomic<long> sum{0};
  weft::GraphNode a = g.emplace([&] {
    weft::TaskGroup tg(pool);
    for (int i = 0; i < 100; ++i) tg.run([&] { sum.fetch_add(1); });
    tg.wait();
  });
  weft::GraphNode b = g.emplace([&] { weft::parallel_for(pool, 0, 1000, [&](int) { sum.fetch_add(1); }); });
  a.precede(b);
  g.run(pool).get();
  EXPECT_EQ(sum.load(), 1100);
}

TEST(TaskGraph, FormsWithoutAPoolRunOnTheDefaultPool) {
  weft::TaskGraph g;
  std::atomic<int> n{0};
  g.emplace([&] { n.fetch_add(1); });
  g.run().get();
  g.run_n(3).get();
  EXPECT_EQ(n.load(), 4);
}

TEST(TaskGraph, EmptyGraphsAndZeroRunsAreReadyAtOnce) {
  weft::ThreadPool pool(workers(1));
  weft::TaskGraph empty;
  EXPECT_NO_THROW(empty.run(pool).get());
  weft::TaskGraph g;
  std::atomic<int> n{0};
  g.emplace([&] { n.fetch_add(1); });
  EXPECT_NO_THROW(g.run_n(pool, 0).get());
  EXPECT_EQ(n.load(), 0);
}

TEST(TaskGraph, DestroyingItWaitsForItsQueuedRuns) {
  weft::test::Watchdog dog("graph destructor");
  weft::ThreadPool pool(workers(2));
  std::atomic<int> n{0};
  {
    weft::TaskGraph g;
    g.emplace([&] {
      std::this_thread::sleep_for(1ms);
      n.fetch_add(1);
    });
    for (int i = 0; i < 5; ++i) (void)g.run(pool);  // futures dropped
  }
  EXPECT_EQ(n.load(), 5);
}

TEST(TaskGraph, NamedNodesAreTasksOfTheirOwnInATrace) {
  weft::PoolOptions o = workers(2);
  o.trace_capacity = 1024;
  weft::ThreadPool pool(o);
  weft::TaskGraph g;
  weft::GraphNode a = g.emplace([] {}).name("load \"frame\"");
  weft::GraphNode b = g.emplace([] {});  // unnamed: inside its pool task, no event of its own
  weft::GraphNode c = g.emplace([] {}).name("draw");
  a.precede(b);
  b.precede(c);
  g.run_n(pool, 3).get();
  pool.wait_idle();
  std::map<std::string, int> starts;
  int unlabelled = 0;
  for (const weft::WorkerTrace& w : pool.trace().workers)
    for (const weft::TraceEvent& e : w.events)
      if (e.kind == weft::TraceKind::task_start) {
        if (e.peer < 0) {
          ++unlabelled;
        } else {
          ++starts[weft::trace_label(e.peer)];
        }
      }
  EXPECT_EQ(starts["load \"frame\""], 3);
  EXPECT_EQ(starts["draw"], 3);
  EXPECT_EQ(starts.size(), 2u);
  EXPECT_GE(unlabelled, 3) << "the pool's own task events are still there";
  EXPECT_EQ(weft::trace_label(-1), "");
  std::ostringstream json;
  weft::write_chrome_trace(json, {pool.trace()});
  EXPECT_NE(json.str().find(R"("name":"load \"frame\"")"), std::string::npos) << json.str().substr(0, 2000);
  EXPECT_NE(json.str().find(R"("name":"draw")"), std::string::npos);
}

TEST(TaskGraph, DestroyedOnTheOnlyWorkerItRunsTheRunsItWaitsFor) {
  weft::test::Watchdog dog("graph destructor on a worker");
  weft::ThreadPool pool(workers(1));
  std::atomic<int> n{0};
  pool.submit([&] {
        weft::TaskGraph g;
        g.emplace([&] { n.fetch_add(1); });
        for (int i = 0; i < 3; ++i) (void)g.run(pool);  // queued in this worker's own deque
      })
      .get();
  EXPECT_EQ(n.load(), 3);
}

TEST(TaskGraph, ARunOfNothingQueuedBehindARunEndsAfterIt) {
  weft::test::Watchdog dog("graph empty run in order");
  weft::ThreadPool pool(workers(1));
  weft::TaskGraph g;
  weft::Event go;
  g.emplace([&] { go.wait(); });
  weft::Future<void> first = g.run(pool);
  weft::Future<void> nothing = g.run_n(pool, 0);
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(nothing.ready()) << "it completed before the run queued ahead of it";
  go.set();
  nothing.get();
  EXPECT_TRUE(first.ready());
  first.get();
}

TEST(TaskGraph, EveryNodeCountsAsATaskInStats) {
  // A chain runs each node's successor in the node's own pool task; stats()
  // still counts one task per node.
  weft::ThreadPool pool(weft::test::workers(1));
  weft::TaskGraph g;
  std::atomic<int> ran{0};
  weft::GraphNode prev = g.emplace([&] { ran.fetch_add(1); });
  for (int i = 1; i < 500; ++i) {
    weft::GraphNode n = g.emplace([&] { ran.fetch_add(1); });
    prev.precede(n);
    prev = n;
  }
  pool.wait_idle();
  const std::uint64_t before = pool.stats().total.tasks_run;
  g.run_n(pool, 3).get();
  pool.wait_idle();
  EXPECT_EQ(ran.load(), 1500);
  EXPECT_GE(pool.stats().total.tasks_run - before, 1500U);

  // Independent nodes: several sources run inside one range task.
  weft::TaskGraph wide;
  for (int i = 0; i < 400; ++i) wide.emplace([&] { ran.fetch_add(1); });
  pool.wait_idle();
  const std::uint64_t before_wide = pool.stats().total.tasks_run;
  wide.run_n(pool, 2).get();
  pool.wait_idle();
  EXPECT_EQ(ran.load(), 1500 + 800);
  EXPECT_GE(pool.stats().total.tasks_run - before_wide, 800U);

  // A binary tree: each node pushes its second child, which the task that
  // pushed it takes back and runs itself (one worker: no thief). Each node
  // is still counted once: not zero times, and not once as a taken-back
  // task and again as a node run inside a task.
  weft::TaskGraph tree;
  std::vector<weft::GraphNode> nodes{tree.emplace([&] { ran.fetch_add(1); })};
  for (std::size_t i = 1; i < 511; ++i) {
    nodes.push_back(tree.emplace([&] { ran.fetch_add(1); }));
    nodes[(i - 1) / 2].precede(nodes[i]);
  }
  pool.wait_idle();
  const std::uint64_t before_tree = pool.stats().total.tasks_run;
  tree.run_n(pool, 2).get();
  pool.wait_idle();
  EXPECT_EQ(ran.load(), 1500 + 800 + 1022);
  const std::uint64_t counted = pool.stats().total.tasks_run - before_tree;
  EXPECT_GE(counted, 1022U);
  EXPECT_LE(counted, 1022U + 2 * 4) << "a few tasks per run besides the nodes (its start, its future)";
}

TEST(TaskGraph, DumpWritesDotWithTheNames) {
  weft::TaskGraph inner("inner");
  weft::TaskGraph g("frame \"1\"");
  weft::GraphNode load = g.emplace([] {}).name("load");
  weft::GraphNode work = g.emplace([] {});
  weft::GraphNode again = g.emplace_condition([] { return 0; }).name("again");
  weft::GraphNode sub = g.emplace_graph(inner).name("physics");
  load.precede(work);
  work.precede(again);
  again.precede(load, sub);
  std::ostringstream os;
  g.dump(os);
  EXPECT_EQ(os.str(),
            "digraph \"frame \\\"1\\\"\" {\n"
            "  n0 [label=\"load\"];\n"
            "  n1 [label=\"#1\"];\n"
            "  n2 [label=\"again\", shape=diamond];\n"
            "  n3 [label=\"physics [inner]\", shape=box3d];\n"
            "  n0 -> n1;\n"
            "  n1 -> n2;\n"
            "  n2 -> n0 [style=dashed, label=\"0\"];\n"
            "  n2 -> n3 [style=dashed, label=\"1\"];\n"
            "}\n");
}

}  // namespace
