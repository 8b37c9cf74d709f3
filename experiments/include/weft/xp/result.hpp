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
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "weft/harness/run.hpp"
#include "weft/xp/stats.hpp"

namespace weft::xp {


// What tells rows of one variant, thread count and metric apart (the
// qualifiers), and what a row says about its own run. Each set field is a
// key of the row's JSON object, flat beside variant and metric.
struct Labels {
  std::optional<std::string> mode;         // tasks: fire_and_forget, round_trip
  std::optional<std::string> workload;     // smt: sum, sin; pfor: spin, sum
  std::optional<std::string> granularity;  // spin: coarse, medium, fine
  std::optional<int> cutoff;               // fib: calls below it run serially
  // About the run, not used to tell rows apart.
  std::optional<std::int64_t> tasks;       // tasks per run
  std::optional<std::int64_t> hops;        // ring: hops per run
  std::optional<std::int64_t> items;       // work items per run
  std::optional<std::int64_t> spawns;      // fib: tasks spawned per run
  std::optional<double> item_us;           // spin: work per item
  std::optional<int> stopped_reps;         // spin: runs stopped by the time limit
  std::optional<double> work_fraction_min; // spin: the least work a stopped run did
  std::optional<double> mean;              // c2c: mean over the pairs
  std::optional<int> pairs;                // c2c: CPU pairs measured
  std::optional<std::vector<int>> cpus;    // smt: the CPUs the threads ran on
};

struct Row {
  std::string variant;
  int threads = 0;            // 0: not applicable (omitted from the JSON)
  std::string metric;
  std::string unit;
  Stats stats;
  bool measured = true;       // false: `note` says why not (peer missing, ...)
  std::string note;           // e.g. "stopped after 10 s", "not built: libtbb-dev missing"
  Labels labels;
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

// The whole of data/published.json (compiled in).
const nlohmann::json& published_all();

// The published figures for an article key of data/published.json
// ("000_ring_latency", ...); null if absent.
const nlohmann::json& published(const std::string& key);

// Which row a reader wants: variant and metric, and any of the thread count
// and qualifiers (unset: any). Key("weft", "ms", 2).workload("sum").
struct Key {
  Key(std::string_view v, std::string_view m, std::optional<int> t = std::nullopt)
      : variant(v), metric(m), threads(t) {}
  Key& mode(std::string m) { mode_ = std::move(m); return *this; }
  Key& workload(std::string w) { workload_ = std::move(w); return *this; }
  Key& granularity(std::string g) { granularity_ = std::move(g); return *this; }
  Key& cutoff(int c) { cutoff_ = c; return *this; }

  std::string_view variant;
  std::string_view metric;
  std::optional<int> threads;
  std::optional<std::string> mode_;
  std::optional<std::string> workload_;
  std::optional<std::string> granularity_;
  std::optional<int> cutoff_;
};

// The first row matching `key`, or null.
const Row* find(const Result& r, const Key& key);
// The median of the matching row when it was measured.
std::optional<double> median(const Result& r, const Key& key);
// median(a) / median(b), when both were measured and b's is not zero.
std::optional<double> ratio(const Result& r, const Key& a, const Key& b);

// Whether `value` meets `goal` (">= x", "<= x", "> x" or "< x"); nothing
// for an empty or other goal.
std::optional<bool> goal_met(double value, std::string_view goal);

// The worker count the pool's goals are set at (the development host's 2
// CPUs); at other counts the same ratios are figures without a goal.
inline constexpr int kGoalWorkers = 2;
// `goal` for a ratio measured at `workers`, or no goal ("").
inline std::string goal_at(int workers, const char* goal) { return workers == kGoalWorkers ? goal : ""; }

// Appends {what, value, goal, met} to an experiment's "ratios" list when the
// value exists and is positive (both sides were measured); "met" only for
// a goal goal_met() reads.
void add_ratio(nlohmann::json& ratios, const std::string& what, std::optional<double> value,
               const std::string& goal);

// The row every experiment starts from: a variant's measured metric, or
// (`why_not` non-empty) a row that says why it was not measured.
Row make_row(std::string variant, int threads, std::string metric, std::string unit,
             std::vector<double> samples, std::string why_not = {});

// A second figure of the same measurement (ns per task beside ms, CPU beside
// wall time): `base`'s variant, threads, labels, note and measured flag,
// with another metric, unit and samples.
Row with_metric(Row base, std::string metric, std::string unit, std::vector<double> samples);

// CPU time of the whole process and of the calling thread, and wall time,
// in ns: the harness's clocks.
using harness::process_cpu_ns;
using harness::thread_cpu_ns;
using harness::wall_ns;

}  // namespace weft::xp
