#include "weft/xp/result.hpp"

#include <sys/utsname.h>

#include <cstdlib>
#include <ctime>

#include "weft/exec/thread_pool.hpp"
#include "weft/topo/topology.hpp"

namespace weft::xp {

namespace detail {
extern const char* const kPublishedJson;
extern const char* const kWeftCommit;  // commit.cpp, cmake/CommitStamp.cmake
}

namespace {

template <class T>
void put(nlohmann::json& o, const char* key, const std::optional<T>& v) {
  if (v) o[key] = *v;
}

void add_labels(nlohmann::json& o, const Labels& l) {
  put(o, "mode", l.mode);
  put(o, "workload", l.workload);
  put(o, "granularity", l.granularity);
  put(o, "cutoff", l.cutoff);
  put(o, "tasks", l.tasks);
  put(o, "hops", l.hops);
  put(o, "items", l.items);
  put(o, "spawns", l.spawns);
  put(o, "item_us", l.item_us);
  put(o, "stopped_reps", l.stopped_reps);
  put(o, "work_fraction_min", l.work_fraction_min);
  put(o, "mean", l.mean);
  put(o, "pairs", l.pairs);
  put(o, "cpus", l.cpus);
}

template <class T, class U>
bool matches(const std::optional<T>& want, const std::optional<U>& have) {
  return !want || (have && *have == *want);
}

}  // namespace

const Row* find(const Result& r, const Key& k) {
  for (const Row& row : r.rows) {
    if (row.variant != k.variant || row.metric != k.metric) continue;
    if (k.threads && row.threads != *k.threads) continue;
    if (matches(k.mode_, row.labels.mode) && matches(k.workload_, row.labels.workload) &&
        matches(k.granularity_, row.labels.granularity) && matches(k.cutoff_, row.labels.cutoff))
      return &row;
  }
  return nullptr;
}

std::optional<double> median(const Result& r, const Key& key) {
  const Row* row = find(r, key);
  if (row == nullptr || !row->measured || row->stats.reps == 0) return std::nullopt;
  return row->stats.median;
}

std::optional<double> ratio(const Result& r, const Key& a, const Key& b) {
  const auto x = median(r, a);
  const auto y = median(r, b);
  if (!x || !y || *y == 0) return std::nullopt;
  return *x / *y;
}

std::optional<bool> goal_met(double value, std::string_view goal) {
  for (const std::string_view op : {">= ", "<= ", "> ", "< "}) {
    if (!goal.starts_with(op)) continue;
    const std::string bound(goal.substr(op.size()));
    char* end = nullptr;
    const double x = std::strtod(bound.c_str(), &end);
    if (end == bound.c_str() || *end != '\0') return std::nullopt;
    if (op == ">= ") return value >= x;
    if (op == "<= ") return value <= x;
    return op == "> " ? value > x : value < x;
  }
  return std::nullopt;
}

void add_ratio(nlohmann::json& ratios, const std::string& what, std::optional<double> value,
               const std::string& goal) {
  if (!value || *value <= 0) return;
  nlohmann::json r{{"what", what}, {"value", *value}, {"goal", goal}};
  if (const auto met = goal_met(*value, goal)) r["met"] = *met;
  ratios.push_back(std::move(r));
}

Row make_row(std::string variant, int threads, std::string metric, std::string unit, std::vector<double> samples,
             std::string why_not) {
  Row row;
  row.variant = std::move(variant);
  row.threads = threads;
  row.metric = std::move(metric);
  row.unit = std::move(unit);
  row.measured = why_not.empty();
  row.note = std::move(why_not);
  row.stats = summarize(std::move(samples));
  return row;
}

Row with_metric(Row base, std::string metric, std::string unit, std::vector<double> samples) {
  base.metric = std::move(metric);
  base.unit = std::move(unit);
  base.stats = summarize(std::move(samples));
  return base;
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json j;
  j["experiment"] = r.experiment;
  j["machine"] = machine_context();
  j["params"] = r.params;
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& row : r.rows) {
    nlohmann::json o;
    o["variant"] = row.variant;
    if (row.threads > 0) o["threads"] = row.threads;
    o["metric"] = row.metric;
    o["unit"] = row.unit;
    o["measured"] = row.measured;
    if (row.measured) {
      o["median"] = row.stats.median;
      o["min"] = row.stats.min;
      o["max"] = row.stats.max;
    } else {
      o["median"] = nullptr;
      o["min"] = nullptr;
      o["max"] = nullptr;
    }
    o["reps"] = row.stats.reps;
    if (!row.note.empty()) o["note"] = row.note;
    add_labels(o, row.labels);
    rows.push_back(std::move(o));
  }
  j["results"] = std::move(rows);
  j["published"] = r.published;
  j["notes"] = r.notes;
  for (auto it = r.extra.begin(); it != r.extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

nlohmann::json machine_context() {
  const Topology& topo = Topology::instance();
  nlohmann::json m;
  m["cpu_model"] = topo.cpu_model();
  m["allowed_cpus"] = topo.allowed().to_vector();
  m["allowed_cpus_list"] = topo.allowed().to_string();
  m["cores"] = topo.cores().size();
  m["packages"] = topo.packages().size();
  m["numa_nodes"] = topo.numa_nodes().size();
  m["smt"] = topo.smt();
  m["available_parallelism"] = available_parallelism();
  m["topology_source"] = topo.source();
  if (!topo.warning().empty()) m["topology_warning"] = topo.warning();
  utsname u{};
  if (uname(&u) == 0) m["kernel"] = std::string(u.sysname) + " " + u.release;
  m["compiler"] = WEFT_COMPILER;
  m["weft_version"] = WEFT_VERSION;
  m["weft_commit"] = detail::kWeftCommit;
  m["push_fences"] = ThreadPool::push_fences();
  return m;
}

const nlohmann::json& published_all() {
  static const nlohmann::json all = nlohmann::json::parse(detail::kPublishedJson);
  return all;
}

const nlohmann::json& published(const std::string& key) {
  static const nlohmann::json null_value = nullptr;
  const nlohmann::json& all = published_all();
  auto it = all.find(key);
  return it == all.end() ? null_value : *it;
}

}  // namespace weft::xp
