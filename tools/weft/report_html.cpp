#include "report_html.hpp"
#include "report_markdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <vector>

namespace weft::cli {

using nlohmann::json;

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto v = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16 |
                   static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                   static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    unsigned v = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) v |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += rest == 2 ? kAlphabet[v >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

namespace {

// Three significant figures at most, no exponent below a billion: the
// tables are read by people comparing orders of magnitude.
std::string num(double v) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e9) return fmt::format("{:.3g}", v);
  if (a >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 0.01) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

std::string num_or_dash(const std::optional<double>& v) { return v ? num(*v) : "—"; }

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return num(v.get<double>());
  if (v.is_null()) return "—";
  return v.dump();
}

// A pointer into `results` (not into a copy: value() would return one).
const json* experiment(const json& results, const std::string& name) {
  const auto all = results.find("experiments");
  if (all == results.end() || !all->is_array()) return nullptr;
  for (const auto& e : *all)
    if (e.value("experiment", std::string()) == name) return &e;
  return nullptr;
}

bool usable(const json* e) { return e != nullptr && e->value("built", true) && !e->contains("error"); }

// The median of the one measured row matching variant, metric and the
// given fields (threads, workload, granularity, ...).
std::optional<double> median(const json* e, const std::string& variant, const std::string& metric,
                             const json& match = json::object()) {
  if (!usable(e)) return std::nullopt;
  for (const auto& r : e->value("results", json::array())) {
    if (r.value("variant", std::string()) != variant || r.value("metric", std::string()) != metric) continue;
    if (!r.value("measured", false) || !r["median"].is_number()) continue;
    bool ok = true;
    for (auto it = match.begin(); it != match.end(); ++it)
      if (!r.contains(it.key()) || r[it.key()] != it.value()) ok = false;
    if (ok) return r["median"].get<double>();
  }
  return std::nullopt;
}

// The worker counts ("threads") of e's rows, and `also`, ascending and each
// once; only rows of `metric`, unless it is empty. Just `also` when e is
// not usable.
std::vector<int> thread_counts(const json* e, const std::string& metric, std::initializer_list<int> also = {}) {
  std::vector<int> out(also);
  if (usable(e))
    for (const auto& r : e->value("results", json::array()))
      if ((metric.empty() || r.value("metric", std::string()) == metric) && r.contains("threads"))
        out.push_back(r["threads"].get<int>());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string ratio_text(const std::optional<double>& num_v, const std::optional<double>& den_v) {
  if (!num_v || !den_v || *den_v == 0) return "—";
  return num(*num_v / *den_v) + "×";
}

// The article's published value at `path` (results["published"][key]...),
// as text; `absent` when the article does not state it.
std::string published_text(const json& article, std::initializer_list<std::string> path,
                           const std::string& absent = "—") {
  const json* at = &article;
  for (const auto& k : path) {
    if (!at->is_object() || !at->contains(k)) return absent;
    at = &(*at)[k];
  }
  return text_of(*at);
}

class Table {
 public:
  explicit Table(std::vector<std::string> head) : head_(std::move(head)) {}
  // Cells are escaped here.
  void row(const std::vector<std::string>& cells) { rows_.push_back(cells); }
  [[nodiscard]] bool empty() const { return rows_.empty(); }
  [[nodiscard]] std::string html() const {
    std::string s = "<table>";
    if (std::any_of(head_.begin(), head_.end(), [](const std::string& h) { return !h.empty(); })) {
      s += "<thead><tr>";
      for (const auto& h : head_) s += "<th>" + html_escape(h) + "</th>";
      s += "</tr></thead>";
    }
    s += "<tbody>\n";
    for (const auto& r : rows_) {
      s += "<tr>";
      for (const auto& c : r) s += "<td>" + html_escape(c) + "</td>";
      s += "</tr>\n";
    }
    return s + "</tbody></table>\n";
  }

 private:
  std::vector<std::string> head_;
  std::vector<std::vector<std::string>> rows_;
};

constexpr const char* kCss = R"(
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d232a;max-width:1100px;margin:0 auto;padding:1.5em}
h1{margin-bottom:.1em}h2{border-bottom:2px solid #d0d7de;padding-bottom:.2em;margin-top:2em}
h3{margin-top:1.5em}nav a{margin-right:1em}.meta{color:#57606a}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td:not(:first-child){font-variant-numeric:tabular-nums}
.claim{background:#f6f8fa;border-left:4px solid #0969da;padding:.6em 1em}
.warn{background:#fff8c5;border-left:4px solid #bf8700;padding:.5em 1em}
.skipped{color:#9a6700}figure{margin:1em 0}figure img{max-width:100%;border:1px solid #d0d7de}
figcaption{color:#57606a;font-size:13px}details{margin:.5em 0}summary{cursor:pointer;color:#0969da}
code{background:#f6f8fa;padding:0 .3em;border-radius:3px}ul.notes{color:#57606a;font-size:13px}
)";

struct Page {
  const json& results;
  const PlotOutcome& plots;
  std::string dir;
  std::string html;

  void add(const std::string& s) { html += s; }

  // The figures of a section, embedded; skipped ones say why.
  void figures(const std::string& section) {
    if (!plots.drawn) {
      add("<p class=\"skipped\">plots not drawn: " + html_escape(plots.failure) + "</p>\n");
      return;
    }
    for (const auto& d : plots.manifest.value("drawn", json::array())) {
      if (d.value("section", std::string()) != section) continue;
      const std::string file = d.value("file", std::string());
      std::ifstream in(dir + "/" + file, std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      if (!in || bytes.str().empty()) {
        add("<p class=\"skipped\">Figure " + html_escape(file) + " could not be read.</p>\n");
        continue;
      }
      add(fmt::format("<figure><img src=\"data:image/png;base64,{}\" alt=\"{}\"><figcaption><b>{}</b> {} "
                      "<code>{}</code></figcaption></figure>\n",
                      base64(bytes.str()), html_escape(d.value("title", file)), html_escape(d.value("title", file)),
                      html_escape(d.value("caption", std::string())), html_escape(file)));
    }
    for (const auto& s : plots.manifest.value("skipped", json::array())) {
      if (s.value("section", std::string()) != section) continue;
      add("<p class=\"skipped\">Figure “" + html_escape(s.value("title", std::string())) +
          "” not drawn: " + html_escape(s.value("reason", std::string())) + "</p>\n");
    }
  }

  // An experiment's own block: what the registry says of it, status,
  // parameters, notes, targets and the full table of rows (folded when long).
  void experiment_block(const std::string& name, const json& entry) {
    const json* e = experiment(results, name);
    add("<h3 id=\"xp-" + html_escape(name) + "\">weft " + html_escape(name) + ": " +
        html_escape(entry.value("title", std::string("experiment"))) + "</h3>\n");
    if (const std::string summary = entry.value("summary", std::string()); !summary.empty())
      add("<p>" + html_escape(summary) + "</p>\n");
    if (e == nullptr) {
      add("<p class=\"skipped\">not run in this report (see --only).</p>\n");
      return;
    }
    if (!e->value("built", true)) {
      add("<p class=\"skipped\">" + html_escape(name) + ": " + html_escape(e->value("note", std::string("not built yet"))) +
          ".</p>\n");
      return;
    }
    if (e->contains("error")) {
      add("<p class=\"warn\">failed: " + html_escape(text_of((*e)["error"])) + "</p>\n");
      return;
    }
    std::string params;
    const json p = e->value("params", json::object());
    for (auto it = p.begin(); it != p.end(); ++it) {
      if (it.key() == "by_threads") continue;
      params += (params.empty() ? "" : "; ") + it.key() + " = " +
                (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
    }
    add(fmt::format("<p class=\"meta\">{:.1f} s. Parameters: {}</p>\n", e->value("seconds", 0.0),
                    html_escape(params.empty() ? "defaults" : params)));
    // The goals and ratios are the experiment's own (its registration
    // computes them, with each goal's verdict): a goal retired there is
    // gone from the page too.
    if (const json ratios = e->value("ratios", json::array()); !ratios.empty()) {
      Table t({"what", "this run", "goal", "verdict"});
      int met = 0, goals = 0;
      for (const auto& r : ratios) {
        const std::string v = verdict(r);
        goals += v != "–" ? 1 : 0;
        met += v == "met" ? 1 : 0;
        t.row({r.value("what", std::string()), text_of(r.value("value", json())), r.value("goal", std::string()), v});
      }
      add(goals == 0 ? std::string("<p>Ratios from this run (no goal among them):</p>\n")
                     : fmt::format("<p><b>Goals: {} of {} met</b> on this machine, from this run's medians:</p>\n",
                                   met, goals));
      add(t.html());
    }
    const json rows = e->value("results", json::array());
    if (!rows.empty()) {
      static const char* const kQualifiers[] = {"workload", "granularity", "mode", "cutoff"};
      std::vector<std::string> quals;
      for (const char* q : kQualifiers)
        if (std::any_of(rows.begin(), rows.end(), [&](const json& r) { return r.contains(q); })) quals.emplace_back(q);
      std::vector<std::string> head = {"variant"};
      head.insert(head.end(), quals.begin(), quals.end());
      for (const char* h : {"threads", "metric", "median", "min", "max", "unit", "reps", "note"}) head.emplace_back(h);
      Table t(head);
      for (const auto& r : rows) {
        std::vector<std::string> cells = {r.value("variant", std::string())};
        for (const auto& q : quals) cells.push_back(r.contains(q) ? text_of(r[q]) : "");
        cells.push_back(r.contains("threads") ? text_of(r["threads"]) : "");
        cells.push_back(r.value("metric", std::string()));
        for (const char* k : {"median", "min", "max"}) cells.push_back(r.contains(k) ? text_of(r[k]) : "—");
        cells.push_back(r.value("unit", std::string()));
        cells.push_back(r.contains("reps") ? text_of(r["reps"]) : "");
        cells.push_back(r.value("note", std::string()));
        t.row(cells);
      }
      add(fmt::format("<details{}><summary>All {} rows of weft {}</summary>\n", rows.size() <= 24 ? " open" : "",
                      rows.size(), html_escape(name)));
      add(t.html() + "</details>\n");
    }
    const json notes = e->value("notes", json::array());
    if (!notes.empty()) {
      add("<ul class=\"notes\">");
      for (const auto& n : notes) add("<li>" + html_escape(text_of(n)) + "</li>");
      add("</ul>\n");
    }
  }
};

// ---- article 000: the token ring ------------------------------------------

void compare_ring(Page& pg, const json& article) {
  const json* ring = experiment(pg.results, "ring");
  const json* c2c = experiment(pg.results, "c2c");
  const auto published_ns = [&](int threads, const std::string& column) -> std::optional<double> {
    const json cols = article.value("columns", json::array());
    for (const auto& row : article.value("ns_per_hop", json::array())) {
      if (row.empty() || row[0] != threads) continue;
      for (std::size_t i = 1; i < cols.size() && i < row.size(); ++i)
        if (cols[i] == column && row[i].is_number()) return row[i].get<double>();
    }
    return std::nullopt;
  };
  Table t({"threads", "flag", "article ns/hop", "here: ns/hop", "here: CPU ns/hop", "note"});
  static const std::pair<const char*, const char*> kFlags[] = {
      {"condvar", "condvar"}, {"seq_cst", "atomic_seq_cst"}, {"release", "release"}, {"pause", ""},
      {"atomic_wait", ""},    {"futex", ""},                 {"weft", ""}};
  for (const int threads : {2, 3}) {
    for (const auto& [flag, column] : kFlags) {
      const json match = {{"threads", threads}};
      std::string note;
      if (usable(ring))
        for (const auto& r : ring->value("results", json::array()))
          if (r.value("variant", std::string()) == flag && r.value("threads", 0) == threads &&
              r.value("metric", std::string()) == "ns_per_hop")
            note = r.value("note", std::string());
      t.row({std::to_string(threads), flag, num_or_dash(*column ? published_ns(threads, column) : std::nullopt),
             num_or_dash(median(ring, flag, "ns_per_hop", match)), num_or_dash(median(ring, flag, "cpu_ns_per_hop", match)),
             note});
    }
  }
  pg.add("<h3>The article's figures beside this machine's</h3>\n<p class=\"meta\">The article's machine: " +
         html_escape(published_text(article, {"machine"})) + ".</p>\n" + t.html());
  const auto sc = median(ring, "seq_cst", "ns_per_hop", {{"threads", 2}});
  const auto rel = median(ring, "release", "ns_per_hop", {{"threads", 2}});
  const auto pub_sc = published_ns(2, "atomic_seq_cst");
  const auto pub_rel = published_ns(2, "release");
  if (sc && rel && *sc > 0)
    pg.add(fmt::format("<p>Release stores vs seq_cst at 2 threads: the article claims ~{}% lower latency "
                       "(its table: {}); here {:.0f}% {}.</p>\n",
                       html_escape(published_text(article, {"release_lower_latency_claimed_percent"})),
                       pub_sc && pub_rel && *pub_sc > 0 ? fmt::format("{:.0f}%", (1 - *pub_rel / *pub_sc) * 100) : "—",
                       std::fabs(1 - *rel / *sc) * 100, *rel <= *sc ? "lower" : "higher"));
  if (const auto one_way = median(c2c, "one_way", "ns_one_way"))
    pg.add(fmt::format("<p>Core-to-core one-way latency here: {} ns (median over CPU pairs); the article: ~{} ns "
                       "on one core, ~{} ns across cores.</p>\n",
                       num(*one_way), html_escape(published_text(article, {"core_to_core_ns", "same core"})),
                       html_escape(published_text(article, {"core_to_core_ns", "across cores"}))));
}

// ---- article 001: tasks ---------------------------------------------------

void compare_tasks(Page& pg, const json& article) {
  const json* tasks = experiment(pg.results, "tasks");
  const json pub = article.value("tasks_per_s", json());
  Table t({"variant", "workers", "article tasks/s", "here: tasks/s"});
  for (const char* v : {"sync", "std-deferred", "std-async"}) {
    const std::optional<double> a =
        pub.is_object() && pub.contains(v) && pub[v].is_number() ? std::optional<double>(pub[v].get<double>())
                                                                  : std::nullopt;
    t.row({v, "", num_or_dash(a), num_or_dash(median(tasks, v, "tasks_per_s"))});
  }
  const std::vector<int> workers = thread_counts(tasks, "", {1, 2, 4, 8, 16});
  for (const char* v : {"article-pool", "article-pool-future", "weft-post", "weft-submit-get-remote"}) {
    for (const int w : workers) {
      std::optional<double> a;
      if (pub.is_object() && pub.contains(v) && pub[v].is_object() && pub[v].contains(std::to_string(w)))
        a = pub[v][std::to_string(w)].get<double>();
      const auto here = median(tasks, v, "tasks_per_s", {{"threads", w}});
      if (a || here) t.row({v, std::to_string(w), num_or_dash(a), num_or_dash(here)});
    }
  }
  pg.add("<h3>The article's figures beside this machine's</h3>\n<p class=\"meta\">The article's machine: " +
         html_escape(published_text(article, {"machine"})) + ".</p>\n" + t.html());
}

// ---- article 002: SMT -----------------------------------------------------

void compare_smt(Page& pg, const json& article) {
  const json* smt = experiment(pg.results, "smt");
  Table t({"workload", "two threads on", "article", "here: slowdown vs one thread"});
  const char* const workloads[] = {"sum", "sin"};
  const char* const places[] = {"two-cores", "smt-siblings", "same-cpu"};
  for (int w = 0; w < 2; ++w) {
    for (int p = 0; p < 3; ++p) {
      const auto here = median(smt, places[p], "slowdown", {{"workload", workloads[w]}});
      std::string text = here ? num(*here) + "×" : "not measured";
      if (!here && usable(smt))
        for (const auto& r : smt->value("results", json::array()))
          if (r.value("variant", std::string()) == places[p] && r.value("workload", std::string()) == workloads[w] &&
              r.contains("note"))
            text = r["note"].get<std::string>();
      // The article ran no two threads on one CPU: time-sharing it doubles each thread's time.
      t.row({workloads[w], places[p], published_text(article, {"slowdown", workloads[w], places[p]}, "— (expect 2×)"),
             text});
    }
  }
  pg.add("<h3>The article's figures beside this machine's</h3>\n" + t.html());
}

// ---- article 003: allocator and file I/O ----------------------------------

void compare_ders(Page& pg, const json& article) {
  const json* alloc = experiment(pg.results, "alloc");
  const json* io = experiment(pg.results, "io");
  Table t({"figure", "threads", "article", "here"});
  const std::vector<int> threads = thread_counts(alloc, "seconds");
  for (const int n : threads)
    t.row({"std::allocator (glibc) time / per-thread allocator (weft) time", std::to_string(n),
           published_text(article, {"summary", "alloc_speedup", n == 1 ? "one thread" : "more threads"}),
           ratio_text(median(alloc, "glibc", "seconds", {{"threads", n}}), median(alloc, "weft", "seconds", {{"threads", n}}))});
  for (const int n : threads) {
    if (n < 2) continue;
    t.row({"scalability t(N)/t(1)/N, glibc", std::to_string(n), published_text(article, {"summary", "scalability", "std"}),
           num_or_dash(median(alloc, "glibc", "scalability", {{"threads", n}}))});
    t.row({"scalability t(N)/t(1)/N, weft", std::to_string(n), published_text(article, {"summary", "scalability", "ders"}),
           num_or_dash(median(alloc, "weft", "scalability", {{"threads", n}}))});
  }
  for (const int n : thread_counts(io, ""))
    t.row({"byte-by-byte copy: weft-bytes / fgetc+fputc", std::to_string(n),
           published_text(article, {"summary", "file_speedup", n == 1 ? "one thread" : "more threads"}),
           ratio_text(median(io, "weft-bytes", "mb_per_s", {{"threads", n}}), median(io, "fgetc", "mb_per_s", {{"threads", n}}))});
  pg.add("<h3>The article's figures beside this machine's</h3>\n" + t.html());
}

// ---- article 004: sleep loops ---------------------------------------------

void compare_spin(Page& pg, const json& article) {
  const json* spin = experiment(pg.results, "spin");
  Table t({"threads", "granularity", "article: pause backoff speed-up over busy", "here: busy ms", "pause-backoff ms",
           "speed-up", "weft ms", "CPU s busy / pause-backoff"});
  std::vector<std::pair<int, std::string>> keys;
  if (usable(spin))
    for (const auto& r : spin->value("results", json::array()))
      if (r.value("metric", std::string()) == "wall_ms" && r.contains("threads")) {
        const std::pair<int, std::string> k{r["threads"].get<int>(), r.value("granularity", std::string())};
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      }
  for (const auto& [n, g] : keys) {
    const json match = {{"threads", n}, {"granularity", g}};
    const auto busy = median(spin, "busy", "wall_ms", match);
    const auto pause = median(spin, "pause-backoff", "wall_ms", match);
    const std::string cpu = ratio_text(median(spin, "busy", "cpu_s", match), median(spin, "pause-backoff", "cpu_s", match));
    t.row({std::to_string(n), g, published_text(article, {"pause_backoff_speedup_over_busy", std::to_string(n)}),
           num_or_dash(busy),
           num_or_dash(pause), ratio_text(busy, pause), num_or_dash(median(spin, "weft", "wall_ms", match)), cpu});
  }
  pg.add("<h3>The article's figures beside this machine's</h3>\n" + t.html() + "<p>The article also reports " +
         html_escape(published_text(article, {"power_saving_w"})) +
         " W less power; weft reports CPU seconds as the power proxy (and energy where /sys/class/powercap is "
         "readable).</p>\n");
}

// ---- weft's own: the idle trade --------------------------------------------

// What weft trades for a short post-to-start latency, with this run's
// figures: idle workers spin for the measured budget before parking.
void explain_idle(Page& pg) {
  const json* idle = experiment(pg.results, "idle");
  if (!usable(idle)) return;
  const json d = pg.results.value("defaults", json::object());
  std::vector<std::string> pools;
  for (const auto& r : idle->value("results", json::array()))
    if (const std::string v = r.value("variant", std::string()); std::find(pools.begin(), pools.end(), v) == pools.end())
      pools.push_back(v);
  Table t({"pool", "CPU ms, idle 1 s", "CPU ms, one task per ms for 2 s", "of which the pool's threads",
           "of which the posting thread", "post-to-start µs (median)", "post-to-start µs (p99)"});
  for (const auto& v : pools)
    t.row({v, num_or_dash(median(idle, v, "cpu_ms_idle_1s")), num_or_dash(median(idle, v, "cpu_ms_tick_2s")),
           num_or_dash(median(idle, v, "cpu_ms_tick_pool_2s")), num_or_dash(median(idle, v, "cpu_ms_tick_poster_2s")),
           num_or_dash(median(idle, v, "start_latency_us")), num_or_dash(median(idle, v, "start_latency_p99_us"))});
  // Each other pool's figure beside weft's: "tbb 8.0, asio-post 15.0".
  const auto others = [&](const std::string& metric) {
    std::string list;
    for (const auto& v : pools)
      if (v != "weft" && v != "baseline")
        if (const auto x = median(idle, v, metric)) list += (list.empty() ? "" : ", ") + v + " " + num(*x);
    return list.empty() ? std::string("no other pool measured") : list;
  };
  const double wake_us = d.value("calibration", json::object()).value("wake_ns", 0.0) / 1e3;
  std::string text = fmt::format(
      "<p><b>The trade weft makes.</b> Its idle workers spin for a measured budget ({} µs in effect here) before "
      "they park. Ski rental: spinning longer than a park+wake round trip cannot pay, so the budget is that round "
      "trip and no more. A futex wake-up costs {} µs here (median of <code>weft::calibrate()</code>), and a task "
      "that arrives while a worker still spins does not pay it.",
      num(d.value("default_spin_ns", 0.0) / 1e3), num(wake_us));
  if (const auto lat = median(idle, "weft", "start_latency_us"))
    text += fmt::format(" With one task per millisecond, weft started tasks {} µs after they were posted (median; "
                        "p99 {} µs){}; the other pools took (median µs) {}.",
                        num(*lat), num_or_dash(median(idle, "weft", "start_latency_p99_us")),
                        *lat < wake_us ? ": under a wake-up, so a spinning worker caught them"
                                       : ", no faster than a wake-up: in this run its workers had parked or had no "
                                         "CPU when the tasks came (a loaded machine, or more threads than CPUs)",
                        others("start_latency_us"));
  else
    text += " This run has no post-to-start latency rows.";
  if (const auto cpu = median(idle, "weft", "cpu_ms_tick_2s"))
    text += fmt::format(" The cost is CPU: at that rate weft's process burnt {} ms of CPU per 2 s, the other pools' "
                        "(ms) {}; weft's own threads {} ms, the other pools' (ms) {} (the process less the posting "
                        "thread, in the same run: the posting thread's CPU varies by a third from run to run on a "
                        "VM, more than a pool's threads cost); idle for 1 s, weft burnt {} ms.",
                        num(*cpu), others("cpu_ms_tick_2s"), num_or_dash(median(idle, "weft", "cpu_ms_tick_pool_2s")),
                        others("cpu_ms_tick_pool_2s"), num_or_dash(median(idle, "weft", "cpu_ms_idle_1s")));
  pg.add(text + "</p>\n" + t.html());
}

// ---- weft's own: the parallel algorithms -----------------------------------

// The worker count a table of one count shows: 2 where the run measured it
// (or its params name no counts), else the first it measured. plot.py's
// figures pick the same, so a table and its figure agree.
int shown_workers(const json& params) {
  const json workers = params.value("workers", json::array());
  const bool has_two = std::find(workers.begin(), workers.end(), json(2)) != workers.end();
  return has_two || workers.empty() ? 2 : workers.front().get<int>();
}

// The algorithms' times per workload at one worker count (the goals are
// in the experiment's block, from its ratios).
void explain_algo(Page& pg) {
  const json* algo = experiment(pg.results, "algo");
  if (!usable(algo)) return;
  const json params = algo->value("params", json::object());
  const int t = shown_workers(params);
  const auto ms = [&](const std::string& variant, const std::string& w) {
    return variant == "serial" ? median(algo, variant, "ms", {{"workload", w}})
                               : median(algo, variant, "ms", {{"workload", w}, {"threads", t}});
  };
  Table table({"workload", "serial ms", "std-par ms", "tbb ms", "tbb-deterministic ms", "openmp ms", "weft ms",
               "weft / tbb", "weft / std-par", "weft / openmp", "weft speed-up"});
  for (const auto& wj : params.value("workloads", json::array())) {
    const std::string w = wj.get<std::string>();
    const auto weft_ms = ms("weft", w);
    table.row({w, num_or_dash(ms("serial", w)), num_or_dash(ms("std-par", w)), num_or_dash(ms("tbb", w)),
               num_or_dash(ms("tbb-deterministic", w)), num_or_dash(ms("openmp", w)), num_or_dash(weft_ms),
               ratio_text(weft_ms, ms("tbb", w)), ratio_text(weft_ms, ms("std-par", w)),
               ratio_text(weft_ms, ms("openmp", w)), ratio_text(ms("serial", w), weft_ms)});
  }
  std::string det;
  for (const auto& r : algo->value("results", json::array()))
    if (r.value("metric", std::string()) == "deterministic" && r.value("measured", false))
      det += fmt::format("{}{} {}: {}", det.empty() ? "" : "; ", r.value("variant", std::string()),
                         r.value("workload", std::string()), r.value("note", std::string()));
  pg.add(fmt::format("<p><b>Times at {} workers</b> (medians of this run; its goals, where this run checked "
                     "any, are in the table above).{}</p>\n",
                     t, det.empty() ? std::string() : " One bit pattern per reduction? " + html_escape(det)) +
         table.html());
}

// ---- weft's own: coroutines and async composition ---------------------------

// Each workload's medians per variant at one worker count (the goals are
// in the experiment's block, from its ratios).
void explain_coro(Page& pg) {
  const json* coro = experiment(pg.results, "coro");
  if (!usable(coro)) return;
  const json params = coro->value("params", json::object());
  const int t = shown_workers(params);
  static const std::pair<const char*, const char*> kMetrics[] = {
      {"fib", "ns_per_spawn"}, {"hop", "ns_per_hop"}, {"fan-in", "us_per_fan_in"}, {"cancel", "cancel_ms"}};
  // The variants this run chose, in the experiment's order (its params).
  std::vector<std::string> variants;
  for (const auto& v : params.value("variants", json::array())) variants.push_back(v.get<std::string>());
  std::vector<std::string> head{"workload", "metric"};
  head.insert(head.end(), variants.begin(), variants.end());
  Table table(head);
  for (const auto& [w, metric] : kMetrics) {
    std::vector<std::string> cells{w, metric};
    bool any = false;
    for (const std::string& v : variants) {
      const auto m = median(coro, v, metric, {{"workload", w}, {"threads", t}});
      any = any || m.has_value();
      cells.push_back(num_or_dash(m));
    }
    if (any) table.row(cells);
  }
  const std::string text = fmt::format(
      "<p><b>Medians at {} workers</b> (its goals, where this run checked any, are in the table above).</p>\n", t);
  pg.add(text + "<p>Each row's note in the JSON says where its tasks ran (how many threads, and how much on the "
                "thread that started them) and, for the hop, what one hop is in each library.</p>\n" +
         table.html());
}

// ---- weft's own: scaling ----------------------------------------------------

// Speed-up per workload and worker count, weft beside oneTBB (the goals
// are in the experiment's block, from its ratios).
void explain_scale(Page& pg) {
  const json* scale = experiment(pg.results, "scale");
  if (!usable(scale)) return;
  const json params = scale->value("params", json::object());
  const int cpus = params.value("cpus", 0);
  Table t({"workload", "workers", "weft ms", "weft speed-up", "tbb ms", "tbb speed-up", "weft / tbb"});
  for (const auto& wj : params.value("workloads", json::array())) {
    const std::string w = wj.get<std::string>();
    for (const auto& tj : params.value("workers", json::array())) {
      const int n = tj.get<int>();
      const json at = {{"workload", w}, {"threads", n}};
      const auto weft_ms = median(scale, "weft", "ms", at);
      const auto tbb_ms = median(scale, "tbb", "ms", at);
      t.row({w, n > cpus ? fmt::format("{} (> {} CPUs)", n, cpus) : std::to_string(n), num_or_dash(weft_ms),
             num_or_dash(median(scale, "weft", "speedup", at)), num_or_dash(tbb_ms),
             num_or_dash(median(scale, "tbb", "speedup", at)), ratio_text(weft_ms, tbb_ms)});
    }
  }
  pg.add(fmt::format("<p><b>Scaling on {} allowed CPUs.</b> Speed-up is a variant's 1-worker time over its time at "
                     "that count, paired by round; past the CPUs it measures how gracefully the pool shares them, "
                     "not speed; its goals, where this run checked any, are in the table above.</p>\n",
                     cpus) +
         t.html());
}

// ---- sections ---------------------------------------------------------------

using Compare = void (*)(Page&, const json&);

// The comparison particular to each article, by its key in published.json.
Compare compare_for(const std::string& article) {
  static const std::pair<const char*, Compare> kCompare[] = {{"000_ring_latency", compare_ring},
                                                             {"001_async_vs_pool", compare_tasks},
                                                             {"002_affinity_smt", compare_smt},
                                                             {"003_ders", compare_ders},
                                                             {"004_sleep_loops", compare_spin}};
  for (const auto& [key, compare] : kCompare)
    if (article == key) return compare;
  return nullptr;
}

// What the page adds under one experiment's block, by experiment name.
void explain(Page& pg, const std::string& name) {
  if (name == "idle") explain_idle(pg);
  if (name == "algo") explain_algo(pg);
  if (name == "coro") explain_coro(pg);
  if (name == "scale") explain_scale(pg);
}

// "000_ring_latency" -> "000": the article's number, its anchor on the page.
std::string article_id(const std::string& key) { return key.substr(0, key.find('_')); }

// The registry's entries grouped by article, in registry order; entries
// with no article are weft's own.
struct Sections {
  std::vector<std::pair<std::string, std::vector<json>>> articles;
  std::vector<json> own;
};

Sections sections_of(const json& results) {
  Sections s;
  const json registry = results.value("registry", json::array());
  for (const auto& e : registry) {
    const json article = e.value("article", json());
    if (!article.is_string()) {
      s.own.push_back(e);
      continue;
    }
    const std::string key = article.get<std::string>();
    auto it = std::find_if(s.articles.begin(), s.articles.end(), [&](const auto& a) { return a.first == key; });
    if (it == s.articles.end()) it = s.articles.insert(s.articles.end(), {key, {}});
    it->second.push_back(e);
  }
  // Experiments the registry does not name (an older results.json) still show.
  for (const auto& x : results.value("experiments", json::array())) {
    const std::string name = x.value("experiment", std::string());
    if (std::none_of(registry.begin(), registry.end(), [&](const json& e) { return e.value("name", std::string()) == name; }))
      s.own.push_back({{"name", name}});
  }
  return s;
}

void machine_section(Page& pg) {
  const json m = pg.results.value("machine", json::object());
  const json* topo = experiment(pg.results, "topo");
  pg.add("<section id=\"machine\"><h2>Machine</h2>\n");
  Table t({"", ""});
  t.row({"CPU", m.value("cpu_model", std::string("unknown"))});
  std::string allowed = m.value("allowed_cpus_list", std::string());
  if (m.contains("allowed_cpus")) allowed = fmt::format("{} ({})", m["allowed_cpus"].size(), allowed);
  t.row({"allowed CPUs", allowed});
  for (const char* k : {"cores", "packages", "numa_nodes", "available_parallelism"})
    if (m.contains(k)) t.row({k, text_of(m[k])});
  if (m.contains("smt")) t.row({"SMT", m["smt"].get<bool>() ? "yes" : "no"});
  if (usable(topo)) {
    std::string caches;
    for (const auto& c : topo->value("caches", json::array())) {
      const double kib = c.value("size_bytes", 0.0) / 1024;
      caches += fmt::format("{}L{}{} {} (CPUs {})", caches.empty() ? "" : ", ", c.value("level", 0),
                            c.value("type", std::string()) == "D" ? "d" : "",
                            kib >= 1024 ? num(kib / 1024) + " MiB" : num(kib) + " KiB", text_of(c.value("cpus", json())));
    }
    if (!caches.empty()) t.row({"caches", caches});
    if (topo->contains("cgroup_cpu_quota") && topo->value("cgroup_cpu_quota", 0.0) > 0)
      t.row({"cgroup CPU quota", num(topo->value("cgroup_cpu_quota", 0.0)) + " CPUs"});
  }
  for (const char* k : {"kernel", "compiler", "weft_version", "topology_source"})
    if (m.contains(k)) t.row({k, text_of(m[k])});
  pg.add(t.html());
  if (m.contains("topology_warning"))
    pg.add("<p class=\"warn\">" + html_escape(text_of(m["topology_warning"])) + "</p>\n");
  pg.add("</section>\n");
}

void defaults_section(Page& pg) {
  const json d = pg.results.value("defaults", json::object());
  const json c = d.value("calibration", json::object());
  const json* ring = experiment(pg.results, "ring");
  const json* c2c = experiment(pg.results, "c2c");
  const json* tasks = experiment(pg.results, "tasks");
  pg.add("<section id=\"defaults\"><h2>weft's defaults on this machine and why</h2>\n<h3>Spin budget</h3>\n");
  const double spin_us = d.value("default_spin_ns", 0.0) / 1e3;
  const double measured_us = c.value("spin_ns", 0.0) / 1e3;
  pg.add(fmt::format(
      "<p><code>weft::calibrate()</code> timed {} futex park→wake round trips here: one <code>pause</code> costs "
      "{} ns; a parked thread wakes {} µs (median; {}–{} µs) after the waker's call, which itself takes {} µs. It "
      "recommends a spin budget equal to the median wake-up: <b>{} µs</b>.</p>\n",
      c.value("samples", 0), num(c.value("pause_ns", 0.0)), num(c.value("wake_ns", 0.0) / 1e3),
      num(c.value("wake_min_ns", 0.0) / 1e3), num(c.value("wake_max_ns", 0.0) / 1e3), num(c.value("notify_ns", 0.0) / 1e3),
      num(measured_us)));
  const bool from_env = d.contains("spin_env") && d["spin_env"].is_string();
  pg.add(fmt::format(
      "<p>In effect: <code>WaitOptions::default_spin()</code> = <b>{} µs</b> ({}). Why: ski rental. Spinning as "
      "long as a park+wake costs, then parking, never pays more than twice what an oracle that knew each wait's "
      "length would; spinning longer cannot pay, and spinning much shorter turns short waits into sleeps that "
      "each cost a wake-up. Each thread also shrinks its own budget while its spins keep failing (more runnable "
      "threads than CPUs).</p>\n",
      num(spin_us),
      from_env ? "set by WEFT_SPIN_NS" : "the built-in default, measured on the 2-vCPU machine weft was developed on"));
  if (measured_us > 0 && (spin_us / measured_us > 2 || measured_us / spin_us > 2))
    pg.add(fmt::format("<p class=\"warn\">This machine's value is more than 2× away from the one in effect: "
                       "adopt it with <code>WEFT_SPIN_NS={:.0f}</code> or by calling "
                       "<code>weft::calibrate_default()</code> at start-up.</p>\n",
                       c.value("spin_ns", 0.0)));
  else if (measured_us > 0)
    pg.add("<p>The value in effect is within 2× of this machine's: nothing to change.</p>\n");
  const auto weft2 = median(ring, "weft", "ns_per_hop", {{"threads", 2}});
  const auto futex2 = median(ring, "futex", "ns_per_hop", {{"threads", 2}});
  const auto condvar2 = median(ring, "condvar", "ns_per_hop", {{"threads", 2}});
  const auto weft3 = median(ring, "weft", "ns_per_hop", {{"threads", 3}});
  const auto pause3 = median(ring, "pause", "ns_per_hop", {{"threads", 3}});
  if (weft2)
    pg.add(fmt::format("<p>The evidence in this report: at 2 threads the ring's weft flag takes {} ns per hop, a bare "
                       "futex {} ns and a condition variable {} ns; at 3 threads, with more threads than CPUs, weft "
                       "takes {} ns where a spin with no budget (pause) takes {} ns.</p>\n",
                       num(*weft2), num_or_dash(futex2), num_or_dash(condvar2), num_or_dash(weft3), num_or_dash(pause3)));

  pg.add("<h3>Worker count</h3>\n");
  const int ap = d.value("available_parallelism", 0);
  const double quota = d.value("cgroup_cpu_quota", 0.0);
  pg.add(fmt::format(
      "<p>Default pool size: <code>available_parallelism()</code> = <b>{}</b>: the CPUs this process may run on "
      "({} allowed{}). Why: one worker per CPU keeps every CPU busy without making workers queue for CPUs; with "
      "more, a waiting worker holds a CPU that the thread it waits for needs.",
      ap, d.value("allowed_cpus", 0), quota > 0 ? fmt::format(", cgroup quota {} CPUs", num(quota)) : std::string()));
  if (pause3 && usable(ring)) {
    const auto pause2 = median(ring, "pause", "ns_per_hop", {{"threads", 2}});
    pg.add(fmt::format(" The ring shows the extreme: a pure spin takes {} ns per hop with a thread per CPU and {} ns "
                       "with one thread too many.",
                       num_or_dash(pause2), num(*pause3)));
  }
  std::vector<int> workers;
  if (usable(tasks))
    for (const auto& r : tasks->value("results", json::array()))
      if (r.value("variant", std::string()) == "weft-post" && r.contains("threads")) workers.push_back(r["threads"]);
  if (!workers.empty()) {
    std::string list;
    for (const int w : workers)
      list += fmt::format("{}{} with {}", list.empty() ? "" : ", ", num_or_dash(median(tasks, "weft-post", "tasks_per_s", {{"threads", w}})), w);
    pg.add(" Tiny tasks through weft's pool here, tasks/s by worker count: " + html_escape(list) + ".");
  }
  pg.add("</p>\n<h3>Placement</h3>\n<p>Default: <b>none</b>: weft does not pin threads.");
  if (usable(c2c)) {
    double lo = 0;
    double hi = 0;
    bool first = true;
    for (const auto& row : c2c->value("matrix_ns", json::array()))
      for (const auto& v : row)
        if (v.is_number()) {
          lo = first ? v.get<double>() : std::min(lo, v.get<double>());
          hi = first ? v.get<double>() : std::max(hi, v.get<double>());
          first = false;
        }
    if (!first)
      pg.add(fmt::format(" Core-to-core latency here ranges {}–{} ns over CPU pairs: {}.", num(lo), num(hi),
                         hi <= 1.5 * lo ? "uniform, so where a thread runs changes little"
                                        : "not uniform, so placement (compact for chatty threads) can pay"));
  }
  pg.add(" Why: pinning pays only where latencies differ and the CPUs are yours. In a VM or a shared container "
         "the host moves the vCPUs anyway, and a pinned thread cannot leave a CPU another process is using. "
         "<code>Placement::compact</code>, <code>spread</code> and <code>one_per_core</code> are there for when "
         "measurements like the ones above show they pay.</p>\n</section>\n");
}

}  // namespace

std::string render_report_html(const json& results, const PlotOutcome& plots, const std::string& dir) {
  Page pg{results, plots, dir, {}};
  const json rep = results.value("report", json::object());
  const json m = results.value("machine", json::object());
  pg.add("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\">\n<title>weft report: " +
         html_escape(m.value("cpu_model", std::string("this machine"))) + "</title>\n<style>" + kCss +
         "</style></head><body>\n");
  pg.add(fmt::format("<header><h1>weft report</h1><p class=\"meta\">{} · {} sizes · measured in {:.0f} s · weft {}. "
                     "The raw data is in <code>results.json</code> beside this page.</p>\n",
                     html_escape(rep.value("started_utc", std::string())), html_escape(rep.value("level", std::string())),
                     rep.value("seconds", 0.0), html_escape(rep.value("weft_version", std::string()))));
  const Sections sections = sections_of(results);
  const json published = results.value("published", json::object());
  pg.add("<nav><a href=\"#machine\">Machine</a>");
  for (const auto& [key, entries] : sections.articles)
    pg.add(fmt::format("<a href=\"#article-{0}\">{0}</a>", html_escape(article_id(key))));
  pg.add("<a href=\"#weft-own\">Beyond the articles</a><a href=\"#defaults\">Defaults</a></nav></header>\n");
  if (!plots.drawn) pg.add("<p class=\"warn\">plots not drawn: " + html_escape(plots.failure) + "</p>\n");
  if (!results.contains("registry"))
    pg.add("<p class=\"warn\">This results.json has no experiment registry: its experiments are listed without "
           "their articles.</p>\n");

  machine_section(pg);
  for (const auto& [key, entries] : sections.articles) {
    const json article = published.value(key, json::object());
    const std::string id = article_id(key);
    pg.add(fmt::format("<section id=\"article-{}\"><h2>{} · {}</h2>\n", html_escape(id), html_escape(id),
                       html_escape(article.value("title", key))));
    if (article.contains("claim"))
      pg.add("<p class=\"claim\"><b>The article:</b> " + html_escape(text_of(article["claim"])) + "</p>\n");
    if (const Compare compare = compare_for(key)) compare(pg, article);
    pg.figures(key);
    for (const auto& e : entries) {
      const std::string name = e.value("name", std::string());
      pg.experiment_block(name, e);
      explain(pg, name);
    }
    pg.add("</section>\n");
  }
  pg.add("<section id=\"weft-own\"><h2>Beyond the articles: weft's own experiments</h2>\n");
  pg.figures("weft-own");
  for (const auto& e : sections.own) {
    const std::string name = e.value("name", std::string());
    pg.experiment_block(name, e);
    explain(pg, name);
  }
  pg.add("</section>\n");
  defaults_section(pg);
  pg.add("</body></html>\n");
  return pg.html;
}

}  // namespace weft::cli
