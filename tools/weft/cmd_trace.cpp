// weft trace <experiment> [--quick|--full] [args] --out trace.json: runs the
// experiment in a child process with WEFT_TRACE set, so every pool it builds
// records its workers' events, and checks the file it leaves.
#include "cmd_trace.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "cli.hpp"
#include "weft/harness/process.hpp"

namespace weft::cli {
namespace {

namespace fs = std::filesystem;

struct TraceOptions {
  std::string experiment;
  std::string out = "trace.json";
  bool quick = false;
  bool full = false;
};

// The registry's arguments for a level ("--n 25 --reps 3": options each
// with one value), less the options `given` sets itself.
std::vector<std::string> level_args(const std::string& registry_args, const std::vector<std::string>& given) {
  const auto overridden = [&given](const std::string& option) {
    return std::any_of(given.begin(), given.end(),
                       [&option](const std::string& g) { return g == option || g.rfind(option + "=", 0) == 0; });
  };
  std::vector<std::string> out;
  std::istringstream in(registry_args);
  for (std::string option, value; in >> option >> value;) {
    if (overridden(option)) continue;
    out.push_back(option);
    out.push_back(value);
  }
  return out;
}

// "weft: error: x" -> "x": the child's message, to be said once by ours.
std::string child_message(const harness::ChildResult& c) {
  std::string line = harness::last_line(c.err);
  for (const char* prefix : {"weft: error: ", "weft: "})
    if (line.rfind(prefix, 0) == 0) line.erase(0, std::char_traits<char>::length(prefix));
  return line;
}

// Refuses an out path the child could not write (checked before the run,
// without creating anything).
void check_out(const std::string& out) {
  if (out.empty()) throw UsageError("--out is empty");
  const fs::path p(out);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw UsageError(fmt::format("--out {} is a directory", out));
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError(fmt::format("cannot write --out {}: no directory {}", out, dir.string()));
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("cannot write --out {}: directory {} is not writable", out, dir.string()));
}

void check_experiment(const std::string& name) {
  std::vector<std::string> names;
  for (const xp::Experiment& e : xp::experiments()) names.push_back(e.name());
  parse_names("experiment", {name}, names);
}

void run_trace(const TraceOptions& o, const std::vector<std::string>& extra) {
  if (o.quick && o.full) throw UsageError("--quick and --full exclude each other");
  check_experiment(o.experiment);
  check_out(o.out);
  std::vector<std::string> args = extra;
  if (o.quick || o.full) args = trace_args(o.experiment, o.quick ? xp::Level::quick : xp::Level::full, extra);
  if (validate_only()) {
    // The experiment checks its own arguments (WEFT_VALIDATE_ONLY is inherited).
    std::vector<std::string> argv{"/proc/self/exe", o.experiment};
    argv.insert(argv.end(), args.begin(), args.end());
    const harness::ChildResult c = harness::spawn(argv);
    if (c.status == 2) throw UsageError(child_message(c));
    if (!c.ok()) throw std::runtime_error(fmt::format("weft {} {}: {}", o.experiment, c.describe(), child_message(c)));
    return;
  }
  const nlohmann::json trace = record_trace(o.experiment, args, o.out, true);
  std::size_t pools = 0, workers = 0, tasks = 0;
  for (const auto& e : trace.at("traceEvents")) {
    const std::string ph = e.value("ph", "");
    const std::string name = e.value("name", "");
    pools += ph == "M" && name == "process_name";
    workers += ph == "M" && name == "thread_name";
    tasks += ph == "X";
  }
  fmt::print(stderr, "weft trace: wrote {}: {} pools, {} workers, {} task runs (open it in ui.perfetto.dev or chrome://tracing)\n",
             o.out, pools, workers, tasks);
}

// One worker's row of the strip.
struct Lane {
  std::vector<std::pair<double, double>> runs;  // [start, end] of each task run
  double first = std::numeric_limits<double>::infinity();
  int steals = 0;
  int parks = 0;
};

nlohmann::json strip_row(int worker, Lane lane, double start, double end) {
  std::sort(lane.runs.begin(), lane.runs.end());
  const double min_gap = (end - start) / 1000;
  std::vector<std::pair<double, double>> busy;
  for (auto [s, e] : lane.runs) {
    s = std::max(s, start);
    e = std::min(e, end);
    if (e <= s) continue;
    if (!busy.empty() && s <= busy.back().second + min_gap) {
      busy.back().second = std::max(busy.back().second, e);
    } else {
      busy.emplace_back(s, e);
    }
  }
  nlohmann::json bars = nlohmann::json::array();
  double total = 0;
  const auto tenth = [](double us) { return std::round(us * 10) / 10; };
  for (const auto& [s, e] : busy) {
    total += e - s;
    bars.push_back({tenth(s - start), tenth(e - s)});
  }
  return {{"worker", worker},
          {"busy", std::move(bars)},
          {"utilisation", end > start ? total / (end - start) : 0.0},
          {"steals", lane.steals},
          {"parks", lane.parks}};
}

}  // namespace

std::vector<std::string> trace_args(const std::string& experiment, xp::Level level, const std::vector<std::string>& given) {
  check_experiment(experiment);
  std::vector<std::string> args = level_args(xp::find_experiment(experiment)->args_at(level), given);
  args.insert(args.end(), given.begin(), given.end());
  return args;
}

nlohmann::json record_trace(const std::string& experiment, const std::vector<std::string>& args,
                            const std::string& out, bool echo) {
  check_experiment(experiment);
  check_out(out);
  std::error_code ec;
  fs::remove(out, ec);  // a stale trace must not pass for this run's
  std::vector<std::string> argv{"/proc/self/exe", experiment};
  argv.insert(argv.end(), args.begin(), args.end());
  harness::SpawnOptions so;
  so.env = {"WEFT_TRACE=" + out};
  const harness::ChildResult c = harness::spawn(argv, so);
  if (echo) {
    std::fwrite(c.out.data(), 1, c.out.size(), stdout);
    std::fflush(stdout);
  }
  if (c.status == 2) throw UsageError(child_message(c));
  if (!c.ok()) throw std::runtime_error(fmt::format("weft {} {}: {}", experiment, c.describe(), child_message(c)));
  if (echo) std::fwrite(c.err.data(), 1, c.err.size(), stderr);
  std::ifstream in(out);
  if (!in) {
    const std::string why = child_message(c);
    throw std::runtime_error(fmt::format("weft {} left no trace at {}{}{}", experiment, out, why.empty() ? "" : ": ", why));
  }
  try {
    nlohmann::json trace = nlohmann::json::parse(in);
    if (!trace.contains("traceEvents") || !trace.at("traceEvents").is_array())
      throw std::runtime_error("no traceEvents array");
    return trace;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("unreadable trace {}: {}", out, e.what()));
  }
}

nlohmann::json utilisation_strip(const nlohmann::json& trace) {
  std::map<std::uint64_t, std::map<int, Lane>> pools;  // by pid, then tid
  for (const auto& e : trace.at("traceEvents")) {
    const std::string ph = e.value("ph", "");
    const auto pid = e.value("pid", std::uint64_t{0});
    const int tid = e.value("tid", 0);
    if (ph == "M") {
      if (e.value("name", "") == "thread_name") pools[pid][tid];
      continue;
    }
    Lane& lane = pools[pid][tid];
    const double ts = e.value("ts", 0.0);
    lane.first = std::min(lane.first, ts);
    if (ph == "X") {
      lane.runs.emplace_back(ts, ts + e.value("dur", 0.0));
    } else if (e.value("name", "") == "steal") {
      ++lane.steals;
    } else if (e.value("name", "") == "park") {
      ++lane.parks;
    }
  }
  const auto runs = [](const std::map<int, Lane>& lanes) {
    std::size_t n = 0;
    for (const auto& [tid, lane] : lanes) n += lane.runs.size();
    return n;
  };
  auto busiest = pools.end();
  for (auto p = pools.begin(); p != pools.end(); ++p)
    if (runs(p->second) > 0 && (busiest == pools.end() || runs(p->second) >= runs(busiest->second))) busiest = p;
  if (busiest == pools.end()) return nullptr;
  double start = -std::numeric_limits<double>::infinity();
  double end = start;
  for (const auto& [tid, lane] : busiest->second) {
    if (std::isfinite(lane.first)) start = std::max(start, lane.first);  // where every ring still reaches
    for (const auto& r : lane.runs) end = std::max(end, r.second);
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [tid, lane] : busiest->second) rows.push_back(strip_row(tid, lane, start, end));
  return {{"pool", busiest->first},
          {"workers", busiest->second.size()},
          {"window_us", std::max(0.0, end - start)},
          {"rows", std::move(rows)}};
}

namespace {

const Register reg{{
    "trace",
    "Record an experiment with every pool tracing: Chrome trace JSON for ui.perfetto.dev",
    [](CLI::App& sub) {
      auto o = std::make_shared<TraceOptions>();
      sub.add_option("experiment", o->experiment, "The experiment to record (its arguments follow)")->required();
      sub.add_option("--out,-o", o->out, "Trace file (default trace.json)");
      sub.add_flag("--quick", o->quick, "With the report's --quick sizes (arguments given replace them)");
      sub.add_flag("--full", o->full, "With the report's --full sizes (arguments given replace them)");
      sub.allow_extras();
      // The root app owns its subcommands: `sub` outlives the parse.
      sub.callback([o, &sub] { run_trace(*o, sub.remaining()); });
    },
}};

}  // namespace
}  // namespace weft::cli
