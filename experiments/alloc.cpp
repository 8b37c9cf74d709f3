#include "weft/xp/alloc.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <list>
#include <map>
#include <memory_resource>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "weft/detail/cache_line.hpp"
#include "weft/harness/process.hpp"
#include "weft/harness/run.hpp"
#include "weft/mem/pool_allocator.hpp"
#include "weft/mem/pool_resource.hpp"
#include "weft/sync/cpu_relax.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"


#if defined(__SANITIZE_ADDRESS__)
#define WEFT_XP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_XP_ASAN 1
#endif
#endif

namespace weft::xp {

const std::vector<std::string>& alloc_variants() {
  static const std::vector<std::string> names{"glibc", "weft", "pmr-unsync", "pmr-sync", "mimalloc", "jemalloc"};
  return names;
}

std::vector<int> default_alloc_threads() {
  std::vector<int> t{1, 2, 4, available_parallelism()};
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

namespace {

constexpr std::size_t kPcObjectSize = 64;
bool preloaded_variant(const std::string& v) { return v == "mimalloc" || v == "jemalloc"; }

// ---- child side -------------------------------------------------------------

// A /proc/self/status field in MiB (VmHWM: the peak RSS of this address
// space; unlike getrusage's ru_maxrss it does not carry over the RSS of the
// process image that exec replaced, i.e. the parent's).
double proc_status_mib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(field);
  while (std::getline(f, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return std::strtod(line.c_str() + n + 1, nullptr) / 1024.0;  // the kernel reports kB
    }
  }
  return 0;
}

// Runs body(i) on n threads released together; returns wall seconds from the
// release to the last join and adds the bodies' checksums to `sum`.
template <class Body>
double timed_threads(int n, Body&& body, std::uint64_t& sum) {
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(n), 0);
  harness::StartGate gate(n);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      gate.arrive_and_wait();
      sums[static_cast<std::size_t>(i)] = body(i);
    });
  }
  const std::int64_t t0 = wall_ns();
  gate.open_when_ready();
  for (auto& t : threads) t.join();
  const std::int64_t t1 = wall_ns();
  for (auto s : sums) sum += s;
  return static_cast<double>(t1 - t0) / 1e9;
}

// The article's loop: rounds of push_back `size` ints, then pop_front all.
template <class List>
std::uint64_t list_rounds(List& l, int rounds, int size) {
  std::uint64_t sum = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < size; ++i) l.push_back(i);
    while (!l.empty()) {
      sum += static_cast<unsigned>(l.front());
      l.pop_front();
    }
  }
  return sum;
}

double run_list(const std::string& variant, int threads, int rounds, int size, std::uint64_t& sum) {
  if (variant == "weft") {
    PoolResource pool;  // one resource; each thread gets its own free lists inside it
    return timed_threads(
        threads,
        [&](int) {
          std::list<int, PoolAllocator<int>> l{&pool};
          return list_rounds(l, rounds, size);
        },
        sum);
  }
  if (variant == "pmr-unsync") {
    return timed_threads(
        threads,
        [&](int) {
          std::pmr::unsynchronized_pool_resource res;  // one per thread: it has no lock
          std::pmr::list<int> l{&res};
          return list_rounds(l, rounds, size);
        },
        sum);
  }
  if (variant == "pmr-sync") {
    std::pmr::synchronized_pool_resource res;  // shared by every thread
    return timed_threads(
        threads,
        [&](int) {
          std::pmr::list<int> l{&res};
          return list_rounds(l, rounds, size);
        },
        sum);
  }
  // glibc, mimalloc, jemalloc: std::allocator -> operator new -> malloc,
  // which the LD_PRELOADed library (if any) has replaced.
  return timed_threads(
      threads,
      [&](int) {
        std::list<int> l;
        return list_rounds(l, rounds, size);
      },
      sum);
}

// The producer/consumer queue, the same for every allocator: a bounded
// single-producer/single-consumer ring of pointers. Each side caches the
// other's index and reloads it only when the ring looks full (empty); a
// blocked side spins briefly, then yields its CPU.
class SpscRing {
 public:
  void push(void* p) noexcept {
    const std::size_t t = tail_.load(std::memory_order_relaxed);  // relaxed: only the producer writes tail_
    for (int spins = 0; t - head_cache_ == kSlots; ++spins) {
      // acquire: the consumer has finished reading the slot it released.
      head_cache_ = head_.load(std::memory_order_acquire);
      backoff(spins);
    }
    slots_[t & kMask] = p;
    tail_.store(t + 1, std::memory_order_release);  // release: publishes the slot and the object
  }
  void* pop() noexcept {
    const std::size_t h = head_.load(std::memory_order_relaxed);  // relaxed: only the consumer writes head_
    for (int spins = 0; h == tail_cache_; ++spins) {
      tail_cache_ = tail_.load(std::memory_order_acquire);  // acquire: pairs with push's release
      backoff(spins);
    }
    void* p = slots_[h & kMask];
    head_.store(h + 1, std::memory_order_release);  // release: the slot may be reused
    return p;
  }

 private:
  static constexpr std::size_t kSlots = 1024;
  static constexpr std::size_t kMask = kSlots - 1;
  static void backoff(int spins) noexcept {
    if (spins < 64) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }

  alignas(detail::kCacheLine) std::atomic<std::size_t> head_{0};
  std::size_t tail_cache_ = 0;  // the consumer's copy of tail_
  alignas(detail::kCacheLine) std::atomic<std::size_t> tail_{0};
  std::size_t head_cache_ = 0;  // the producer's copy of head_
  alignas(detail::kCacheLine) std::array<void*, kSlots> slots_{};
};

template <class Alloc, class Free>
double producer_consumer(std::int64_t objects, Alloc&& alloc, Free&& release, std::uint64_t& sum) {
  auto ring = std::make_unique<SpscRing>();
  return timed_threads(
      2,
      [&](int i) -> std::uint64_t {
        if (i == 0) {
          for (std::int64_t k = 0; k < objects; ++k) {
            void* p = alloc();
            std::memset(p, static_cast<int>(k & 0xff), kPcObjectSize);  // the object's "construction"
            ring->push(p);
          }
          return 0;
        }
        std::uint64_t s = 0;
        for (std::int64_t k = 0; k < objects; ++k) {
          void* p = ring->pop();
          s += *static_cast<const unsigned char*>(p);
          release(p);
        }
        return s;
      },
      sum);
}

double run_pc(const std::string& variant, std::int64_t objects, std::uint64_t& sum) {
  if (variant == "weft") {
    PoolResource pool;
    return producer_consumer(
        objects, [&] { return pool.allocate_fast(kPcObjectSize); },
        [&](void* p) { pool.deallocate_fast(p, kPcObjectSize); }, sum);
  }
  if (variant == "pmr-sync") {
    std::pmr::synchronized_pool_resource res;
    return producer_consumer(
        objects, [&] { return res.allocate(kPcObjectSize); }, [&](void* p) { res.deallocate(p, kPcObjectSize); },
        sum);
  }
  if (variant == "pmr-unsync") {
    throw std::invalid_argument("pmr-unsync cannot be freed from another thread");
  }
  return producer_consumer(
      objects,
      [] {
        void* p = std::malloc(kPcObjectSize);
        if (p == nullptr) throw std::bad_alloc();
        return p;
      },
      [](void* p) { std::free(p); }, sum);
}

// The preloaded library must really be the one serving malloc.
void check_preloaded(const std::string& variant) {
  const char* symbol = variant == "mimalloc" ? "mi_malloc" : variant == "jemalloc" ? "mallctl" : nullptr;
  if (symbol != nullptr && dlsym(RTLD_DEFAULT, symbol) == nullptr) {
    throw std::runtime_error(variant + " is not loaded in this process (LD_PRELOAD failed?)");
  }
}

// ---- parent side ------------------------------------------------------------

struct ChildOutcome {
  nlohmann::json result;  // null on failure
  std::string error;
};

std::string trim_output(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > 300) s = "..." + s.substr(s.size() - 300);
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// Runs `argv` with LD_PRELOAD = `preload` (none when empty) and stdout and
// stderr on one stream; the result is the last output line that is a JSON
// object (a preloaded allocator may print warnings before it).
ChildOutcome spawn_child(const std::vector<std::string>& argv, const std::string& preload) {
  ChildOutcome out;
  harness::SpawnOptions options;
  options.preload = preload;
  options.merge_stderr = true;
  harness::ChildResult c;
  try {
    c = harness::spawn(argv, options);
  } catch (const std::system_error& e) {
    out.error = e.what();
    return out;
  }
  const std::string& text = c.out;
  if (!c.ok()) {
    out.error = "child " + c.describe();
    const std::string tail = trim_output(text);
    if (!tail.empty()) out.error += ": " + tail;
    return out;
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.front() == '{') {
      try {
        out.result = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
      }
    }
  }
  if (out.result.is_null()) out.error = "child printed no result: " + trim_output(text);
  return out;
}

struct Job {
  std::string variant;
  int threads = 0;  // 0: the producer/consumer run
  std::string preload;
  std::vector<double> seconds, rss;
  std::string error;
};

}  // namespace

std::string find_preload_library(const std::string& variant) {
  std::vector<std::string> names;
  if (variant == "mimalloc") names = {"libmimalloc.so.2", "libmimalloc.so"};
  if (variant == "jemalloc") names = {"libjemalloc.so.2", "libjemalloc.so"};
#if defined(__x86_64__)
  const std::string triple = "x86_64-linux-gnu";
#elif defined(__aarch64__)
  const std::string triple = "aarch64-linux-gnu";
#elif defined(__i386__)
  const std::string triple = "i386-linux-gnu";
#else
  const std::string triple;
#endif
  std::vector<std::string> dirs;
  if (!triple.empty()) dirs = {"/usr/lib/" + triple, "/lib/" + triple, "/usr/local/lib/" + triple};
  for (const char* d : {"/usr/local/lib", "/usr/lib64", "/lib64", "/usr/lib", "/lib"}) dirs.emplace_back(d);
  for (const auto& d : dirs) {
    for (const auto& n : names) {
      const std::string path = d + "/" + n;
      std::error_code ec;
      if (std::filesystem::is_regular_file(path, ec)) return path;
    }
  }
  return {};
}

std::string run_alloc_child(const std::string& spec) {
  std::istringstream in(spec);
  std::string mode, variant;
  in >> mode >> variant;
  const auto& names = alloc_variants();
  if (std::find(names.begin(), names.end(), variant) == names.end())
    throw std::invalid_argument("alloc child: unknown variant in '" + spec + "'");
  check_preloaded(variant);
  nlohmann::json j;
  j["rss_before_mib"] = proc_status_mib("VmRSS");
  std::uint64_t sum = 0;
  if (mode == "list") {
    int threads = 0, rounds = 0, size = 0;
    if (!(in >> threads >> rounds >> size) || threads < 1 || rounds < 1 || size < 1)
      throw std::invalid_argument("alloc child: bad list spec '" + spec + "'");
    j["seconds"] = run_list(variant, threads, rounds, size, sum);
  } else if (mode == "pc") {
    std::int64_t objects = 0;
    if (!(in >> objects) || objects < 1) throw std::invalid_argument("alloc child: bad pc spec '" + spec + "'");
    j["seconds"] = run_pc(variant, objects, sum);
  } else {
    throw std::invalid_argument("alloc child: unknown mode in '" + spec + "'");
  }
  j["peak_rss_mib"] = proc_status_mib("VmHWM");
  j["checksum"] = sum;  // keeps the loops observable
  return j.dump();
}

Result run_alloc(const AllocParams& p) {
  if (p.child_command.empty()) throw std::invalid_argument("run_alloc: child_command is empty");
  Result r;
  r.experiment = "alloc";
  // Ascending, whatever order they were given in: the rows and the
  // oversubscription note read the largest last.
  std::vector<int> threads = p.threads.empty() ? default_alloc_threads() : p.threads;
  std::sort(threads.begin(), threads.end());
  r.params = {{"threads", threads},
              {"pc_object_bytes", kPcObjectSize},
              {"variants", p.variants},
              {"pc_queue", "bounded SPSC ring, 1024 slots, spin then yield"}};

  // Why a variant cannot run here ("" when it can).
  std::map<std::string, std::string> why_not;
  std::map<std::string, std::string> preload;
  for (const auto& v : p.variants) {
    if (!preloaded_variant(v)) continue;
#ifdef WEFT_XP_ASAN
    why_not[v] = "not measured: LD_PRELOAD allocators cannot run under AddressSanitizer";
#else
    preload[v] = find_preload_library(v);
    if (preload[v].empty())
      why_not[v] = v == "mimalloc" ? "not built: libmimalloc-dev missing" : "not available: libjemalloc2 missing";
#endif
  }
  r.extra["preload"] = preload;

  // Jobs in interleaving order: per thread count, every variant; then the
  // producer/consumer runs.
  std::vector<Job> jobs;
  for (int n : threads)
    for (const auto& v : p.variants)
      if (why_not[v].empty()) jobs.push_back(Job{v, n, preload[v], {}, {}, {}});
  for (const auto& v : p.variants)
    if (why_not[v].empty() && v != "pmr-unsync") jobs.push_back(Job{v, 0, preload[v], {}, {}, {}});

  double baseline_mib = 0;
  const harness::PlanOptions plan{p.reps, true};
  r.params["warmup"] = harness::warmup_text(plan);
  harness::interleave(plan, static_cast<int>(jobs.size()), [&](int k, bool recorded) {
    Job& job = jobs[static_cast<std::size_t>(k)];
    if (!job.error.empty()) return;  // it failed once; it would fail again
    const std::string spec = job.threads > 0 ? "list " + job.variant + " " + std::to_string(job.threads) + " " +
                                                   std::to_string(p.rounds) + " " + std::to_string(p.size)
                                             : "pc " + job.variant + " " + std::to_string(p.pc_objects);
    std::vector<std::string> argv = p.child_command;
    argv.push_back(spec);
    const ChildOutcome o = spawn_child(argv, job.preload);
    if (!o.error.empty()) {
      job.error = "failed: " + o.error;
      return;
    }
    if (!recorded) return;
    job.seconds.push_back(o.result.at("seconds").get<double>());
    job.rss.push_back(o.result.at("peak_rss_mib").get<double>());
    const double before = o.result.value("rss_before_mib", 0.0);
    if (baseline_mib == 0 || before < baseline_mib) baseline_mib = before;
  });

  auto find_job = [&](const std::string& v, int n) -> const Job* {
    for (const auto& j : jobs)
      if (j.variant == v && j.threads == n) return &j;
    return nullptr;
  };
  auto reason = [&](const std::string& v, int n) -> std::string {
    if (!why_not[v].empty()) return why_not[v];
    const Job* j = find_job(v, n);
    if (j == nullptr) return "not measured";
    return j->error;
  };

  for (int n : threads)
    for (const auto& v : p.variants) {
      const Job* j = find_job(v, n);
      r.rows.push_back(make_row(v, n, "seconds", "s", j ? j->seconds : std::vector<double>{}, reason(v, n)));
    }
  // t(N)/t(1)/N per repetition: t(1) and t(N) of the same round.
  const bool has_one = std::find(threads.begin(), threads.end(), 1) != threads.end();
  for (int n : threads) {
    if (n == 1) continue;
    for (const auto& v : p.variants) {
      std::string why = reason(v, n);
      if (why.empty() && !has_one) why = "not measured: needs a 1-thread run (add 1 to --threads)";
      if (why.empty()) why = reason(v, 1);
      std::vector<double> s;
      if (why.empty()) {
        const Job* jn = find_job(v, n);
        const Job* j1 = find_job(v, 1);
        const std::size_t reps = std::min(jn->seconds.size(), j1->seconds.size());
        for (std::size_t i = 0; i < reps; ++i) s.push_back(jn->seconds[i] / j1->seconds[i] / n);
      }
      r.rows.push_back(make_row(v, n, "scalability", "ratio", s, why));
    }
  }
  for (int n : threads)
    for (const auto& v : p.variants) {
      const Job* j = find_job(v, n);
      r.rows.push_back(make_row(v, n, "peak_rss_mib", "MiB", j ? j->rss : std::vector<double>{}, reason(v, n)));
    }
  for (const auto& v : p.variants) {
    std::string why = v == "pmr-unsync"
                          ? "not applicable: unsynchronized_pool_resource cannot be freed from another thread"
                          : reason(v, 0);
    const Job* j = find_job(v, 0);
    std::vector<double> ms;
    if (j != nullptr)
      for (double s : j->seconds) ms.push_back(s * 1e3);
    r.rows.push_back(make_row(v, 2, "pc_ms", "ms", ms, why));
    r.rows.push_back(make_row(v, 2, "pc_peak_rss_mib", "MiB", j ? j->rss : std::vector<double>{}, why));
  }

  // Ratios from this run's medians.
  const auto key = [](const char* v, int n, const char* metric) { return Key(v, metric, n); };
  nlohmann::json ratios = nlohmann::json::array();
  for (int n : threads) {
    const auto over = [&](const char* v) { return ratio(r, key(v, n, "seconds"), key("weft", n, "seconds")); };
    const std::string at = n == 1 ? " at 1 thread" : " at " + std::to_string(n) + " threads";
    add_ratio(ratios, "weft speed-up over glibc" + at, over("glibc"), n <= 2 ? ">= 4" : "");
    add_ratio(ratios, "weft speed-up over mimalloc" + at, over("mimalloc"), n <= 2 ? ">= 2" : "");
    add_ratio(ratios, "weft speed-up over jemalloc" + at, over("jemalloc"), "");
    add_ratio(ratios, "weft speed-up over pmr-unsync" + at, over("pmr-unsync"), "");
  }
  add_ratio(ratios, "producer/consumer: weft time / mimalloc time",
            ratio(r, key("weft", 2, "pc_ms"), key("mimalloc", 2, "pc_ms")), "<= 1.0");
  const auto wr = median(r, key("weft", 2, "pc_peak_rss_mib"));
  const auto gr = median(r, key("glibc", 2, "pc_peak_rss_mib"));
  if (wr && gr && *wr > 0 && *gr > 0)
    ratios.push_back({{"what", "producer/consumer: weft peak RSS - glibc peak RSS (MiB)"},
                      {"value", *wr - *gr},
                      {"goal", "<= 1"}});
  r.extra["ratios"] = ratios;

  r.published = published("003_ders");
  r.notes.push_back("scalability = t(N)/t(1)/N with every thread doing the full work, per repetition; "
                    "ideal 1/N for N <= CPUs (0.5 at 2 threads on 2 CPUs), 1/CPUs beyond; above 1: slowdown");
  r.notes.push_back("every run is a fresh child process (re-executed weft, LD_PRELOAD for mimalloc/jemalloc); "
                    "peak RSS is its VmHWM, which includes the program itself (" +
                    std::to_string(static_cast<int>(baseline_mib + 0.5)) + " MiB before the workload)");
#ifdef WEFT_XP_ASAN
  r.notes.push_back("AddressSanitizer build: 'glibc' is ASan's allocator and every figure is slowed down");
#endif
  if (auto note = harness::oversubscribed_note("threads", threads.empty() ? 0 : threads.back(),
                                               "time grows with N/CPUs even for a perfect allocator");
      !note.empty())
    r.notes.push_back(std::move(note));
  return r;
}

// The registration: `weft alloc`, its sizes in the report, its figures.
namespace {

// The list benchmark again, variant by thread count, with three significant
// digits (the generic table rounds sub-0.1 s times to two decimals).
void print_list_summary(const Result& r) {
  const auto threads = r.params.value("threads", std::vector<int>{});
  const auto variants = r.params.value("variants", std::vector<std::string>{});
  if (threads.empty() || variants.empty()) return;
  fmt::print("\nList benchmark, median ms per run [t(N)/t(1)/N]:\n{:<11}", "variant");
  for (int n : threads) fmt::print(" {:>16}", fmt::format("{} thread{}", n, n == 1 ? "" : "s"));
  fmt::print("\n");
  for (const auto& v : variants) {
    fmt::print("{:<11}", v);
    for (int n : threads) {
      const auto s = median(r, Key(v, "seconds", n));
      const auto k = median(r, Key(v, "scalability", n));
      const double ms = s.value_or(0) * 1e3;
      std::string cell = !s ? "-" : ms >= 100 ? fmt::format("{:.0f}", ms) : fmt::format("{:.3g}", ms);
      if (k) cell += fmt::format(" [{:.2f}]", *k);
      fmt::print(" {:>16}", cell);
    }
    fmt::print("\n");
  }
}

void print_published(const Result& r) {
  print_list_summary(r);
  print_ratios(r, "Ratios from this run (medians):", 58);
  if (!print_article(r, "source", "method_alloc")) return;
  const auto& pub = r.published;
  fmt::print("  std::allocator time / ders time, per machine:\n");
  for (auto it = pub["alloc_speedup_std_over_ders"].begin(); it != pub["alloc_speedup_std_over_ders"].end(); ++it)
    fmt::print("    {:<24} {}\n", it.key(), it.value().get<std::string>());
  fmt::print("  scalability t(N)/t(1)/N:\n");
  for (auto it = pub["scalability"].begin(); it != pub["scalability"].end(); ++it)
    fmt::print("    {:<24} {}\n", it.key(), it.value().get<std::string>());
}

// Every thread holds `size` list nodes (~32 bytes each) at its peak.
void check_memory(const AllocParams& p) {
  const std::vector<int> t = p.threads.empty() ? default_alloc_threads() : p.threads;
  const int most = *std::max_element(t.begin(), t.end());
  constexpr long long kMaxNodes = 100'000'000;
  if (static_cast<long long>(p.size) * most > kMaxNodes)
    throw BadParam(fmt::format("--size {} x {} threads is more than {} live list nodes (memory)", p.size, most,
                               kMaxNodes));
}

// One measurement, in the child process the parent re-executed.
void run_child(const std::string& spec) {
  try {
    std::cout << run_alloc_child(spec) << std::endl;
  } catch (const std::invalid_argument& e) {
    throw BadParam(e.what());
  }
}

const Register<AllocParams> reg{{
    .name = "alloc", .page = 50, .article = "003_ders", .seconds = {5, 10, 30},
    .title = "Allocators under threads",
    .summary = "Allocators under threads: the article's list benchmark (Derevyago, the ders library)",
    .options = {integer("--rounds", &AllocParams::rounds, "Rounds per thread", 1, 1'000'000),
                integer("--size", &AllocParams::size, "Ints pushed and popped per round", 1, 10'000'000),
                integer("--pc-objects", &AllocParams::pc_objects, "Objects through the producer/consumer queue", 1,
                        1'000'000'000),
                counts("--threads,-t", &AllocParams::threads, "Thread counts", "1,2,4 and available_parallelism"), reps(&AllocParams::reps)},
    .sizes = {[](AllocParams& p) {
                p.rounds = 100;
                p.threads = {1, 2};
                p.reps = 2;
                p.pc_objects = 50'000;  // pmr-sync's hand-off: tens of µs an object on 2 CPUs
              },
              [](AllocParams& p) {
                p.rounds = 300;
                p.threads = {1, 2};
                p.reps = 3;
                p.pc_objects = 500'000;
              },
              [](AllocParams& p) {
                p.rounds = 1000;
                p.threads = {1, 2};
                p.reps = 3;
                p.pc_objects = 1'000'000;
              }},
    .check = check_memory,
    .run = run_alloc,
    .heading = "List benchmark (seconds, scalability t(N)/t(1)/N, peak RSS) and producer/consumer",
    .print = print_published,
    .child = run_child,
    // Each measurement in a child process: this program, re-executed.
    .prepare = [](AllocParams& p) { p.child_command = {"/proc/self/exe", "alloc", "--internal-child"}; },
    .figures = {"alloc_seconds", "alloc_scalability"}, .headlines = {"seconds", "pc_ms"},
}};

}  // namespace

}  // namespace weft::xp
