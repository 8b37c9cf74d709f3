// `weft report`: the directory it writes (results.json with every
// experiment, index.html with every section, every figure), its refusal to
// overwrite a non-empty directory without --force, and a page a browser
// renders. Quick sizes; no timing is asserted. Slow (~40 s) and
// sanitizer-hostile (a Python child, a browser): labelled report;nosan.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "report_html.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

using namespace weft::test;  // cli_run.hpp: running weft, the shared checks; temp_dir.hpp: TempDir

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

bool have_matplotlib() { return run_shell("/usr/bin/python3 -c 'import matplotlib'").status == 0; }

const std::vector<std::string> kExperiments = {"topo", "ring", "c2c",   "tasks", "fib", "pfor",
                                               "idle", "alloc", "io", "smt", "spin", "algo", "coro", "scale"};

// Every figure plot.py draws, and the experiment it comes from.
const std::vector<std::pair<std::string, std::string>> kFigures = {
    {"c2c_heatmap.png", "c2c"},   {"ring_2_threads.png", "ring"},     {"ring_3_threads.png", "ring"},
    {"tasks_per_s.png", "tasks"}, {"smt_slowdown.png", "smt"},         {"alloc_seconds.png", "alloc"},
    {"alloc_scalability.png", "alloc"}, {"io_mb_per_s.png", "io"},     {"spin_wall_vs_cpu.png", "spin"},
    {"fib_ms.png", "fib"},        {"pfor_ms.png", "pfor"},             {"idle_cpu.png", "idle"},
    {"idle_latency.png", "idle"}, {"algo_vs_serial.png", "algo"}, {"worker_strip.png", "pfor"},
    {"coro_vs_peers.png", "coro"}, {"scale_speedup.png", "scale"}};

const nlohmann::json* find_experiment(const nlohmann::json& results, const std::string& name) {
  for (const auto& e : results.at("experiments"))
    if (e.value("experiment", std::string()) == name) return &e;
  return nullptr;
}

TEST(ReportQuick, WritesResultsPageAndEveryFigure) {
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory(tmp.path())) << tmp.path();
  const fs::path out = tmp.path() / "report";
  const CliRun r = run_cli("report --quick --out " + out.string());
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_TRUE(contains(r.err, "wrote " + (out / "index.html").string())) << r;

  nlohmann::json results;
  ASSERT_NO_THROW(results = nlohmann::json::parse(read_all(out / "results.json")));
  ASSERT_TRUE(results.contains("machine"));
  // What the page and the plotter are built from.
  ASSERT_TRUE(results.contains("registry") && results.at("registry").is_array()) << "no registry";
  EXPECT_EQ(results.at("published").at("000_ring_latency").value("title", std::string()),
            "Inter-thread signalling latency");
  EXPECT_TRUE(results.at("machine").contains("cpu_model"));
  // The figures depend on it (docs/design/pool.md, the fences as an asymmetric pair).
  const std::string fences = results.at("machine").value("push_fences", std::string());
  EXPECT_TRUE(fences == "membarrier" || fences == "fences") << fences;
  EXPECT_GT(results.at("report").at("seconds").get<double>(), 0);
  for (const auto& name : kExperiments) {
    const nlohmann::json* e = find_experiment(results, name);
    ASSERT_NE(e, nullptr) << "no entry for " << name;
    EXPECT_FALSE(e->contains("error")) << e->dump();
    if (!e->value("built", true)) {
      EXPECT_EQ(e->value("note", std::string()), "not built yet");
      continue;
    }
    EXPECT_TRUE(e->contains("machine")) << name;
    if (name != "topo") {
      EXPECT_FALSE(e->at("results").empty()) << name;
    }
  }
  // The ring ran at 2 and at 3 threads.
  const nlohmann::json* ring = find_experiment(results, "ring");
  bool two = false;
  bool three = false;
  for (const auto& row : ring->at("results")) {
    two = two || row.value("threads", 0) == 2;
    three = three || row.value("threads", 0) == 3;
  }
  EXPECT_TRUE(two && three) << "ring rows at 2 and 3 threads";
  // The utilisation strip's trace: pfor's workers, and the file beside the page.
  ASSERT_TRUE(results.contains("trace")) << "no trace";
  EXPECT_FALSE(results.at("trace").contains("error")) << results.at("trace").dump();
  EXPECT_FALSE(results.at("trace").at("strip").at("rows").empty()) << results.at("trace").dump();
  EXPECT_TRUE(fs::exists(out / "trace.json"));
  const nlohmann::json d = results.at("defaults");
  EXPECT_GT(d.at("calibration").at("pause_ns").get<double>(), 0);
  EXPECT_GT(d.at("calibration").at("wake_ns").get<double>(), 0);
  EXPECT_GT(d.at("default_spin_ns").get<double>(), 0);
  EXPECT_GE(d.at("available_parallelism").get<int>(), 1);

  const std::string html = read_all(out / "index.html");
  for (const char* section : {"id=\"machine\"", "id=\"article-000\"", "id=\"article-001\"", "id=\"article-002\"",
                              "id=\"article-003\"", "id=\"article-004\"", "id=\"weft-own\"", "id=\"defaults\""})
    EXPECT_TRUE(contains(html, section)) << section;
  for (const char* heading : {"000 · Inter-thread signalling latency", "001 · std::async vs a thread pool",
                              "002 · Affinity and hyperthreading", "003 · ders", "004 · Intel",
                              "weft's defaults on this machine and why"})
    EXPECT_TRUE(contains(html, heading)) << heading;
  EXPECT_FALSE(contains(html, "http://")) << "the page must not need the network";
  EXPECT_FALSE(contains(html, "https://"));

  if (!have_matplotlib()) {
    EXPECT_TRUE(contains(html, "plots not drawn: "));
    GTEST_SKIP() << "/usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib): figures not checked";
  }
  const nlohmann::json manifest = nlohmann::json::parse(read_all(out / "plots.json"));
  for (const auto& [file, from] : kFigures) {
    const nlohmann::json* e = find_experiment(results, from);
    if (e != nullptr && !e->value("built", true)) continue;  // skipped with a note, rightly
    const std::string png = read_all(out / file);
    ASSERT_GT(png.size(), 1000U) << file << " missing or empty; plots.json: " << manifest.dump(1);
    EXPECT_EQ(png.substr(1, 3), "PNG") << file;
    EXPECT_TRUE(contains(html, "<code>" + file + "</code>")) << file << " is not on the page";
  }
  EXPECT_TRUE(contains(html, "data:image/png;base64,")) << "figures are embedded";
}

TEST(ReportQuick, RefusesANonEmptyDirectoryWithoutForce) {
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory(tmp.path())) << tmp.path();
  const fs::path out = tmp.path() / "report";
  ASSERT_EQ(run_cli("report --quick --only c2c --out " + out.string()).status, 0);
  const std::string before = read_all(out / "results.json");

  // Twice into the same directory: refused before anything runs.
  CliRun again = run_cli("report --quick --only c2c --out " + out.string());
  EXPECT_EQ(again.status, 2) << again;
  EXPECT_TRUE(contains(again.err, out.string())) << again;
  EXPECT_TRUE(contains(again.err, "--force")) << again;
  EXPECT_EQ(read_all(out / "results.json"), before) << "a refused run must not touch the directory";

  // A directory that is not a report is refused too.
  const fs::path foreign = tmp.path() / "foreign";
  fs::create_directories(foreign);
  std::ofstream(foreign / "notes.txt") << "mine\n";
  CliRun refused = run_cli("report --quick --only c2c --out " + foreign.string());
  EXPECT_EQ(refused.status, 2) << refused;
  EXPECT_TRUE(contains(refused.err, foreign.string()) && contains(refused.err, "--force")) << refused;

  // With --force both succeed; the foreign file is left alone.
  CliRun forced = run_cli("report --quick --only c2c --force --out " + out.string());
  EXPECT_EQ(forced.status, 0) << forced;
  EXPECT_TRUE(fs::exists(out / "index.html"));
  forced = run_cli("report --quick --only c2c --force --out " + foreign.string());
  EXPECT_EQ(forced.status, 0) << forced;
  EXPECT_TRUE(fs::exists(foreign / "notes.txt"));
  EXPECT_TRUE(fs::exists(foreign / "results.json"));
}

// Defect 8c: --force wrote through a link standing in DIR, so DIR/index.html
// linked to any file (as root: any file at all) had that file overwritten.
bool is_plain_file(const fs::path& p) { return fs::is_regular_file(fs::symlink_status(p)); }

// A file outside the report directory that links in it point at: it must
// come out of every run unchanged.
class Victim {
 public:
  explicit Victim(const fs::path& dir) : path_(dir / "victim.txt") { std::ofstream(path_) << kText; }
  // Links named `names` in `dir` (made if missing), each pointing here.
  void link_from(const fs::path& dir, std::initializer_list<const char*> names) const {
    fs::create_directories(dir);
    for (const char* name : names) fs::create_symlink(path_, dir / name);
  }
  [[nodiscard]] bool untouched() const { return read_all(path_) == kText; }

 private:
  static constexpr const char* kText = "not the report's\n";
  fs::path path_;
};

void expect_no_temporaries(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_FALSE(contains(entry.path().filename().string(), ".tmp")) << "temporary left behind: " << entry.path();
}

TEST(ReportQuick, ForceNeverWritesThroughALinkInAForeignDirectory) {
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory(tmp.path())) << tmp.path();
  const Victim victim(tmp.path());
  const fs::path out = tmp.path() / "foreign";
  victim.link_from(out, {"index.html", "results.json", ".weft-report" /* the marker's name */});
  std::ofstream(out / "notes.txt") << "mine\n";

  const CliRun r = run_cli("report --quick --only topo --force --out " + out.string());
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_TRUE(victim.untouched()) << "the report wrote through a link";
  EXPECT_TRUE(is_plain_file(out / "index.html"));
  EXPECT_TRUE(is_plain_file(out / "results.json"));
  EXPECT_TRUE(is_plain_file(out / ".weft-report"));
  EXPECT_TRUE(contains(read_all(out / "index.html"), "<!DOCTYPE html>"));
  EXPECT_EQ(read_all(out / "notes.txt"), "mine\n") << "a file the report did not write was touched";
}

TEST(ReportQuick, ForceRemovesOnlyWhatItsMarkerListsAndFollowsNoLink) {
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory(tmp.path())) << tmp.path();
  const Victim victim(tmp.path());
  const fs::path out = tmp.path() / "report";
  ASSERT_EQ(run_cli("report --quick --only topo --out " + out.string()).status, 0);

  // A link where the report's own page was (a name the marker lists), and
  // one it never wrote.
  fs::remove(out / "index.html");
  victim.link_from(out, {"index.html", "stranger.png"});
  std::ofstream(out / "extra.txt") << "mine\n";

  const CliRun r = run_cli("report --quick --only topo --force --out " + out.string());
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_TRUE(victim.untouched());
  EXPECT_TRUE(is_plain_file(out / "index.html"));
  EXPECT_TRUE(fs::is_symlink(out / "stranger.png")) << "not listed in the marker: not the report's to remove";
  EXPECT_EQ(read_all(out / "extra.txt"), "mine\n");
  expect_no_temporaries(out);
}

// The plotter writes its PNGs and plots.json the same way: never through a
// link, and a figure id it does not know is reported, not a crash.
TEST(ReportPlot, NeverWritesThroughALinkAndSkipsUnknownFigures) {
  if (!have_matplotlib()) GTEST_SKIP() << "/usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib)";
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory(tmp.path())) << tmp.path();
  const Victim victim(tmp.path());
  const fs::path out = tmp.path() / "report";
  victim.link_from(out, {"fib_ms.png", "plots.json"});
  const nlohmann::json results = {
      {"registry",
       // fib_ms has a drawer; the generic bars are drawn from the rows' metric
       // and skipped (with the reason) for a metric no row has.
       {{{"name", "fib"}, {"article", nullptr}, {"title", "fib"}, {"summary", ""},
         {"figures", {"fib_ms", "bars:ms", "bars:no_such_metric"}}},
        {{"name", "later"}, {"article", nullptr}, {"title", "later"}, {"summary", ""}, {"figures", {"no_such_figure"}}}}},
      {"published", nlohmann::json::object()},
      {"experiments",
       {{{"experiment", "fib"},
         {"params", {{"n", 20}}},
         {"results",
          {{{"variant", "serial"}, {"metric", "ms"}, {"measured", true}, {"median", 2.0}, {"min", 1.5}, {"max", 3.0}},
           {{"variant", "weft"}, {"threads", 2}, {"metric", "ms"}, {"measured", true}, {"median", 1.0},
            {"min", 0.9}, {"max", 1.2}}}}}}}};
  std::ofstream(tmp.path() / "results.json") << results.dump();

  const CliRun r = run_process({"/usr/bin/python3", WEFT_PLOT_SCRIPT, (tmp.path() / "results.json").string(),
                                 out.string()});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_TRUE(victim.untouched()) << "the plotter wrote through a link";
  ASSERT_TRUE(is_plain_file(out / "fib_ms.png"));
  EXPECT_EQ(read_all(out / "fib_ms.png").substr(1, 3), "PNG");
  ASSERT_TRUE(is_plain_file(out / "plots.json"));
  const nlohmann::json manifest = nlohmann::json::parse(read_all(out / "plots.json"));
  ASSERT_EQ(manifest.at("drawn").size(), 2U) << manifest.dump(1);
  EXPECT_EQ(manifest["drawn"][0].value("section", std::string()), "weft-own");
  EXPECT_EQ(manifest["drawn"][1].value("file", std::string()), "fib_bars_ms.png") << "bars:ms of fib";
  ASSERT_TRUE(is_plain_file(out / "fib_bars_ms.png"));
  EXPECT_EQ(read_all(out / "fib_bars_ms.png").substr(1, 3), "PNG");
  ASSERT_EQ(manifest.at("skipped").size(), 2U) << manifest.dump(1);
  EXPECT_EQ(manifest["skipped"][1].value("figure", std::string()), "no_such_figure");
  EXPECT_TRUE(contains(manifest["skipped"][1].value("reason", std::string()), "no_such_figure"));
  EXPECT_EQ(manifest["skipped"][0].value("figure", std::string()), "bars:no_such_metric");
  EXPECT_TRUE(contains(manifest["skipped"][0].value("reason", std::string()), "no measured no_such_metric rows"))
      << manifest.dump(1);
  expect_no_temporaries(out);
}

// The page is built from the registry in results.json: sections, their
// order, headings and claims come from it and from "published", not from a
// list in the page code.
nlohmann::json row(const std::string& variant, const std::string& metric, double median, int threads = 0) {
  nlohmann::json r = {{"variant", variant}, {"metric", metric}, {"measured", true},
                      {"median", median},   {"min", median},  {"max", median}};
  if (threads > 0) r["threads"] = threads;
  return r;
}

nlohmann::json hand_made_results() {
  using nlohmann::json;
  const auto entry = [](const std::string& name, const json& article, const json& figures) {
    return json{{"name", name},   {"article", article}, {"title", name + " title"}, {"summary", name + " summary"},
                {"seconds", {{"quick", 1}, {"default", 2}, {"full", 3}}}, {"figures", figures}};
  };
  json results;
  results["registry"] = {entry("idle", nullptr, {"idle_cpu", "idle_latency"}),
                         entry("ring", "000_ring_latency", {"ring"}), entry("smt", "002_affinity_smt", json::array())};
  results["published"] = {
      {"000_ring_latency",
       {{"title", "Ring <title>"},
        {"claim", "Ring claim & more"},
        {"columns", {"threads", "condvar", "atomic_seq_cst", "release"}},
        {"ns_per_hop", {{2, 4321, 50, 40}}}}},
      {"002_affinity_smt", {{"title", "SMT title"}, {"claim", "SMT claim"}}},
      {"001_async_vs_pool", {{"title", "Not in this registry"}, {"claim", "never shown"}}}};
  results["experiments"] = {
      {{"experiment", "ring"}, {"results", {row("condvar", "ns_per_hop", 3000, 2)}}},
      {{"experiment", "smt"}, {"results", json::array()}},
      {{"experiment", "idle"},
       {"results",
        {row("weft", "cpu_ms_tick_2s", 1500), row("weft", "cpu_ms_tick_pool_2s", 500),
         row("weft", "start_latency_us", 0.25), row("weft", "start_latency_p99_us", 3.5), row("tbb", "cpu_ms_tick_2s", 40),
         row("tbb", "cpu_ms_tick_pool_2s", 30), row("tbb", "start_latency_us", 17)}}},
      {{"experiment", "stray"}, {"results", json::array()}}};
  results["defaults"] = {{"default_spin_ns", 12000}, {"calibration", {{"wake_ns", 11000}}}};
  return results;
}

TEST(ReportPage, SectionsComeFromTheRegistryAndPublished) {
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory(tmp.path())) << tmp.path();
  std::ofstream(tmp.path() / "ring_2_threads.png", std::ios::binary) << "\x89PNG fake";
  weft::cli::PlotOutcome plots;
  plots.drawn = true;
  plots.manifest = {
      {"drawn",
       {{{"figure", "ring"}, {"file", "ring_2_threads.png"}, {"title", "Ring figure"}, {"section", "000_ring_latency"}}}},
      {"skipped",
       {{{"figure", "idle_latency"}, {"file", ""}, {"title", "idle_latency"}, {"section", "weft-own"},
         {"reason", "no such figure here"}}}}};
  const std::string html = weft::cli::render_report_html(hand_made_results(), plots, tmp.path().string());

  const auto at = [&](const std::string& what) { return html.find(what); };
  ASSERT_NE(at("id=\"article-000\""), std::string::npos);
  ASSERT_NE(at("id=\"article-002\""), std::string::npos);
  EXPECT_EQ(at("id=\"article-001\""), std::string::npos) << "an article the registry does not name has no section";
  EXPECT_EQ(at("never shown"), std::string::npos);
  EXPECT_LT(at("id=\"article-000\""), at("id=\"article-002\"")) << "registry order";
  EXPECT_TRUE(contains(html, "000 · Ring &lt;title&gt;")) << "heading from published, escaped";
  EXPECT_TRUE(contains(html, "Ring claim &amp; more"));
  EXPECT_TRUE(contains(html, "<td>4321</td>")) << "the article's figure read from results[\"published\"]";
  EXPECT_TRUE(contains(html, "weft ring: ring title"));
  EXPECT_TRUE(contains(html, "ring summary"));
  const std::size_t own = at("id=\"weft-own\"");
  ASSERT_NE(own, std::string::npos);
  EXPECT_LT(at("<code>ring_2_threads.png</code>"), at("id=\"article-002\"")) << "a figure sits in its article";
  EXPECT_GT(at("weft idle: idle title"), own) << "an experiment with no article is weft's own";
  EXPECT_GT(at("weft stray: experiment"), own) << "an experiment the registry does not name still shows";
  EXPECT_GT(at("no such figure here"), own) << "a skipped figure says why, in its section";
  // The idle trade, with this run's figures.
  EXPECT_TRUE(contains(html, "12.0 µs in effect")) << "the spin budget in effect";
  EXPECT_TRUE(contains(html, "wake-up costs 11.0 µs"));
  EXPECT_TRUE(contains(html, "0.25 µs after they were posted (median; p99 3.50 µs): under a wake-up"));
  EXPECT_TRUE(contains(html, "tbb 17.0"));
  EXPECT_TRUE(contains(html, "weft's process burnt 1500 ms of CPU per 2 s, the other pools' (ms) tbb 40.0"));
  EXPECT_TRUE(contains(html, "weft's own threads 500 ms, the other pools' (ms) tbb 30.0"));
}

TEST(ReportQuick, BadOptionsExitWithStatus2) {
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory(tmp.path())) << tmp.path();
  const std::string out = (tmp.path() / "r").string();
  CliRun r = run_cli("report --quick --full --out " + out);
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_TRUE(contains(r.err, "--quick and --full")) << r;
  r = run_cli("report --only nosuch --out " + out);
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_TRUE(contains(r.err, "nosuch")) << r;
  EXPECT_FALSE(fs::exists(out)) << "nothing is created for bad input";
}

TEST(ReportQuick, PageRendersInHeadlessChromium) {
  if (access("/usr/bin/chromium", X_OK) != 0)
    GTEST_SKIP() << "chromium not installed (apt-get install chromium): the page is not rendered";
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory(tmp.path())) << tmp.path();
  const fs::path out = tmp.path() / "report";
  const CliRun r = run_cli("report --quick --only topo,c2c,smt --out " + out.string());
  ASSERT_EQ(r.status, 0) << r;
  const fs::path shot = tmp.path() / "shot.png";
  const fs::path profile = tmp.path() / "profile";
  const CliRun c = run_shell("timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu "
                         "--disable-background-networking --no-first-run --disable-component-update --disable-sync "
                         "--user-data-dir=" + profile.string() + " --screenshot=" + shot.string() +
                         " --window-size=1280,4000 file://" + fs::absolute(out / "index.html").string());
  const std::string png = read_all(shot);
  ASSERT_GT(png.size(), 20000U) << "no or tiny screenshot; chromium said:\n" << c;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace
