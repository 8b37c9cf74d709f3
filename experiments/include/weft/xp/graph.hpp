// weft/xp/graph.hpp — task graphs: build one, run it, run it again.
//
// Taskflow's graph benchmarks, each node one increment of its own counter:
// a linear chain, a binary tree (each node before its two children), a
// wavefront (an S x S grid, each block after its left and upper
// neighbours), a level graph (L levels of W nodes, 1-4 random edges from
// each node to the next level, fixed seed) and embarrassing parallelism (N
// independent nodes), all of about `nodes` nodes. Variants: serial (the
// nodes in a topological order), weft (weft::TaskGraph), tbb (oneTBB's
// flow::graph of continue_nodes, a broadcast_node feeding the sources) and
// openmp (`omp task depend`, the tasks made again each run: OpenMP has no
// graph to keep). Metrics, in ns per node: building the graph and running
// it once, and each re-run of the built graph.
#pragma once

#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

const std::vector<std::string>& graph_variants();
const std::vector<std::string>& graph_workloads();

struct GraphParams {
  int nodes = 16384;  // about this many per workload
  int reruns = 20;    // re-runs timed per sample
  std::vector<std::string> workloads = graph_workloads();
  std::vector<int> workers;  // empty: available_parallelism()
  std::vector<std::string> variants = graph_variants();
  int reps = 5;
};

// A workload's graph: successor lists and predecessor lists by node.
struct GraphShape {
  std::vector<std::vector<int>> succ;
  std::vector<std::vector<int>> pred;
  int size() const noexcept { return static_cast<int>(succ.size()); }
};
// The graph of `workload` with about `nodes` nodes (std::invalid_argument
// for another name).
GraphShape graph_shape(const std::string& workload, int nodes);

Result run_graph(const GraphParams& p);

}  // namespace weft::xp
