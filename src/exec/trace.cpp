#include "weft/exec/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pool_core.hpp"
#include "weft/error.hpp"

namespace weft {
namespace {

// The labels task_start events carry: interned once per distinct text for
// the process's life (a trace may be written after the graph that named
// its tasks is gone), looked up by index.
struct Labels {
  std::mutex mu;
  std::unordered_map<std::string, std::int32_t> ids;
  std::vector<const std::string*> texts;  // by label: the map's keys (node-based, so they stay put)
};
Labels& labels() {
  static Labels* l = new Labels;  // never destroyed: traces are written at exit
  return *l;
}

// "12.345": microseconds with nanosecond digits, in integers (a double
// would lose them after a few hours of steady_clock).
std::string micros(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  return buf;
}

const char* ring_name(StealRing r) noexcept {
  switch (r) {
    case StealRing::smt: return "smt";
    case StealRing::l2: return "l2";
    case StealRing::l3: return "l3";
    case StealRing::numa: return "numa";
    case StealRing::remote: return "remote";
  }
  return "unknown";
}

const char* instant_name(TraceKind k) noexcept {
  switch (k) {
    case TraceKind::steal: return "steal";
    case TraceKind::park: return "park";
    case TraceKind::wake: return "wake";
    case TraceKind::wake_sent: return "wake sent";
    case TraceKind::task_start:
    case TraceKind::task_end: break;
  }
  return "event";
}

class JsonEvents {
 public:
  explicit JsonEvents(std::ostream& out) : out_(out) {}
  // Starts the next event object with its common fields; the caller adds
  // the rest and the closing brace.
  std::ostream& begin(const char* ph, const char* name, std::uint64_t pid, int tid) {
    out_ << (first_ ? "\n" : ",\n") << R"({"ph":")" << ph << R"(","name":")" << name << R"(","pid":)" << pid
         << R"(,"tid":)" << tid;
    first_ = false;
    return out_;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

// A label's text as a JSON string's content.
std::string json_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

void write_worker(JsonEvents& json, std::uint64_t pid, const WorkerTrace& w, std::int64_t origin) {
  json.begin("M", "thread_name", pid, w.index) << R"(,"args":{"name":"worker )" << w.index << R"(","dropped":)"
                                               << w.dropped << "}}";
  // The tasks open on this worker, innermost last: start time and label.
  std::vector<std::pair<std::int64_t, std::int32_t>> running;
  for (const TraceEvent& e : w.events) {
    const std::int64_t ts = e.ns - origin;
    switch (e.kind) {
      case TraceKind::task_start:
        running.emplace_back(ts, e.peer);
        break;
      case TraceKind::task_end: {
        if (running.empty()) break;  // its start was overwritten
        const auto [start, label] = running.back();
        const std::string name = label < 0 ? "task" : json_escaped(trace_label(label));
        json.begin("X", name.c_str(), pid, w.index) << R"(,"ts":)" << micros(start) << R"(,"dur":)"
                                                    << micros(ts - start) << "}";
        running.pop_back();
        break;
      }
      case TraceKind::steal: {
        std::ostream& o = json.begin("i", "steal", pid, w.index)
                          << R"(,"s":"t","ts":)" << micros(ts) << R"(,"args":{"from":")";
        if (e.peer < 0) {
          o << R"(a submitter"}})";
        } else {
          o << "worker " << e.peer << R"(","ring":")" << ring_name(e.ring) << R"("}})";
        }
        break;
      }
      case TraceKind::park:
      case TraceKind::wake:
      case TraceKind::wake_sent:
        json.begin("i", instant_name(e.kind), pid, w.index) << R"(,"s":"t","ts":)" << micros(ts) << "}";
        break;
    }
  }
}

}  // namespace

std::string trace_label(std::int32_t label) {
  Labels& l = labels();
  std::lock_guard lock(l.mu);
  if (label < 0 || static_cast<std::size_t>(label) >= l.texts.size()) return {};
  return *l.texts[static_cast<std::size_t>(label)];
}

namespace detail {

std::int32_t intern_trace_label(const std::string& text) {
  Labels& l = labels();
  std::lock_guard lock(l.mu);
  const auto [it, added] = l.ids.try_emplace(text, static_cast<std::int32_t>(l.texts.size()));
  if (added) {
    try {
      l.texts.push_back(&it->first);
    } catch (...) {
      l.ids.erase(it);  // no label without its text
      throw;
    }
  }
  return it->second;
}

}  // namespace detail

void write_chrome_trace(std::ostream& out, const std::vector<PoolTrace>& pools) {
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const PoolTrace& p : pools)
    for (const WorkerTrace& w : p.workers)
      if (!w.events.empty()) origin = std::min(origin, w.events.front().ns);
  if (origin == std::numeric_limits<std::int64_t>::max()) origin = 0;
  out << R"({"displayTimeUnit":"ns","otherData":{"writer":"weft","overwrite":"oldest"},"traceEvents":[)";
  JsonEvents json(out);
  for (const PoolTrace& p : pools) {
    json.begin("M", "process_name", p.pool, 0) << R"(,"args":{"name":"weft pool )" << p.pool << " ("
                                               << p.workers.size() << R"x( workers)","capacity":)x" << p.capacity
                                               << "}}";
    for (const WorkerTrace& w : p.workers) write_worker(json, p.pool, w, origin);
  }
  out << "\n]}\n";
}

void write_chrome_trace(const std::string& path, const std::vector<PoolTrace>& pools) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::system_error(errno, std::generic_category(), "weft: cannot write the trace " + path);
  write_chrome_trace(out, pools);
  out.flush();
  if (!out) throw std::system_error(errno, std::generic_category(), "weft: cannot write the trace " + path);
}

PoolTrace ThreadPool::trace() const { return core_->trace(); }

namespace detail {

PoolTrace PoolCore::trace() const {
  PoolTrace t;
  t.pool = id_;
  if (!workers_.front()->trace) return t;
  t.capacity = workers_.front()->trace->capacity();
  t.workers.reserve(workers_.size());
  for (const auto& w : workers_) {
    WorkerTrace& wt = t.workers.emplace_back();
    wt.index = w->index;
    wt.events = w->trace->snapshot(wt.dropped);
  }
  return t;
}

namespace {

// WEFT_TRACE's pools: the live ones, and the traces the destroyed ones
// left. Built by the first traced pool's constructor, so destroyed (and
// written) after every pool that outlives main(), and the leaked ones are
// read as they are.
struct EnvTrace {
  std::mutex mutex;
  std::vector<const PoolCore*> live;
  std::vector<PoolTrace> done;

  EnvTrace() = default;
  EnvTrace(const EnvTrace&) = delete;
  EnvTrace& operator=(const EnvTrace&) = delete;
  ~EnvTrace() {
    const std::string path = trace_path_from_env();
    try {
      std::vector<PoolTrace> all;
      {
        std::lock_guard lock(mutex);
        all = std::move(done);
        for (const PoolCore* p : live) all.push_back(p->trace());
      }
      std::sort(all.begin(), all.end(), [](const PoolTrace& a, const PoolTrace& b) { return a.pool < b.pool; });
      // Renamed into place: a process this one started, with WEFT_TRACE
      // inherited, may be writing the same path.
      const std::string tmp = path + ".weft-tmp." + std::to_string(::getpid());
      write_chrome_trace(tmp, all);
      if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        std::remove(tmp.c_str());
        throw std::system_error(err, std::generic_category(), "weft: cannot write the trace " + path);
      }
    } catch (...) {
      report_error("WEFT_TRACE", std::current_exception());
    }
  }
};

EnvTrace& env_trace() {
  static EnvTrace t;
  return t;
}

}  // namespace

const char* trace_path_from_env() noexcept {
  static const char* const path = [] {
    const char* p = std::getenv("WEFT_TRACE");
    return p != nullptr && *p != '\0' ? p : nullptr;
  }();
  return path;
}

bool trace_env_attach(const PoolCore& pool) noexcept {
  try {
    EnvTrace& t = env_trace();
    std::lock_guard lock(t.mutex);
    t.live.push_back(&pool);
    return true;
  } catch (...) {
    report_error("WEFT_TRACE: a pool left out of the trace", std::current_exception());
    return false;
  }
}

void trace_env_detach(const PoolCore& pool) noexcept {
  EnvTrace& t = env_trace();
  std::lock_guard lock(t.mutex);
  t.live.erase(std::find(t.live.begin(), t.live.end(), &pool));
  try {
    t.done.push_back(pool.trace());
  } catch (...) {
    report_error("WEFT_TRACE: a pool left out of the trace", std::current_exception());
  }
}

}  // namespace detail
}  // namespace weft
