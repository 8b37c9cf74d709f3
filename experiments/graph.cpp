#include "weft/xp/graph.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <deque>
#include <memory>
#include <random>
#include <stdexcept>
#include <string_view>

#include "kernels.hpp"
#include "peer_support.hpp"
#include "weft/detail/exec/on_workers.hpp"
#include "weft/exec/task_graph.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

#ifdef WEFT_HAVE_TBB
#include <oneapi/tbb/flow_graph.h>
#endif

namespace weft::xp {

namespace {

// ---- the workloads' graphs ---------------------------------------------------

void edge(GraphShape& g, int from, int to) {
  g.succ[static_cast<std::size_t>(from)].push_back(to);
  g.pred[static_cast<std::size_t>(to)].push_back(from);
}

GraphShape sized(int n) {
  GraphShape g;
  g.succ.resize(static_cast<std::size_t>(n));
  g.pred.resize(static_cast<std::size_t>(n));
  return g;
}

GraphShape chain(int nodes) {
  GraphShape g = sized(nodes);
  for (int i = 0; i + 1 < nodes; ++i) edge(g, i, i + 1);
  return g;
}

// Layers 1, 2, 4, ...: as many whole layers as fit in `nodes` (at least 1).
GraphShape tree(int nodes) {
  int layers = 1;
  while ((2L << layers) - 1 <= nodes) ++layers;
  const int n = static_cast<int>((1L << layers) - 1);
  GraphShape g = sized(n);
  for (int i = 0; 2 * i + 2 < n; ++i) {
    edge(g, i, 2 * i + 1);
    edge(g, i, 2 * i + 2);
  }
  return g;
}

GraphShape wavefront(int nodes) {
  const int s = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(nodes))));
  GraphShape g = sized(s * s);
  for (int i = 0; i < s; ++i) {
    for (int j = 0; j < s; ++j) {
      if (i + 1 < s) edge(g, i * s + j, (i + 1) * s + j);
      if (j + 1 < s) edge(g, i * s + j, i * s + j + 1);
    }
  }
  return g;
}

// 32 levels (fewer for small graphs) of nodes / levels nodes each; each
// node has 1-4 distinct edges to random nodes of the next level.
GraphShape level(int nodes) {
  const int levels = std::max(1, std::min(32, nodes / 4));
  const int width = std::max(1, nodes / levels);
  GraphShape g = sized(levels * width);
  std::mt19937 rng(20261126);
  for (int l = 0; l + 1 < levels; ++l) {
    for (int i = 0; i < width; ++i) {
      const int k = 1 + static_cast<int>(rng() % 4);
      std::vector<int> to;
      for (int e = 0; e < k; ++e) {
        const int t = static_cast<int>(rng() % static_cast<unsigned>(width));
        if (std::find(to.begin(), to.end(), t) == to.end()) to.push_back(t);
      }
      for (int t : to) edge(g, l * width + i, (l + 1) * width + t);
    }
  }
  return g;
}

GraphShape embarrassing(int nodes) { return sized(nodes); }

struct Workload {
  std::string_view name;
  GraphShape (*make)(int nodes);
};

const std::array<Workload, 5> kWorkloads{{
    {"chain", chain},
    {"tree", tree},
    {"wavefront", wavefront},
    {"level", level},
    {"embarrassing", embarrassing},
}};

// A topological order (the serial variant's, and the order OpenMP tasks
// are created in: depend clauses need each task after those it reads).
std::vector<int> topological(const GraphShape& g) {
  std::vector<int> left(static_cast<std::size_t>(g.size()));
  std::vector<int> order;
  for (int i = 0; i < g.size(); ++i) {
    left[static_cast<std::size_t>(i)] = static_cast<int>(g.pred[static_cast<std::size_t>(i)].size());
    if (left[static_cast<std::size_t>(i)] == 0) order.push_back(i);
  }
  for (std::size_t k = 0; k < order.size(); ++k)
    for (int s : g.succ[static_cast<std::size_t>(order[k])])
      if (--left[static_cast<std::size_t>(s)] == 0) order.push_back(s);
  return order;
}

// ---- the variants -------------------------------------------------------------

// One sample: build the graph and run it once (`rerun` false), or build and
// run it once untimed and then time `reruns` runs. Each node increments its
// own counter; the caller checks every counter against the runs made.
struct Run {
  const GraphShape* shape = nullptr;
  std::vector<int>* counters = nullptr;
  bool rerun = false;
  int reruns = 0;
  int threads = 0;
  OmpTeamSeen* team = nullptr;
};
using RunFn = double (*)(const Run&);

// Times `build_and_run` (building, then one run) or, with r.rerun, times
// `again` r.reruns times after an untimed build_and_run.
template <class Build, class Again>
double time_phases(const Run& r, Build&& build_and_run, Again&& again) {
  std::int64_t t0 = wall_ns();
  build_and_run();
  if (!r.rerun) return static_cast<double>(wall_ns() - t0) / 1e9;
  t0 = wall_ns();
  for (int i = 0; i < r.reruns; ++i) again();
  return static_cast<double>(wall_ns() - t0) / 1e9;
}

double run_serial(const Run& r) {
  std::vector<int> order;
  int* c = r.counters->data();
  const auto once = [&] {
    for (int i : order) ++c[i];
  };
  return time_phases(
      r,
      [&] {
        order = topological(*r.shape);
        once();
      },
      once);
}

double run_weft(const Run& r) {
  ThreadPool pool(PoolOptions{.workers = r.threads});
  start_workers(pool);
  // Built inside the timed phase: the graph is destroyed after the timing.
  // The timed loop runs as one of the P (on a worker, or on this thread in
  // the pool's seat), as oneTBB's arena counts the calling thread: its
  // get() runs the graph's nodes while it waits.
  std::unique_ptr<TaskGraph> g;
  return detail::on_workers(pool, [&] {
    return time_phases(
        r,
        [&] {
          g = std::make_unique<TaskGraph>();
          std::vector<GraphNode> nodes;
          nodes.reserve(r.shape->succ.size());
          for (int& c : *r.counters) nodes.push_back(g->emplace([&c] { ++c; }));
          for (int i = 0; i < r.shape->size(); ++i)
            for (int s : r.shape->succ[static_cast<std::size_t>(i)])
              nodes[static_cast<std::size_t>(i)].precede(nodes[static_cast<std::size_t>(s)]);
          g->run(pool).get();
        },
        [&] { g->run(pool).get(); });
  });
}

#ifdef WEFT_HAVE_TBB
// oneTBB's way to express a graph run many times: continue_nodes (each
// fires once all its predecessors have), sources fed by a broadcast_node,
// try_put + wait_for_all per run; in an arena of `threads` slots, the
// calling thread one of them.
double run_tbb(const Run& r) {
  namespace flow = oneapi::tbb::flow;
  return in_tbb_arena(r.threads, [&] {
    std::unique_ptr<flow::graph> g;
    std::unique_ptr<flow::broadcast_node<flow::continue_msg>> start;
    std::deque<flow::continue_node<flow::continue_msg>> nodes;
    const auto once = [&] {
      start->try_put(flow::continue_msg());
      g->wait_for_all();
    };
    const double s = time_phases(
        r,
        [&] {
          g = std::make_unique<flow::graph>();
          start = std::make_unique<flow::broadcast_node<flow::continue_msg>>(*g);
          for (int& c : *r.counters)
            nodes.emplace_back(*g, [&c](const flow::continue_msg&) { ++c; });
          for (int i = 0; i < r.shape->size(); ++i) {
            if (r.shape->pred[static_cast<std::size_t>(i)].empty()) flow::make_edge(*start, nodes[static_cast<std::size_t>(i)]);
            for (int to : r.shape->succ[static_cast<std::size_t>(i)])
              flow::make_edge(nodes[static_cast<std::size_t>(i)], nodes[static_cast<std::size_t>(to)]);
          }
          once();
        },
        once);
    nodes.clear();
    return s;
  });
}
#endif

#ifdef WEFT_HAVE_OPENMP
// The tasks in a topological order, each `depend(in:)` on its
// predecessors' slots and `depend(out:)` on its own, then taskwait; in a
// team of `threads` including the calling thread (one thread makes the
// tasks, the team runs them). OpenMP keeps no graph: every run makes its
// tasks again, so a re-run costs what the first run does minus the order.
double run_openmp(const Run& r) {
  std::vector<int> order;
  std::vector<char> slot(r.shape->succ.size());
  char* dep = slot.data();
  int* c = r.counters->data();
  const GraphShape& g = *r.shape;
  const auto once = [&] {
    for (int i : order) {
      const int* p = g.pred[static_cast<std::size_t>(i)].data();
      const int np = static_cast<int>(g.pred[static_cast<std::size_t>(i)].size());
#pragma omp task depend(iterator(k = 0 : np), in : dep[p[k]]) depend(out : dep[i]) firstprivate(i)
      ++c[i];
    }
#pragma omp taskwait
  };
  return omp_team(
      r.threads,
      [&] {
        return time_phases(
            r,
            [&] {
              order = topological(g);
              once();
            },
            once);
      },
      *r.team);
}
#endif

const std::array<harness::Variant<RunFn>, 4> kVariants =
    serial_weft_tbb_openmp<RunFn>(run_serial, run_weft, WEFT_XP_IF_TBB(run_tbb), WEFT_XP_IF_OPENMP(run_openmp));

constexpr const char* kBuildRun = "build_run_ns_per_node";
constexpr const char* kRerun = "rerun_ns_per_node";

nlohmann::json goal_ratios(const Result& r, const GraphParams& p, const std::vector<int>& workers) {
  nlohmann::json ratios = nlohmann::json::array();
  for (int t : workers) {
    const std::string at = " (" + std::to_string(t) + " workers)";
    for (const std::string& w : p.workloads) {
      const auto key = [&](const char* v, const char* m) { return Key(v, m, t).workload(w); };
      add_ratio(ratios, w + ": weft / tbb re-run" + at, ratio(r, key("weft", kRerun), key("tbb", kRerun)),
                goal_at(t, "<= 0.5"));
      add_ratio(ratios, w + ": weft / openmp re-run" + at, ratio(r, key("weft", kRerun), key("openmp", kRerun)),
                goal_at(t, "<= 1.0"));
      add_ratio(ratios, w + ": weft / tbb build and run once" + at,
                ratio(r, key("weft", kBuildRun), key("tbb", kBuildRun)), goal_at(t, "<= 1.0"));
    }
  }
  return ratios;
}

}  // namespace

const std::vector<std::string>& graph_variants() { return harness::names_of<kVariants>(); }

const std::vector<std::string>& graph_workloads() { return harness::names_of<kWorkloads>(); }

GraphShape graph_shape(const std::string& workload, int nodes) {
  for (const Workload& w : kWorkloads)
    if (w.name == workload) return w.make(nodes);
  throw std::invalid_argument("graph: no workload '" + workload + "'");
}

Result run_graph(const GraphParams& p) {
  const std::vector<int> workers = harness::counts_or_usable(p.workers);
  // The units: per workload and phase (build+run once, re-run), the
  // variants at each worker count.
  struct Cell {
    std::size_t shape;  // index into shapes
    bool rerun;
  };
  std::vector<GraphShape> shapes;
  std::vector<harness::Unit> units;
  std::vector<Cell> cells;
  for (const std::string& w : p.workloads) {
    shapes.push_back(graph_shape(w, p.nodes));
    for (const bool rerun : {false, true}) {
      for (auto& u : harness::plan_units(kVariants, p.variants, workers)) {
        units.push_back(std::move(u));
        cells.push_back({shapes.size() - 1, rerun});
      }
    }
  }
  const harness::PlanOptions plan{p.reps, true};
  std::vector<OmpTeamSeen> teams(units.size());
  harness::run_units(units, plan, [&](const harness::Unit& u, std::size_t i) {
    const Cell& cell = cells[i];
    const GraphShape& shape = shapes[cell.shape];
    std::vector<int> counters(shape.succ.size(), 0);
    const double s = harness::variant(kVariants, u.variant)
                         .run(Run{&shape, &counters, cell.rerun, p.reruns, u.threads, &teams[i]});
    const int runs = cell.rerun ? 1 + p.reruns : 1;
    for (std::size_t n = 0; n < counters.size(); ++n) {
      if (counters[n] != runs)
        throw std::runtime_error(fmt::format("graph {} by {}: node {} ran {} times in {} runs",
                                             p.workloads[cell.shape], u.variant, n, counters[n], runs));
    }
    return s;
  });

  Result r;
  r.experiment = "graph";
  nlohmann::json sizes = nlohmann::json::object();
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    std::size_t edges = 0;
    for (const auto& s : shapes[k].succ) edges += s.size();
    sizes[p.workloads[k]] = {{"nodes", shapes[k].size()}, {"edges", edges}};
  }
  r.params = {{"graphs", sizes},
              {"workers", workers},
              {"node", "one increment of the node's own int"},
              {"weft_threads", "a pool of `workers` workers; the runs are started and waited for on one of the P (the "
                               "calling thread in the pool's seat, or a worker), whose wait runs nodes"},
              {"tbb_threads", "flow::graph in an arena of `workers` slots, the calling thread one of them"},
              {"openmp_threads", "omp parallel num_threads(`workers`) including the calling thread; one thread "
                                 "makes the tasks (omp single), the team runs them"},
              {"warmup", harness::warmup_text(plan)}};
  for (std::size_t i = 0; i < units.size(); ++i) {
    const harness::Unit& u = units[i];
    const Cell& cell = cells[i];
    const double nodes = static_cast<double>(shapes[cell.shape].size());
    const double runs = cell.rerun ? p.reruns : 1;
    std::vector<double> ns;
    for (double s : u.samples) ns.push_back(s * 1e9 / (nodes * runs));
    std::string note = u.why_not;
    if (u.runs() && u.variant == "openmp" && cell.rerun) note = "makes every task again each run (no graph to keep)";
    Row row = make_row(u.variant, u.threads, cell.rerun ? kRerun : kBuildRun, "ns", std::move(ns), u.why_not);
    row.note = teams[i].note(note);
    row.labels.workload = p.workloads[cell.shape];
    row.labels.tasks = static_cast<std::int64_t>(nodes);
    r.rows.push_back(std::move(row));
  }
  r.extra["ratios"] = goal_ratios(r, p, workers);
  return r;
}

// The registration: `weft graph`, its sizes in the report, its figures.
namespace {

const Register<GraphParams> reg{{
    .name = "graph", .page = 105, .seconds = {3, 13, 60},
    .title = "Task graphs: build once, run many times",
    .summary = "Task graphs (chain, tree, wavefront, level graph, independent nodes): weft::TaskGraph against "
               "oneTBB's flow graph and OpenMP task dependences, built and run once and re-run",
    .options = {integer("--nodes", &GraphParams::nodes, "Nodes per workload's graph (about)", 1, 10'000'000),
                integer("--reruns", &GraphParams::reruns, "Re-runs timed per sample", 1, 100'000),
                names("--workload", &GraphParams::workloads, "Workloads", "workload", graph_workloads),
                counts("--workers,-w", &GraphParams::workers, "Worker counts", "available_parallelism"),
                variants(&GraphParams::variants, graph_variants), reps(&GraphParams::reps)},
    .sizes = {[](GraphParams& p) {
                p.nodes = 4096;
                p.reruns = 5;
                p.reps = 3;
              },
              nullptr,
              [](GraphParams& p) {
                p.nodes = 65536;
                p.reps = 9;
              }},
    .run = run_graph,
    .heading = [](const GraphParams& p) {
      return fmt::format("Task graphs of ~{} nodes (one increment each): ns per node, built and run once, and per "
                         "re-run ({} re-runs per sample)",
                         p.nodes, p.reruns);
    },
    .print = [](const Result& r) { print_goals(r, 58); },
    .figures = {"bars:rerun_ns_per_node", "bars:build_run_ns_per_node"}, .headlines = {"rerun_ns_per_node"},
}};

}  // namespace

}  // namespace weft::xp
