// weft/xp/result.hpp — what every experiment returns, and its JSON shape.
//
// Every experiment's JSON object has: experiment, machine, params, results
// (rows with variant, threads, metric, unit, median, min, max, reps) and
// published (the article's own figures, with their machine). The names are
// a contract other tools rely on; tests/cli pins them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft::xp {

struct Stats {
  double median = 0;
  double min = 0;
  double max = 0;
  int reps = 0;
};

// Median, min and max of the samples (empty -> reps 0).
Stats summarize(std::vector<double> samples);

struct Row {
  std::string variant;
  int threads = 0;            // 0: not applicable (omitted from the JSON)
  std::string metric;
  std::string unit;
  Stats stats;
  bool measured = true;       // false: `note` says why not (peer missing, ...)
  std::string note;           // e.g. "stopped after 10 s", "not built: libtbb-dev missing"
  nlohmann::json extra = nlohmann::json::object();
};

struct Result {
  std::string experiment;
  nlohmann::json params = nlohmann::json::object();
  std::vector<Row> rows;
  nlohmann::json published = nullptr;  // the article's figures, or null
  nlohmann::json extra = nlohmann::json::object();  // experiment-specific fields, merged at top level
  std::vector<std::string> notes;      // warnings and remarks for the reader
};

// The experiment's JSON object (with the machine context).
nlohmann::json to_json(const Result& r);

// The machine context: CPU model, allowed CPUs, cores, SMT, kernel,
// compiler, weft version, topology source (and its warning if flat).
nlohmann::json machine_context();

// The published figures for an article key of data/published.json
// ("000_ring_latency", ...); null if absent.
const nlohmann::json& published(const std::string& key);

// Runs every variant once per repetition, round-robin (A B C A B C ...):
// the host moves these vCPUs every few seconds, and a block of one variant
// would measure the move, not the variant.
template <class F>
void interleave(int reps, int variants, F&& run_one) {
  for (int rep = 0; rep < reps; ++rep)
    for (int v = 0; v < variants; ++v) run_one(v, rep);
}

// CPU time of the whole process and of the calling thread, in ns.
std::int64_t process_cpu_ns() noexcept;
std::int64_t thread_cpu_ns() noexcept;
std::int64_t wall_ns() noexcept;

}  // namespace weft::xp
