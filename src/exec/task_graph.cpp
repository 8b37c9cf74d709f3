// TaskGraph: nodes laid out at build time, a per-run join counter per node,
// one pending count per run, and a FIFO queue of runs per graph
// (weft/exec/task_graph.hpp has the contract; tests/model/task_graph.pml
// checks the protocol).
//
// A run ("repetition") of the graph at the front of the queue:
//   start:    every join = its node's strong predecessors (nodes with one
//             have no counter: their predecessor readies them directly),
//             unless the last repetition left them so (counters_ready);
//             pending = the number of sources; push the root of the sources'
//             range tree.
//   a task:   a range pushes its right half and goes on with its left until
//             it is a leaf, then runs a chain per source; a node task runs
//             its node's chain. A chain: unless the run failed or was
//             stopped, run the node, then ready each successor whose join
//             it brings to 0 (or that it alone precedes, or that a condition
//             picked): the first runs next on this thread and takes over the
//             node's count in pending; each other one is paid for from the
//             task's `credit` or by pending + 1, then pushed. A node with no
//             successor run next leaves its count as credit + 1. A node sets
//             its own join back as it starts. After its chains the task takes
//             back the nodes it pushed that are still at its deque's bottom
//             and runs their chains on the same credit; it ends with pending
//             - credit.
//   pending reaches 0: nothing of the run is queued or running, and no
//             thread holds a count. The thread that brought it there starts
//             the next repetition, or pops the request, completes its future
//             and starts the next request.
// pending = the counted nodes queued or running + the credit threads hold,
// and a node is counted before it is pushed: it cannot reach 0 while any
// node of the run may still run.
#include "weft/exec/task_graph.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "pool_core.hpp"
#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/exec/cancelled.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {
namespace detail {

enum class GraphNodeKind : std::uint8_t { work, condition, graph };

struct GraphNodeData;

// A node's successors: the first two inside the node (most nodes of most
// graphs have at most two: no allocation when building, no pointer chase
// when running), all of them in a vector once there are more.
class Successors {
 public:
  void push_back(GraphNodeData* n) {
    if (size_ < kInline) {
      inline_[size_++] = n;
      return;
    }
    if (size_ == kInline) more_.assign(inline_, inline_ + kInline);
    more_.push_back(n);
    ++size_;
  }
  std::size_t size() const noexcept { return size_; }
  GraphNodeData* const* begin() const noexcept { return size_ <= kInline ? inline_ : more_.data(); }
  GraphNodeData* const* end() const noexcept { return begin() + size_; }
  GraphNodeData* operator[](std::size_t i) const noexcept { return begin()[i]; }

 private:
  static constexpr std::uint32_t kInline = 2;
  GraphNodeData* inline_[kInline] = {};
  std::uint32_t size_ = 0;
  std::vector<GraphNodeData*> more_;  // all of them, once there are more than kInline
};

// What a run touches first (the task header, the callable, the successors,
// the counters), the rest after: a run walks every node, so two cache
// lines a node instead of three shows at tens of thousands of nodes.
struct GraphNodeData : TaskNode {
  GraphState* graph = nullptr;
  std::function<void()> work;
  Successors succ;
  // Laid out by freeze(): predecessors that are not condition nodes.
  std::uint32_t strong_preds = 0;
  // The run's count of predecessors still to finish (when more than one).
  std::atomic<std::uint32_t> join{0};
  GraphNodeKind kind = GraphNodeKind::work;
  std::int32_t label = -1;  // the name's trace label (freeze()), -1 unnamed
  // Cold.
  std::function<int()> condition;
  GraphState* sub = nullptr;  // a graph node's graph
  std::size_t index = 0;
  std::string name;
};

namespace {

// The future of a run: a future task kept blocked (ThenTask's state: no
// waiter can claim it) until the run ends, then run in place with the run's
// outcome, which it rethrows (or returns).
struct RunFn {
  std::exception_ptr outcome;
  void operator()() const {
    if (outcome) std::rethrow_exception(outcome);
  }
};
using RunTask = ThenTask<void, RunFn>;

// Completes a run's future on this thread with `outcome`: RunFn only
// rethrows it, so it runs here rather than as a task a refusing pool could
// cancel (which would turn the run's own error into weft::cancelled). The
// claim makes the callable ours alone to write; a future its holder
// cancelled first is only released.
void complete(RunTask* t, std::exception_ptr outcome) noexcept {
  if (t->claim_blocked()) {
    t->fn.outcome = std::move(outcome);
    t->run_claimed();
  }
  t->release();  // the reference the run queue held
}

// Why a task of a run never ran: the pool's push refused it.
std::exception_ptr refused(const std::string& who, const std::string& what) {
  return std::make_exception_ptr(
      std::runtime_error(who + ": " + what + " could not be queued (the pool refused it: shut down, or out of memory)"));
}

// "<c><i>", built by appending (GCC 12 warns falsely, -Wrestrict, on a
// literal + std::string).
std::string tagged(char c, std::size_t i) {
  std::string s(1, c);
  s += std::to_string(i);
  return s;
}

// How messages name a node: 'its name', or #index.
std::string describe(const GraphNodeData& n) {
  if (n.name.empty()) return tagged('#', n.index);
  std::string s(1, '\'');
  s += n.name;
  s += '\'';
  return s;
}

}  // namespace

struct GraphState {
  struct Request {
    PoolCore* pool;
    std::stop_token stop;
    std::size_t reps;
    RunTask* done;  // its future's task
  };

  explicit GraphState(std::string n) : name(std::move(n)) {
    starter.graph = this;
    starter.execute = [](TaskNode* t) noexcept { static_cast<Starter*>(t)->graph->start_front(); };
    starter.discard = [](TaskNode* t) noexcept { static_cast<Starter*>(t)->graph->refused_start(); };
  }

  std::string name;
  std::deque<GraphNodeData> nodes;  // stable addresses, allocated in blocks
  std::vector<GraphNodeData*> sources;  // laid out by freeze()
  // The sources as a binary tree of ranges, laid out by freeze(): a run
  // pushes the root; a range pushes its right half and goes on with its
  // left until it holds at most kSourceGrain sources, which it runs in
  // place. Thieves take the big halves; no source is pushed on its own.
  struct SourceRange : TaskNode {
    GraphState* graph = nullptr;
    std::uint32_t lo = 0, hi = 0;
    std::int32_t left = -1, right = -1;  // indices into `ranges`; -1: a leaf
  };
  static constexpr std::uint32_t kSourceGrain = 16;
  std::vector<SourceRange> ranges;
  bool frozen = false;
  bool has_conditions = false;  // laid out by freeze()
  // Every node's join counter holds its strong_preds, so start_repetition()
  // need not walk the nodes to reset them. True after a repetition in which
  // every node ran (a node resets its own counter as it starts): one that
  // neither failed nor was stopped, of a graph without condition nodes (a
  // condition leaves the branches it did not pick with counters part-way
  // down). Written by freeze() (a builder, no run queued) and by the thread
  // that finishes a repetition, read by the one that starts the next:
  // pending's last acq_rel decrement, and `mu` between two requests, order
  // them.
  bool counters_ready = false;

  std::mutex mu;  // the queue
  // kBusy: a run is queued or running (the builders' check; the destructor
  // waits for it to clear); set when the queue becomes non-empty, cleared
  // when it drains, both under `mu`. kWaiter: the destructor may sleep on
  // the word (block_on's protocol).
  static constexpr std::uint32_t kBusy = 1, kWaiter = 2;
  std::atomic<std::uint32_t> busy{0};
  static bool idle(std::uint32_t word) noexcept { return (word & kBusy) == 0; }
  std::deque<Request> queue;  // the front one is running
  Request* current = nullptr;  // the front, for the thread running it (taken under `mu`)

  // The running repetition's state: written by the thread that starts it
  // before it pushes the sources (the push publishes it to every node).
  PoolCore* pool = nullptr;
  std::stop_token stop;
  std::atomic<std::size_t> pending{0};
  std::atomic<bool> failed{false};
  std::atomic<bool> skipped{false};
  std::exception_ptr error;  // written once, by the node that set `failed`
  // Starts the front request on a worker (enqueue from an outside thread).
  struct Starter : TaskNode {
    GraphState* graph = nullptr;
  } starter;


  std::string who() const { return "weft::TaskGraph" + (name.empty() ? std::string() : " '" + name + "'"); }

  // The builders take no lock: building is single-threaded like filling a
  // container, and a run is refused only while it is queued or running.
  // acquire: pairs with the release that cleared `busy` before the run's
  // future completed, so a builder after get() sees it clear; a node of the
  // run, or the thread that called run(), sees it set (set before the push).
  void check_unchanged_by_runs(const char* what) const {
    if (!idle(busy.load(std::memory_order_acquire)))
      throw std::logic_error(who() + ": " + what + " while a run of the graph is queued or running");
  }

  void freeze();
  Future<void> enqueue(PoolCore& p, std::stop_token s, std::size_t reps);
  void start_front();
  // Pops the front request and completes its future with `outcome`;
  // returns whether another request is queued (then the caller starts it).
  bool complete_front(std::exception_ptr outcome) noexcept;
  void refused_start() noexcept;
  void start_repetition();
  void finish_repetition();
  // Before a repetition starts (no node of it can run yet). relaxed: the
  // push that starts the repetition publishes these to its nodes.
  void reset_outcome() noexcept {
    failed.store(false, std::memory_order_relaxed);
    skipped.store(false, std::memory_order_relaxed);
    error = nullptr;
  }
  void fail(std::exception_ptr e) noexcept {
    // acq_rel: the winner alone writes `error`; finish_repetition() reads it
    // after pending's last decrement, which every writer's decrement precedes.
    if (!failed.exchange(true, std::memory_order_acq_rel)) error = std::move(e);
  }
  void schedule(TaskNode* n) noexcept;  // on the running request's pool
  static void push_to(PoolCore& p, TaskNode* n) noexcept;
  static void execute(TaskNode* t) noexcept;
  static void discard(TaskNode* t) noexcept;
  static void execute_range(TaskNode* t) noexcept;
  static void discard_range(TaskNode* t) noexcept;
  void lay_out_ranges();
  struct TaskBooks;
  void run_chain(GraphNodeData* n, TaskBooks& books) noexcept;
  void run_own_pushed(Worker& w, TaskBooks& books) noexcept;
  void end_task(TaskBooks& books) noexcept;
  GraphNodeData* run_node(GraphNodeData& n, TaskBooks& books);
  // Hands back `credit` counts of pending (nodes this thread finished).
  void release(std::size_t credit) noexcept {
    // acq_rel: release publishes the finished nodes' writes (and `error`)
    // to the thread that ends the run; acquire, for that thread, takes all.
    if (credit != 0 && pending.fetch_sub(credit, std::memory_order_acq_rel) == credit) finish_repetition();
  }
};

namespace {

// Whether `to` can be reached from `from` along any edges.
bool reaches(const GraphNodeData* from, const GraphNodeData* to, std::vector<char>& seen) {
  std::fill(seen.begin(), seen.end(), 0);
  std::vector<const GraphNodeData*> stack{from};
  while (!stack.empty()) {
    const GraphNodeData* n = stack.back();
    stack.pop_back();
    for (const GraphNodeData* s : n->succ) {
      if (s == to) return true;
      if (!seen[s->index]) {
        seen[s->index] = 1;
        stack.push_back(s);
      }
    }
  }
  return false;
}

// A cycle among the strong edges (those out of non-condition nodes), as
// "'a' -> 'b' -> 'a'", or empty.
std::string strong_cycle(const std::deque<GraphNodeData>& nodes) {
  // 0: unvisited, 1: on the path, 2: done.
  std::vector<char> mark(nodes.size(), 0);
  std::vector<const GraphNodeData*> path;
  std::vector<std::size_t> next;  // per path entry: the successor to try next
  for (const GraphNodeData& root : nodes) {
    if (mark[root.index] != 0) continue;
    path.assign(1, &root);
    next.assign(1, 0);
    mark[root.index] = 1;
    while (!path.empty()) {
      const GraphNodeData* n = path.back();
      const bool strong = n->kind != GraphNodeKind::condition;
      if (!strong || next.back() == n->succ.size()) {
        mark[n->index] = 2;
        path.pop_back();
        next.pop_back();
        continue;
      }
      const GraphNodeData* s = n->succ[next.back()++];
      if (mark[s->index] == 1) {
        std::string out;
        const auto from = std::find(path.begin(), path.end(), s);
        for (auto it = from; it != path.end(); ++it) out += describe(**it) + " -> ";
        return out + describe(*s);
      }
      if (mark[s->index] == 0) {
        mark[s->index] = 1;
        path.push_back(s);
        next.push_back(0);
      }
    }
  }
  return {};
}

// Whether `g` runs `target` through its graph nodes, at any depth.
bool contains(const GraphState& g, const GraphState* target, std::vector<const GraphState*>& seen) {
  for (const GraphNodeData& n : g.nodes) {
    if (n.kind != GraphNodeKind::graph) continue;
    const GraphState* s = n.sub;
    if (s == target) return true;
    if (std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
    seen.push_back(s);
    if (contains(*s, target, seen)) return true;
  }
  return false;
}

}  // namespace

// Under `mu`, with no run queued: checks the graph and lays out the join
// counts and the sources.
void GraphState::freeze() {
  if (frozen) return;
  if (const std::string cycle = strong_cycle(nodes); !cycle.empty())
    throw std::invalid_argument(who() + ": the cycle " + cycle +
                                " has no condition node on it, so none of its nodes could ever start");
  std::vector<const GraphState*> seen;
  if (contains(*this, this, seen)) throw std::invalid_argument(who() + ": contains itself (through emplace_graph)");
  sources.clear();
  // Predecessor counts, and the condition nodes before each node.
  std::vector<std::vector<const GraphNodeData*>> weak(nodes.size());
  has_conditions = false;
  for (GraphNodeData& n : nodes) {
    n.strong_preds = 0;
    n.label = n.name.empty() ? -1 : intern_trace_label(n.name);
    has_conditions = has_conditions || n.kind == GraphNodeKind::condition;
  }
  for (const GraphNodeData& n : nodes) {
    for (GraphNodeData* s : n.succ) {
      if (n.kind == GraphNodeKind::condition) {
        weak[s->index].push_back(&n);
      } else {
        ++s->strong_preds;
      }
    }
  }
  std::vector<char> scratch(nodes.size(), 0);
  for (GraphNodeData& n : nodes) {
    if (n.strong_preds != 0) continue;
    // No predecessor, or only conditions: a source if every one of those
    // conditions is downstream of it (it heads their loop).
    const auto& conds = weak[n.index];
    const bool heads_its_loops = std::all_of(conds.begin(), conds.end(),
                                             [&](const GraphNodeData* c) { return reaches(&n, c, scratch); });
    if (heads_its_loops) sources.push_back(&n);
  }
  if (sources.empty() && !nodes.empty())
    throw std::invalid_argument(who() + ": no node can start (every node waits for a condition node)");
  lay_out_ranges();
  counters_ready = false;
  frozen = true;
}

void GraphState::lay_out_ranges() {
  ranges.clear();
  if (sources.empty()) return;
  ranges.reserve(2 * (sources.size() / kSourceGrain + 1));
  // Breadth-first: ranges[k]'s children are appended after it.
  ranges.emplace_back();
  ranges[0].hi = static_cast<std::uint32_t>(sources.size());
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    SourceRange& r = ranges[k];
    r.graph = this;
    r.execute = &execute_range;
    r.discard = &discard_range;
    if (r.hi - r.lo <= kSourceGrain) continue;
    const std::uint32_t mid = r.lo + (r.hi - r.lo) / 2;
    const std::uint32_t lo = r.lo, hi = r.hi;
    r.left = static_cast<std::int32_t>(ranges.size());
    r.right = r.left + 1;
    ranges.emplace_back().lo = lo;  // may reallocate: `r` is not used below
    ranges.back().hi = mid;
    ranges.emplace_back().lo = mid;
    ranges.back().hi = hi;
  }
}

Future<void> GraphState::enqueue(PoolCore& p, std::stop_token s, std::size_t reps) {
  bool start = false;
  RunTask* task = nullptr;
  Future<void> f;
  {
    std::lock_guard lock(mu);
    if (queue.empty()) freeze();  // otherwise frozen by the runs queued
    task = new_task<RunTask>(RunFn{}, &p);
    f = FutureLink::adopt<void>(task);
    if (queue.empty() && (reps == 0 || sources.empty())) {
      // Nothing to run and nothing before it: the future is ready as soon
      // as the pool runs it. (Behind other runs it queues, to keep order.)
    } else {
      try {
        queue.push_back({&p, std::move(s), reps, task});
      } catch (...) {
        complete(task, nullptr);  // the future no one will see: frees the task
        throw;
      }
      start = queue.size() == 1;
      // relaxed: the lock's release and the pushes that start the run
      // publish it; the builders' acquire pairs with the clearing below.
      if (start) busy.store(kBusy, std::memory_order_relaxed);
      task = nullptr;
    }
  }
  if (task != nullptr) complete(task, nullptr);
  if (start) {
    if (this_worker().pool == &p) {
      start_front();
    } else {
      // From outside the pool: a worker pushes the sources, into its own
      // deque (an outside thread would pay an injection push for each).
      push_to(p, &starter);
    }
  }
  return f;
}

void GraphState::start_front() {
  for (;;) {
    // The front request is ours until we pop it: references into a deque
    // stay valid while others push at the back.
    {
      std::lock_guard lock(mu);
      current = &queue.front();
    }
    if (current->reps != 0 && !sources.empty()) {
      pool = current->pool;
      stop = current->stop;
      start_repetition();
      return;
    }
    // Nothing to run (run_n(0), or an empty graph), queued behind others.
    if (!complete_front(nullptr)) return;
  }
}

bool GraphState::complete_front(std::exception_ptr outcome) noexcept {
  RunTask* done = current->done;
  bool more = false;
  std::uint32_t was = 0;
  {
    std::lock_guard lock(mu);
    queue.pop_front();
    current = nullptr;
    more = !queue.empty();
    // release: a builder or the destructor that sees it clear (the
    // destructor through block_on's acquire) sees every node of the run
    // finished. An exchange: block_on's waiter bit must be read by an RMW.
    if (!more) was = busy.exchange(0, std::memory_order_release);
  }
  // Unless `more`, the graph may be destroyed from here on (the destructor
  // takes `mu` once after the word clears, so the unlock above is done): the
  // wake passes the word's address to the kernel and touches nothing.
  if (was & kWaiter) futex_wake(busy, kWakeAll);
  complete(done, std::move(outcome));
  return more;
}

// The pool refused the starter (shut down): the front request fails, and
// so, one after another, do the ones queued behind it.
void GraphState::refused_start() noexcept {
  {
    std::lock_guard lock(mu);
    current = &queue.front();
  }
  pool = current->pool;  // as start_front would have
  reset_outcome();
  fail(refused(who(), "the run"));
  current->reps = 1;
  finish_repetition();
}

void GraphState::start_repetition() {
  // relaxed: the pushes below publish these writes to every node of the run,
  // and the previous run's nodes have all finished (pending reached 0).
  if (!counters_ready)
    for (GraphNodeData& n : nodes)
      if (n.strong_preds > 1) n.join.store(n.strong_preds, std::memory_order_relaxed);
  reset_outcome();
  // relaxed: set before any source is pushed (the push publishes it); set to
  // the whole count first so a source that finishes at once cannot end the run.
  pending.store(sources.size(), std::memory_order_relaxed);
  schedule(&ranges[0]);  // pushed, not run here: finish_repetition() calls this from inside a run
}

void GraphState::schedule(TaskNode* n) noexcept { push_to(*pool, n); }

void GraphState::push_to(PoolCore& p, TaskNode* n) noexcept {
  // Every failure of PoolCore::push() (a pool shut down, no injection deque
  // or no room in one) has called n->discard() already: the discard
  // handlers fail the run and hand its count back.
  try {
    p.push(n);
  } catch (...) {
  }
}

void GraphState::discard(TaskNode* t) noexcept {
  auto* n = static_cast<GraphNodeData*>(t);
  GraphState& g = *n->graph;
  g.fail(refused(g.who(), "node " + describe(*n)));
  g.release(1);
}

void GraphState::discard_range(TaskNode* t) noexcept {
  auto* r = static_cast<SourceRange*>(t);
  GraphState& g = *r->graph;
  g.fail(refused(g.who(), "the run"));
  g.release(r->hi - r->lo);  // the range's sources, none of which will run
}

// What one pool task of a graph keeps while it runs: the counts of pending
// it holds (`credit`: nodes it finished and has not handed back), the nodes
// it pushed, newest last (the last kRemembered of them), to take back the
// ones no thief took, and for stats() the nodes it ran and the pool tasks
// they came in (itself and those it took back). `ctx`: the running
// thread's worker context, looked up once per task, not once per chain.
struct GraphState::TaskBooks {
  WorkerContext& ctx = this_worker();
  std::size_t credit = 0;
  std::size_t ran = 0, tasks = 1;
  static constexpr std::size_t kRemembered = 16;
  TaskNode* pushed[kRemembered];
  std::size_t head = 0, count = 0;
  void remember(TaskNode* t) noexcept {
    head = (head + 1) % kRemembered;
    pushed[head] = t;
    if (count < kRemembered) ++count;
  }
  TaskNode* take_newest() noexcept {
    if (count == 0) return nullptr;
    TaskNode* t = pushed[head];
    head = (head + kRemembered - 1) % kRemembered;
    --count;
    return t;
  }
};

void GraphState::execute_range(TaskNode* t) noexcept {
  auto* r = static_cast<SourceRange*>(t);
  GraphState& g = *r->graph;
  while (r->left >= 0) {
    g.schedule(&g.ranges[static_cast<std::size_t>(r->right)]);
    r = &g.ranges[static_cast<std::size_t>(r->left)];
  }
  TaskBooks books;
  for (std::uint32_t i = r->lo; i < r->hi; ++i) g.run_chain(g.sources[i], books);
  g.end_task(books);
}

// Runs `n`; returns the successor to run next on this thread, if any (it
// takes over n's count in pending); pushes the other ready ones, each paid
// for with a count from `credit` (nodes this thread finished and has not
// handed back) or a new one.
GraphNodeData* GraphState::run_node(GraphNodeData& n, TaskBooks& books) {
  GraphNodeData* next = nullptr;
  const auto ready = [&](GraphNodeData* s) {
    if (next == nullptr) {
      next = s;
      return;
    }
    if (books.credit != 0) {
      --books.credit;  // pending already counts it: no atomic
    } else {
      // relaxed: pending cannot reach 0 before n's own count goes (to
      // `next` or to `credit`, handed back later), after this increment.
      pending.fetch_add(1, std::memory_order_relaxed);
    }
    schedule(s);
    books.remember(s);
  };
  switch (n.kind) {
    case GraphNodeKind::condition: {
      const int k = n.condition();
      if (k < 0 || static_cast<std::size_t>(k) >= n.succ.size())
        throw std::out_of_range(who() + ": condition node " + describe(n) + " returned " + std::to_string(k) +
                                "; it has " + std::to_string(n.succ.size()) + " successor(s)");
      ready(n.succ[static_cast<std::size_t>(k)]);
      return next;
    }
    case GraphNodeKind::graph:
      n.sub->enqueue(*pool, stop, 1).get();
      break;
    case GraphNodeKind::work:
      n.work();
      break;
  }
  for (GraphNodeData* s : n.succ) {
    // A successor with this node as its one strong predecessor is ready
    // now: no counter to touch (the push, or this thread, orders the rest).
    // acq_rel: release publishes this node's writes to the successor's
    // thread; acquire, for the last predecessor, takes the others' too.
    if (s->strong_preds == 1 || s->join.fetch_sub(1, std::memory_order_acq_rel) == 1) ready(s);
  }
  return next;
}

void GraphState::execute(TaskNode* t) noexcept {
  auto* n = static_cast<GraphNodeData*>(t);
  GraphState& g = *n->graph;
  TaskBooks books;
  g.run_chain(n, books);
  g.end_task(books);
}

// After its own chains, a task takes back the nodes it pushed that no thief
// took and that nothing was pushed above since (its deque's bottom, newest
// first), and runs their chains too, with the same credit: one release at
// the end of the task instead of one per node task (pending's line is
// shared by every worker), and no trip through the pool per node. A node's
// count in pending was paid when it was pushed, so running it under this
// task's credit keeps the books (see run_chain); keeping the counts longer
// only delays the end of the run, to this task's release. Only pointers
// are compared: a task a thief took may already be freed.
void GraphState::run_own_pushed(Worker& w, TaskBooks& books) noexcept {
  while (TaskNode* mine = books.take_newest()) {
    // Thieves take the oldest first: if the newest one is not at the bottom,
    // it was taken (and so were the older ones), or a node's body pushed a
    // task of its own above it.
    if (w.source.deque.pop_if([mine](const TaskNode* x) { return x == mine; }) == nullptr) return;
    // Counted before it runs, inside the running task (as a join's taken-back
    // child is): the pool never looks idle meanwhile.
    count_completed(w.completed);
    ++books.tasks;
    run_chain(static_cast<GraphNodeData*>(mine), books);
  }
}

// The end of a pool task of the graph: take back what it can, count the
// nodes the pool did not (stats(): tasks_run counts every node), hand the
// credit back.
void GraphState::end_task(TaskBooks& books) noexcept {
  WorkerContext& c = books.ctx;
  if (c.worker != nullptr && c.pool == pool) {  // else it pushed to an injection deque
    run_own_pushed(*c.worker, books);
    if (books.ran > books.tasks) bump(c.worker->counters.handed_on, books.ran - books.tasks);
  }
  release(books.credit);
}

// Runs `n` and the successors each hands on to this thread. A node that
// hands on none leaves its count in pending to `credit`: pending stays
// above 0 while the caller holds it, and the caller hands it back once
// (release), or spends it on a successor it pushes.
void GraphState::run_chain(GraphNodeData* n, TaskBooks& books) noexcept {
  GraphState& g = *this;
  // A named node is its own task in a trace (nested in the pool's task that
  // ran it, as a chain runs several nodes in one).
  Worker* const worker = books.ctx.worker;
  Worker* const traced = worker != nullptr && worker->trace ? worker : nullptr;
  while (n != nullptr) {
    GraphNodeData* next = nullptr;
    // relaxed: a late skip is harmless (the node runs, as it would have a
    // moment earlier); stop_requested() is the token's own acquire load.
    if (g.failed.load(std::memory_order_relaxed) || g.stop.stop_requested()) {
      g.skipped.store(true, std::memory_order_relaxed);  // read after pending's last acq_rel decrement
    } else {
      // The counter set back for the next round (a loop's) or the next
      // repetition (which skips its walk when every node did this).
      // relaxed: every strong predecessor of this run has finished (that is
      // why it runs); a loop's next round reaches it only through nodes that
      // start after this point, and the next repetition only after pending's
      // acq_rel decrements (this thread's among them) reached 0 and the
      // sources were pushed, which orders this store before its decrements.
      if (n->strong_preds > 1) n->join.store(n->strong_preds, std::memory_order_relaxed);
      ++books.ran;  // for stats() (skipped nodes are not counted)
      const bool labelled = traced != nullptr && n->label >= 0;
      if (labelled) trace_event(*traced, TraceKind::task_start, n->label);
      try {
        next = g.run_node(*n, books);
      } catch (...) {
        g.fail(std::current_exception());
      }
      if (labelled) trace_event(*traced, TraceKind::task_end);
    }
    // The successor run next takes over this node's count in pending: one
    // node finishes and one starts, no atomic needed.
    if (next == nullptr) ++books.credit;
    n = next;
  }
}

void GraphState::finish_repetition() {
  Request& r = *current;  // ours until popped (see start_front)
  // relaxed: this thread's acq_rel decrement of pending to 0 came after
  // every node's writes of these (each before its own decrement).
  const bool failed_now = failed.load(std::memory_order_relaxed);
  const bool skipped_now = skipped.load(std::memory_order_relaxed);
  counters_ready = !failed_now && !skipped_now && !has_conditions;
  if (!failed_now && !skipped_now && --r.reps > 0) {
    start_repetition();
    return;
  }
  if (complete_front(failed_now ? error : skipped_now ? std::make_exception_ptr(cancelled()) : nullptr)) start_front();
}

}  // namespace detail

// ---- the handles ------------------------------------------------------------

namespace {

detail::GraphNodeData& node_of(detail::GraphNodeData* d, const char* what) {
  if (d == nullptr) throw std::invalid_argument(std::string("weft::GraphNode::") + what + ": the handle refers to no node");
  return *d;
}

// DOT's quoted string.
std::string dot_quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

}  // namespace

GraphNode& GraphNode::name(std::string name) {
  detail::GraphNodeData& d = node_of(d_, "name");
  d.graph->check_unchanged_by_runs("a node renamed");
  d.name = std::move(name);
  d.graph->frozen = false;  // its trace label is taken again
  return *this;
}

const std::string& GraphNode::name() const { return node_of(d_, "name").name; }

void GraphNode::link(std::initializer_list<GraphNode> nodes, bool reversed) {
  const char* what = reversed ? "succeed" : "precede";
  detail::GraphNodeData& self = node_of(d_, what);
  detail::GraphState& g = *self.graph;
  g.check_unchanged_by_runs("an edge added");
  for (const GraphNode& other : nodes) {
    detail::GraphNodeData& o = node_of(other.d_, what);
    if (o.graph != &g)
      throw std::invalid_argument("weft::GraphNode::" + std::string(what) + ": " + detail::describe(self) + " of " +
                                  g.who() + " and " + detail::describe(o) + " of " + o.graph->who() +
                                  " belong to different graphs");
  }
  g.frozen = false;  // first: a push_back that throws leaves the layout to be made again
  for (const GraphNode& other : nodes) {
    detail::GraphNodeData& from = reversed ? *other.d_ : self;
    detail::GraphNodeData& to = reversed ? self : *other.d_;
    from.succ.push_back(&to);
  }
}

TaskGraph::TaskGraph(std::string name) : s_(std::make_unique<detail::GraphState>(std::move(name))) {}

// Waits as the pool's waits do (block_on): on a worker it runs queued tasks
// first (a run this thread started may be queued in its own deque), then
// spins and sleeps on the word.
TaskGraph::~TaskGraph() {
  detail::GraphState& g = *s_;
  detail::block_on(g.busy, &detail::GraphState::idle, detail::GraphState::kWaiter, detail::on_worker_thread());
  // The thread that cleared the word did so holding `mu`: once we hold it,
  // that thread has let go of it.
  const std::lock_guard lock(g.mu);
}

namespace {

detail::GraphNodeData* add(detail::GraphState& g, detail::GraphNodeKind kind, std::function<void()> work,
              std::function<int()> condition, detail::GraphState* sub) {
  g.check_unchanged_by_runs("a node added");
  detail::GraphNodeData& n = g.nodes.emplace_back();
  n.execute = &detail::GraphState::execute;
  n.discard = &detail::GraphState::discard;
  n.graph = &g;
  n.index = g.nodes.size() - 1;
  n.kind = kind;
  n.work = std::move(work);
  n.condition = std::move(condition);
  n.sub = sub;
  g.frozen = false;
  return &n;
}

}  // namespace

GraphNode TaskGraph::add_work(std::function<void()> f) {
  return GraphNode(add(*s_, detail::GraphNodeKind::work, std::move(f), {}, nullptr));
}

GraphNode TaskGraph::add_condition(std::function<int()> f) {
  return GraphNode(add(*s_, detail::GraphNodeKind::condition, {}, std::move(f), nullptr));
}

GraphNode TaskGraph::emplace_graph(TaskGraph& other) {
  if (&other == this) throw std::invalid_argument(s_->who() + ": emplace_graph of the graph itself");
  return GraphNode(add(*s_, detail::GraphNodeKind::graph, {}, {}, other.s_.get()));
}

Future<void> TaskGraph::run(ThreadPool& pool, std::stop_token stop) {
  return s_->enqueue(detail::core_of(pool), std::move(stop), 1);
}

Future<void> TaskGraph::run_n(ThreadPool& pool, std::size_t n, std::stop_token stop) {
  return s_->enqueue(detail::core_of(pool), std::move(stop), n);
}

Future<void> TaskGraph::run(std::stop_token stop) { return run(default_pool(), std::move(stop)); }

Future<void> TaskGraph::run_n(std::size_t n, std::stop_token stop) { return run_n(default_pool(), n, std::move(stop)); }

std::size_t TaskGraph::size() const {
  return s_->nodes.size();
}

const std::string& TaskGraph::name() const noexcept { return s_->name; }

void TaskGraph::dump(std::ostream& os) const {
  const auto id = [](const detail::GraphNodeData& n) { return detail::tagged('n', n.index); };
  os << "digraph " << dot_quoted(s_->name.empty() ? "weft::TaskGraph" : s_->name) << " {\n";
  for (const detail::GraphNodeData& n : s_->nodes) {
    const std::string label = n.name.empty() ? detail::tagged('#', n.index) : n.name;
    os << "  " << id(n) << " [label=";
    switch (n.kind) {
      case detail::GraphNodeKind::work:
        os << dot_quoted(label);
        break;
      case detail::GraphNodeKind::condition:
        os << dot_quoted(label) << ", shape=diamond";
        break;
      case detail::GraphNodeKind::graph:
        os << dot_quoted(label + " [" + (n.sub->name.empty() ? "graph" : n.sub->name) + "]") << ", shape=box3d";
        break;
    }
    os << "];\n";
  }
  for (const detail::GraphNodeData& n : s_->nodes) {
    for (std::size_t i = 0; i < n.succ.size(); ++i) {
      os << "  " << id(n) << " -> " << id(*n.succ[i]);
      if (n.kind == detail::GraphNodeKind::condition) os << " [style=dashed, label=\"" << i << "\"]";
      os << ";\n";
    }
  }
  os << "}\n";
}

}  // namespace weft
