/// @file
/// weft/exec/task_graph.hpp — a dependency graph built once and run many times.
///
///   weft::TaskGraph g;
///   weft::GraphNode load  = g.emplace([] { ... }).name("load");
///   weft::GraphNode left  = g.emplace([] { ... });
///   weft::GraphNode right = g.emplace([] { ... });
///   weft::GraphNode merge = g.emplace([] { ... });
///   load.precede(left, right);         // left and right after load
///   merge.succeed(left, right);        // the same relation, from the other end
///   g.run(pool).get();                 // once
///   g.run_n(pool, 100).get();          // 100 times, one after another
///
/// Running. A node starts when all its predecessors have finished in this
/// run; a node with no predecessors starts with the run. Nodes are ordinary
/// tasks of the pool (stolen, counted in stats()); a node may itself fork
/// (TaskGroup, the algorithms, coroutines, another graph) without deadlock.
/// A run allocates nothing per node: each node's join counter and successor
/// list are laid out when the graph is built, and a run only resets the
/// counters. A node's first ready successor runs on the same thread right
/// after it (no queue round trip), in the same pool task; the others are
/// queued. The sources are queued as a tree of ranges that thieves split.
/// In a trace (weft/exec/trace.hpp) a named node is a task of its own,
/// labelled with its name.
///
/// Waiting: run(pool).get() on one of the pool's workers (or on a thread in
/// its seat, as the blocking algorithms take it) runs the graph's nodes
/// while it waits; on any other thread it sleeps until the run ends, as any
/// Future's get() does.
///
/// Conditions. emplace_condition(f) makes a node whose f returns the index
/// of the one successor that runs next (in the order precede() added them);
/// its edges are weak: they do not count as predecessors of the successor,
/// which is started directly. An index out of range fails the run with
/// std::out_of_range naming the node. Condition edges make loops:
///
///   weft::GraphNode again = g.emplace_condition([&] { return done ? 1 : 0; });
///   merge.precede(again);
///   again.precede(load, finish);       // 0: back to load, 1: on to finish
///
/// A node started by a condition runs at once, whatever its other
/// predecessors are doing: as in Taskflow, do not give a condition's
/// successor strong predecessors that may still be running (it could then
/// run again when they finish).
/// A node whose only predecessors are condition nodes it leads back to (the
/// head of such a loop, like `load`) also starts with the run; a node reached
/// only from a condition node downstream of nothing it leads to (`finish`)
/// waits for that condition. A cycle with no condition node on it would never
/// start: run() refuses it with std::invalid_argument naming its nodes.
///
/// Composition. emplace_graph(other) makes a node that runs `other` once (on
/// the same pool, with the same stop token) and finishes when that run does;
/// `other` must outlive this graph and must not contain this graph.
///
/// Failure and stopping. An exception from a node stops the run: nodes of
/// that run not yet started are skipped, and the run's future rethrows the
/// first exception. A stop requested on the token given to run() skips the
/// nodes not yet started the same way, and the run's future throws
/// weft::cancelled (unless a node threw). Either way the graph can be run
/// again; run_n() ends at the first failed or stopped run.
///
/// Runs of one graph never overlap: run() called while another run is queued
/// or running queues behind it and starts when it ends, in call order.
/// Different graphs run concurrently on one pool. Building a graph is not
/// thread-safe (one thread builds it, as one fills a container); changing
/// it (emplace, precede, succeed, name) while a run of it is queued or
/// running throws std::logic_error naming it; the destructor waits for the
/// graph's queued runs to end (on a worker of a pool, running that pool's
/// tasks meanwhile). The pool must outlive the runs it was given. A node
/// may queue a run of its own graph, but must not wait for it: that run
/// starts only after the one the node belongs to has ended.
/// The run's future is an ordinary Future<void>: cancel() on it drops the
/// notification, not the run (use a stop token to stop a run).
///
/// dump(os) writes the graph in GraphViz DOT, with the nodes' names
/// (condition nodes as diamonds, their edges dashed and numbered).
///
/// The protocol (join counters, the pending count, the run queue) is
/// checked in tests/model/task_graph.pml; docs/guide/graph.md is the guide.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <stop_token>
#include <string>
#include <type_traits>
#include <utility>

#include "weft/exec/future.hpp"

namespace weft {

class ThreadPool;
class TaskGraph;

/// @cond internal
namespace detail {
struct GraphNodeData;
struct GraphState;
}  // namespace detail
/// @endcond

/// A node of a TaskGraph: a small handle, copied freely. A default-built
/// handle refers to no node; using it throws std::invalid_argument.
class GraphNode {
 public:
  /// A handle to no node.
  GraphNode() noexcept = default;

  /// Names the node (for dump() and error messages); returns *this.
  GraphNode& name(std::string name);
  /// The node's name; empty if it has none.
  [[nodiscard]] const std::string& name() const;

  /// Adds edges from this node to each of `nodes` (which run after it);
  /// returns *this. All must belong to the same graph.
  template <class... Nodes>
    requires(std::is_convertible_v<const Nodes&, const GraphNode&> && ...)
  GraphNode& precede(const Nodes&... nodes) {
    link({nodes...}, false);
    return *this;
  }
  /// Adds edges from each of `nodes` to this node (it runs after them);
  /// returns *this.
  template <class... Nodes>
    requires(std::is_convertible_v<const Nodes&, const GraphNode&> && ...)
  GraphNode& succeed(const Nodes&... nodes) {
    link({nodes...}, true);
    return *this;
  }

  /// Whether the handle refers to a node.
  [[nodiscard]] bool valid() const noexcept { return d_ != nullptr; }
  /// Whether two handles refer to the same node.
  friend bool operator==(const GraphNode& a, const GraphNode& b) noexcept { return a.d_ == b.d_; }

 private:
  friend class TaskGraph;
  explicit GraphNode(detail::GraphNodeData* d) noexcept : d_(d) {}
  void link(std::initializer_list<GraphNode> nodes, bool reversed);

  detail::GraphNodeData* d_ = nullptr;
};

/// A dependency graph of tasks, built once and run many times (this file's
/// opening comment has the contract).
class TaskGraph {
 public:
  /// An empty graph; `name` is what dump() and error messages call it.
  explicit TaskGraph(std::string name = {});
  /// Waits for the graph's queued and running runs to end.
  ~TaskGraph();
  TaskGraph(const TaskGraph&) = delete;
  TaskGraph& operator=(const TaskGraph&) = delete;

  /// A node that calls `f()` (its result, if any, is dropped).
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  GraphNode emplace(F&& f) {
    return add_work(std::function<void()>([g = std::forward<F>(f)]() mutable { (void)std::invoke(g); }));
  }
  /// A condition node: `f()` returns the index of the one successor to run next.
  template <class F>
    requires std::is_convertible_v<std::invoke_result_t<std::decay_t<F>&>, int>
  GraphNode emplace_condition(F&& f) {
    return add_condition(
        std::function<int()>([g = std::forward<F>(f)]() mutable { return static_cast<int>(std::invoke(g)); }));
  }
  /// A node that runs `other` once and finishes when that run does.
  /// std::invalid_argument if `other` is this graph.
  GraphNode emplace_graph(TaskGraph& other);

  /// Queues one run on `pool`; its future is ready when the run has ended.
  /// std::invalid_argument if the graph has a cycle without a condition
  /// node, or contains itself through emplace_graph().
  Future<void> run(ThreadPool& pool, std::stop_token stop = {});
  /// Queues `n` runs on `pool`, one after another (stopping at the first
  /// that fails or is stopped), with one future for all.
  Future<void> run_n(ThreadPool& pool, std::size_t n, std::stop_token stop = {});
  /// run() on weft::default_pool().
  Future<void> run(std::stop_token stop = {});
  /// run_n() on weft::default_pool().
  Future<void> run_n(std::size_t n, std::stop_token stop = {});

  /// Writes the graph in GraphViz DOT.
  void dump(std::ostream& os) const;
  /// The number of nodes.
  [[nodiscard]] std::size_t size() const;
  /// What dump() and error messages call the graph.
  [[nodiscard]] const std::string& name() const noexcept;

 private:
  GraphNode add_work(std::function<void()> f);
  GraphNode add_condition(std::function<int()> f);

  std::unique_ptr<detail::GraphState> s_;
};

}  // namespace weft
