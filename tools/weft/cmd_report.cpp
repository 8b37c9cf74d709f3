// weft report — the command to run first on a new machine: every experiment,
// then a directory with results.json, the figures and one self-contained
// page (index.html) that sets this machine's figures beside the articles'.
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cli.hpp"
#include "cmd_trace.hpp"
#include "report_files.hpp"
#include "report_html.hpp"
#include "report_markdown.hpp"
#include "weft/harness/process.hpp"
#include "weft/sync/wait_options.hpp"
#include "weft/topo/topology.hpp"

namespace weft::cli {
namespace {

namespace fs = std::filesystem;

using xp::Level;

constexpr const char* kPython = "/usr/bin/python3";

constexpr double kPlotSeconds = 4;

// The experiment the report traces for its utilisation strip, at --quick
// sizes whatever the level (more only fills the trace rings over again),
// weft only, one recorded run: many short loops, so the strip shows workers
// joining and leaving, where fib would show two solid bars.
constexpr const char* kTraced = "pfor";
const std::vector<std::string> kTracedArgs = {"--variant", "weft", "--reps", "1"};
constexpr double kTraceSeconds = 3;

struct ReportOptions {
  bool quick = false;
  bool full = false;
  bool force = false;
  bool json = false;
  std::string out = "weft-report";
  std::string results;
  std::string markdown_from;
  std::vector<std::string> only;
};

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

// Progress on stderr: one line redrawn every second on a terminal, a plain
// line per step otherwise (logs, CI). Time left = the remaining steps'
// estimates, scaled by how the finished steps compared with theirs.
class Progress {
 public:
  explicit Progress(std::vector<std::pair<std::string, double>> steps)
      : steps_(std::move(steps)), tty_(isatty(STDERR_FILENO) == 1) {
    if (tty_) ticker_ = std::thread([this] { tick(); });
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { stop(); }

  void begin(std::size_t step) {
    std::lock_guard lock(mutex_);
    current_ = step;
    hidden_ = false;
    step_start_ = std::chrono::steady_clock::now();
    if (!tty_) fmt::print(stderr, "{}\n", line_locked());
    else draw_locked();
  }
  void end(double seconds) {
    std::lock_guard lock(mutex_);
    done_actual_ += seconds;
    done_estimate_ += steps_[current_].second;
  }
  // Clears the line until the next begin(): the tables are about to be
  // printed on stdout, which may be the same terminal.
  void hide() {
    std::lock_guard lock(mutex_);
    hidden_ = true;
    if (tty_) {
      fmt::print(stderr, "\r\x1b[K");
      std::fflush(stderr);
    }
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
    if (tty_) fmt::print(stderr, "\r\x1b[K");
  }

 private:
  std::string line_locked() const {
    const double in_step =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start_).count();
    // Scaled only once a few seconds of estimates are behind us, and within
    // bounds: one slow or fast step should not swing the forecast wildly.
    const double scale = done_estimate_ >= 3 ? std::clamp(done_actual_ / done_estimate_, 0.5, 3.0) : 1.0;
    double left = std::max(0.0, steps_[current_].second * scale - in_step);
    for (std::size_t i = current_ + 1; i < steps_.size(); ++i) left += steps_[i].second * scale;
    if (!tty_)
      return fmt::format("weft report: [{}/{}] {} (about {} left)", current_ + 1, steps_.size(),
                         steps_[current_].first, clock_text(left));
    return fmt::format("weft report: [{}/{}] {}, {} so far in this step, about {} left", current_ + 1,
                       steps_.size(), steps_[current_].first, clock_text(in_step), clock_text(left));
  }
  void draw_locked() {
    fmt::print(stderr, "\r{}\x1b[K", line_locked());
    std::fflush(stderr);
  }
  void tick() {
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      // Once a second: often enough to look alive, rare enough not to
      // disturb the measurements.
      wake_.wait_for(lock, std::chrono::seconds(1));
      if (!stopped_ && !hidden_) draw_locked();
    }
  }

  std::vector<std::pair<std::string, double>> steps_;
  bool tty_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;
  bool hidden_ = false;
  std::size_t current_ = 0;
  std::chrono::steady_clock::time_point step_start_ = std::chrono::steady_clock::now();
  double done_actual_ = 0;
  double done_estimate_ = 0;
  std::thread ticker_;
};

// The steps the report runs: the topology, then the registered experiments
// in page order, unless --only leaves them out.

std::vector<std::pair<std::string, double>> plan(const ReportOptions& o, Level level) {
  std::vector<std::pair<std::string, double>> steps;
  const auto wanted = [&o](const std::string& name) {
    return o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end();
  };
  if (wanted(xp::kTopo.name)) steps.emplace_back(xp::kTopo.name, xp::kTopo.seconds);
  for (const xp::Experiment& e : xp::experiments())
    if (wanted(e.name())) steps.emplace_back(e.name(), e.seconds_at(level));
  return steps;
}

std::vector<std::string> runnable_names() {
  std::vector<std::string> names{xp::kTopo.name};
  for (const xp::Experiment& e : xp::experiments()) names.push_back(e.name());
  return names;
}

void print_tables(const xp::Experiment& e, const std::string& heading, const xp::Result& r) {
  fmt::print("\n== {} ==\n{}\n\n", e.name(), heading);
  const xp::Result shown = e.for_display(r);
  if (!shown.rows.empty()) print_rows(shown);
  e.print(r);
  for (const auto& n : r.notes) fmt::print("note: {}\n", n);
  std::fflush(stdout);
}

// A result to print as tables, under its heading.
using Shown = std::vector<std::pair<std::string, xp::Result>>;

// Runs `e` at `level`'s sizes with `given` on top, and keeps it for the tables.
xp::Result run_shown(const xp::Experiment& e, Level level, const std::vector<xp::Given>& given, Shown& shown) {
  const xp::Prepared p = e.prepare(level, given);
  shown.emplace_back(p.heading, p.run());
  return shown.back().second;
}

// The ring at 2 threads (one per CPU on the reference machine) and at 3
// (oversubscribed there: the case where spinning flags collapse), in one
// result whose rows carry their thread count; shown apart, as ring's own
// table code expects one thread count.
xp::Result run_report_ring(const xp::Experiment& e, Level level, Shown& shown) {
  std::vector<xp::Given> three{{"--threads", {"3"}}};
  if (static_cast<int>(Topology::instance().allowed().count()) < 3) {
    // Spinning flags crawl at a scheduler tick per hop here: bound them by
    // time, and give the sleeping flags a count they finish quickly. At
    // --quick the ring's own quick size already bounds every run (0.25 s).
    three.push_back({"--hops", {"50000"}});
    if (level != Level::quick) three.push_back({"--time-limit", {level == Level::standard ? "1" : "5"}});
  }
  xp::Result r = run_shown(e, level, {{"--threads", {"2"}}}, shown);
  const xp::Result r3 = run_shown(e, level, three, shown);
  nlohmann::json by_threads;
  by_threads["2"] = r.params;
  by_threads["3"] = r3.params;
  r.params = {{"threads", {2, 3}}, {"by_threads", by_threads}};
  r.rows.insert(r.rows.end(), r3.rows.begin(), r3.rows.end());
  for (const auto& n : r3.notes)
    if (std::find(r.notes.begin(), r.notes.end(), n) == r.notes.end()) r.notes.push_back(n);
  return r;
}

nlohmann::json run_topo() {
  const harness::ChildResult c = harness::spawn({"/proc/self/exe", xp::kTopo.name, "--json"});
  if (!c.ok()) throw std::runtime_error(fmt::format("weft topo {}: {}", c.describe(), harness::last_line(c.err)));
  return nlohmann::json::parse(c.out);
}

// One experiment's JSON object; failures become entries that say why, so
// one broken experiment does not cost the report. `shown` gets the results
// to print as tables.
nlohmann::json run_one(const std::string& name, Level level, Shown& shown) {
  try {
    if (name == xp::kTopo.name) return run_topo();
    const xp::Experiment* e = xp::find_experiment(name);
    if (e == nullptr)
      return {{"experiment", name}, {"built", false}, {"note", "not built"}, {"results", nlohmann::json::array()}};
    if (name == "ring") return xp::to_json(run_report_ring(*e, level, shown));
    return xp::to_json(run_shown(*e, level, {}, shown));
  } catch (const std::exception& e) {
    return {{"experiment", name}, {"error", e.what()}, {"results", nlohmann::json::array()}};
  }
}

// results.json's "trace": which run was traced, into which file, and its
// utilisation strip (weft trace's), or the error that cost it.
nlohmann::json report_trace(const fs::path& dir) {
  const std::vector<std::string> args = trace_args(kTraced, Level::quick, kTracedArgs);
  std::string joined;
  for (const auto& a : args) joined += (joined.empty() ? "" : " ") + a;
  nlohmann::json t = {{"experiment", kTraced}, {"args", joined}, {"file", "trace.json"}};
  try {
    t["strip"] = utilisation_strip(record_trace(kTraced, args, (dir / "trace.json").string(), false));
  } catch (const std::exception& e) {
    t["error"] = e.what();
  }
  return t;
}

nlohmann::json defaults_json(Level level) {
  const Calibration c = calibrate(level == Level::quick ? 200 : 400);
  nlohmann::json d;
  d["calibration"] = {{"pause_ns", c.pause_ns},       {"wake_ns", c.wake_ns},     {"wake_min_ns", c.wake_min_ns},
                      {"wake_max_ns", c.wake_max_ns}, {"notify_ns", c.notify_ns}, {"samples", c.samples},
                      {"spin_ns", c.spin.count()}};
  d["default_spin_ns"] = WaitOptions::default_spin().count();
  d["builtin_default_spin_ns"] = WaitOptions::kDefaultSpin.count();
  const char* env = std::getenv("WEFT_SPIN_NS");
  d["spin_env"] = env ? nlohmann::json(env) : nlohmann::json(nullptr);
  d["available_parallelism"] = available_parallelism();
  d["allowed_cpus"] = Topology::instance().allowed().count();
  d["cgroup_cpu_quota"] = cgroup_cpu_quota();
  d["placement"] = "none";
  return d;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

// $WEFT_PLOT, then the source tree this binary was built from, then the
// install location next to the binary (<prefix>/bin -> <prefix>/share/weft).
std::optional<std::string> find_plot_script(std::string& looked) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("WEFT_PLOT"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back(WEFT_PLOT_SOURCE);
  if (const std::string d = exe_dir(); !d.empty()) candidates.push_back(d + "/../share/weft/plot.py");
  for (const auto& c : candidates) {
    looked += (looked.empty() ? "" : ", ") + c;
    if (access(c.c_str(), R_OK) == 0) return c;
  }
  return std::nullopt;
}

PlotOutcome draw_plots(const fs::path& dir) {
  PlotOutcome p;
  std::string looked;
  const auto script = find_plot_script(looked);
  if (!script) {
    p.failure = fmt::format("plot.py not found (looked at {}; set WEFT_PLOT)", looked);
    return p;
  }
  if (access(kPython, X_OK) != 0) {
    p.failure = fmt::format("{} not found (apt-get install python3-matplotlib)", kPython);
    return p;
  }
  const harness::ChildResult c = harness::spawn({kPython, *script, (dir / "results.json").string(), dir.string()});
  if (!c.ok()) {
    const std::string why = harness::last_line(c.err);
    p.failure = why.empty() ? fmt::format("{} {}", *script, c.describe()) : why;
    return p;
  }
  try {
    std::ifstream in(dir / "plots.json");
    p.manifest = nlohmann::json::parse(in);
    p.drawn = true;
  } catch (const std::exception& e) {
    p.failure = fmt::format("unreadable plots.json: {}", e.what());
  }
  return p;
}

// --markdown-from: the README's results table from a results.json; runs
// nothing.
void print_markdown(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw UsageError(fmt::format("--markdown-from: cannot read {}", file));
  nlohmann::json results;
  try {
    results = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--markdown-from: {} is not JSON: {}", file, e.what()));
  }
  std::string text;
  try {
    text = results_markdown(results);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--markdown-from: {}: {}", file, e.what()));
  }
  if (validate_only()) return;
  std::cout << text;
}

void run_report(const ReportOptions& o) {
  if (!o.markdown_from.empty()) return print_markdown(o.markdown_from);
  if (o.quick && o.full) throw UsageError("--quick and --full exclude each other");
  const Level level = o.quick ? Level::quick : o.full ? Level::full : Level::standard;
  std::vector<std::string> only;
  if (!o.only.empty()) only = parse_names("experiment", o.only, runnable_names());
  ReportOptions opts = o;
  opts.only = only;
  const fs::path dir(o.out);
  prepare_out_dir(dir, o.force, validate_only());
  if (validate_only()) return;

  const auto t0 = std::chrono::steady_clock::now();
  const auto since = [&t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  nlohmann::json all;
  all["report"] = {{"weft_version", WEFT_CLI_VERSION}, {"level", xp::to_string(level)}, {"started_utc", utc_now()}};
  all["machine"] = xp::machine_context();
  all["registry"] = xp::registry_json();
  all["published"] = xp::published_all();
  all["experiments"] = nlohmann::json::array();
  if (!o.json) print_machine_header();

  auto steps = plan(opts, level);
  const std::size_t experiments = steps.size();
  const bool traced = std::any_of(steps.begin(), steps.end(), [](const auto& s) { return s.first == kTraced; });
  if (traced) steps.emplace_back("trace", kTraceSeconds);
  steps.emplace_back("calibration", 1);
  steps.emplace_back("plots", kPlotSeconds);
  Progress progress(steps);
  for (std::size_t i = 0; i < experiments; ++i) {
    progress.begin(i);
    const double start = since();
    Shown shown;
    nlohmann::json e = run_one(steps[i].first, level, shown);
    e["seconds"] = since() - start;
    progress.end(since() - start);
    if (!o.json && !shown.empty()) {
      progress.hide();
      for (const auto& [heading, r] : shown) print_tables(*xp::find_experiment(steps[i].first), heading, r);
    }
    all["experiments"].push_back(std::move(e));
  }
  if (traced) {
    progress.begin(experiments);
    all["trace"] = report_trace(dir);
  }
  progress.begin(steps.size() - 2);
  all["defaults"] = defaults_json(level);
  all["report"]["seconds"] = since();
  write_file(dir / "results.json", all.dump(2) + "\n");

  progress.begin(steps.size() - 1);
  const double plot_start = since();
  const PlotOutcome plots = draw_plots(dir);
  progress.stop();
  all["report"]["plot_seconds"] = since() - plot_start;
  all["report"]["plots"] = plots.drawn ? nlohmann::json("drawn") : nlohmann::json(plots.failure);
  const std::string json_text = all.dump(2) + "\n";
  write_file(dir / "results.json", json_text);
  write_file(dir / "index.html", render_report_html(all, plots, dir.string()));

  std::vector<std::string> written = {"results.json", "index.html"};
  if (std::error_code ec; fs::exists(dir / "trace.json", ec)) written.emplace_back("trace.json");
  if (plots.drawn) {
    written.emplace_back("plots.json");
    for (const auto& d : plots.manifest.value("drawn", nlohmann::json::array()))
      written.push_back(d.value("file", std::string()));
  }
  write_marker(dir, written);
  if (!o.results.empty()) write_file(o.results, json_text);
  if (o.json) std::cout << json_text;
  std::cout.flush();
  if (!plots.drawn) fmt::print(stderr, "weft report: plots not drawn: {}\n", plots.failure);
  fmt::print(stderr, "weft report: took {}\nweft report: wrote {}\n", clock_text(since()),
             (dir / "index.html").string());
}

const Register reg{{
    "report",
    "Run every experiment and write a report directory: index.html, figures, results.json",
    [](CLI::App& sub) {
      auto o = std::make_shared<ReportOptions>();
      sub.add_flag("--quick", o->quick, "Smaller sizes (about 70 s on 2 CPUs)");
      sub.add_flag("--full", o->full, "Every experiment at its largest size: more repetitions, larger runs");
      sub.add_option("--out,-o", o->out, "Report directory (default weft-report)");
      sub.add_flag("--force", o->force, "Write into a non-empty directory (replacing an earlier report)");
      sub.add_option("--only", o->only, "Run only these experiments, comma list (default all)");
      sub.add_flag("--json", o->json, "Also print results.json on stdout (instead of the tables)");
      sub.add_option("--results", o->results, "Also write results.json to this file");
      sub.add_option("--markdown-from", o->markdown_from,
                     "Run nothing: print the README's results table from this results.json");
      sub.callback([o] { run_report(*o); });
    },
}};

}  // namespace
}  // namespace weft::cli
